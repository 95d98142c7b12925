//! A report over stored runs picked by id (not a comparison group): stream, UDP stream
//! and rr runs (a single step or a `--clients` sweep) become the repetitions of a
//! comparison document, one "path" per label (or per run without one), so the same
//! summary table and charts apply.

use std::collections::BTreeSet;

use mtuperf_engine::compare::{self, Cell, PathSpec, Plan, Repeat, Repetition, TestKind};

use crate::compare::{build, CompareDoc, Rep};
use crate::record::RunKind;

/// One stored run as the report needs it.
pub struct StoredRun<'a> {
    pub id: i64,
    pub kind: RunKind,
    pub label: Option<&'a str>,
    pub target: &'a str,
    pub document: &'a str,
}

/// The kinds of stored run a report covers, for messages: what `report` takes.
pub const REPORTABLE: &str = "stream, udp and rr runs (together), a path or a mesh run \
    (alone), a comparison (--compare ID), the watch history (--since)";

/// One repetition a stored run holds: its cell and its result.
type Parsed = (
    Cell,
    Option<mtuperf_engine::stream::StreamResult>,
    Option<mtuperf_engine::rr::RrResult>,
    Option<mtuperf_engine::stream::udp::UdpStreamResult>,
);

/// The repetitions of one stored stream, UDP stream or rr run (every step of an rr
/// sweep run); any other kind is an error naming what a report covers.
fn parse(r: &StoredRun<'_>) -> Result<Vec<Parsed>, String> {
    let bad = |e: serde_json::Error| format!("run {}: {e}", r.id);
    match r.kind {
        RunKind::Stream => {
            let doc: crate::stream::Document = serde_json::from_str(r.document).map_err(bad)?;
            Ok(doc
                .runs
                .into_iter()
                .map(|run| {
                    let cell = Cell {
                        test: TestKind::Stream,
                        block: run.result.request.block,
                        clients: 1,
                    };
                    (cell, Some(run.result), None, None)
                })
                .collect())
        }
        RunKind::Udp => {
            let doc: crate::stream::udp::Document =
                serde_json::from_str(r.document).map_err(bad)?;
            Ok(doc
                .runs
                .into_iter()
                .map(|run| {
                    let cell = Cell {
                        test: TestKind::Udp,
                        block: run.result.request.block,
                        clients: 1,
                    };
                    (cell, None, None, Some(run.result))
                })
                .collect())
        }
        RunKind::Rr => {
            let doc: crate::rr::Document = serde_json::from_str(r.document).map_err(bad)?;
            Ok(doc
                .steps
                .into_iter()
                .map(|step| {
                    let cell = Cell {
                        test: TestKind::Rr,
                        block: step.result.request.block,
                        clients: step.result.request.clients,
                    };
                    (cell, None, Some(step.result), None)
                })
                .collect())
        }
        other => Err(format!(
            "run {} is a {other} run, which has no report; a report covers {REPORTABLE}",
            r.id
        )),
    }
}

/// The comparison document of `runs` (stream, UDP stream and rr runs, in any mix), or
/// why not.
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
            .filter(|l| !(r.kind == RunKind::Rr && l.starts_with("clients=")));
        let name = match (label, r.kind) {
            (Some(l), _) => l.to_string(),
            (None, RunKind::Rr) => r.target.to_string(),
            (None, _) => format!("run{}", r.id),
        };
        if !paths.iter().any(|p| p.name == name) {
            paths.push(PathSpec {
                name: name.clone(),
                target: r.target.to_string(),
                bind: None,
            });
        }
        for (cell, stream, rr, udp) in parse(r)? {
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
                    udp,
                },
            });
        }
    }
    let tests: Vec<TestKind> = [TestKind::Stream, TestKind::Udp, TestKind::Rr]
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
