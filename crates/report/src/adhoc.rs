//! A report over stored runs picked by id (not a comparison group): stream runs and rr
//! runs (a single step or a `--clients` sweep) become the repetitions of a comparison
//! document, one "path" per label (or per run without one), so the same summary table
//! and charts apply.

use std::collections::BTreeSet;

use mtuperf_engine::compare::{self, Cell, PathSpec, Plan, Repeat, Repetition, TestKind};

use crate::compare::{build, CompareDoc, Rep};

/// One stored run as the report needs it.
pub struct StoredRun<'a> {
    pub id: i64,
    pub kind: &'a str,
    pub label: Option<&'a str>,
    pub target: &'a str,
    pub document: &'a str,
}

/// The comparison document of `runs` (stream and rr runs, in any mix), or why not.
pub fn doc(runs: &[StoredRun<'_>]) -> Result<CompareDoc, String> {
    let mut reps: Vec<Rep> = Vec::new();
    let mut paths: Vec<PathSpec> = Vec::new();
    let mut blocks = BTreeSet::new();
    let mut clients = BTreeSet::new();
    let mut tests = BTreeSet::new();
    for r in runs {
        // rr sweep steps carry "clients=N" as their label: that names the step, not the
        // path, so unlabelled rr runs are named by their target (one line per target).
        let label = r
            .label
            .filter(|l| !(r.kind == "rr" && l.starts_with("clients=")));
        let name = match (label, r.kind) {
            (Some(l), _) => l.to_string(),
            (None, "rr") => r.target.to_string(),
            (None, _) => format!("run{}", r.id),
        };
        if !paths.iter().any(|p| p.name == name) {
            paths.push(PathSpec {
                name: name.clone(),
                target: r.target.to_string(),
                bind: None,
            });
        }
        let mut push = |cell: Cell, stream, rr| {
            let round = reps
                .iter()
                .filter(|x| x.rep.path == name && x.rep.cell == cell)
                .count() as u32;
            blocks.insert(cell.block);
            clients.insert(cell.clients);
            tests.insert(cell.test.name());
            reps.push(Rep {
                run_id: Some(r.id),
                rep: Repetition {
                    path: name.clone(),
                    cell,
                    round,
                    stream,
                    rr,
                    udp: None,
                },
            });
        };
        match r.kind {
            "stream" => {
                let doc: crate::stream::Document =
                    serde_json::from_str(r.document).map_err(|e| format!("run {}: {e}", r.id))?;
                for run in doc.runs {
                    let cell = Cell {
                        test: TestKind::Stream,
                        block: run.result.request.block,
                        clients: 1,
                    };
                    push(cell, Some(run.result), None);
                }
            }
            "rr" => {
                let doc: crate::rr::Document =
                    serde_json::from_str(r.document).map_err(|e| format!("run {}: {e}", r.id))?;
                for step in doc.steps {
                    let cell = Cell {
                        test: TestKind::Rr,
                        block: step.result.request.block,
                        clients: step.result.request.clients,
                    };
                    push(cell, None, Some(step.result));
                }
            }
            other => {
                return Err(format!(
                    "run {} is a {other} run; a report covers stream and rr runs together, \
                     a path run alone, or a comparison (--compare ID)",
                    r.id
                ))
            }
        }
    }
    let tests: Vec<TestKind> = [TestKind::Stream, TestKind::Rr]
        .into_iter()
        .filter(|t| tests.contains(t.name()))
        .collect();
    let plan = Plan {
        version: compare::PLAN_VERSION,
        paths,
        tests,
        blocks: blocks.into_iter().collect(),
        clients: clients.into_iter().collect(),
        time_ms: 0,
        repeat: Repeat::Fixed { n: 1 },
        force: false,
        sysctls: compare::local_sysctls(),
        placement: mtuperf_engine::placement::PlacementPolicy::Free,
    };
    Ok(build(&plan, &[], &reps, None, None, false))
}
