//! Comparison groups in the history: a comparison's plan is stored as a group before
//! anything runs, each repetition as an ordinary run of its kind in that group, and the
//! summary when the plan completes. Here: creating a group, reading one back as the
//! repetitions the statistics take, and building a comparison document from stored
//! runs (a group, or stream runs picked by id). Running one is in [`run`].
use std::collections::BTreeSet;

use anyhow::{anyhow, Context};
use mtuperf_engine::compare::{self, Cell, PathSpec, Plan, Repeat, Repetition, TestKind};
use mtuperf_report::compare::{self as rc, CompareDoc, Rep};
use mtuperf_report::record::RunKind;
use mtuperf_report::stream::Document;
use mtuperf_store::{Filter, Store};

use crate::exit::{self, Failure};

mod run;

pub use run::execute;

/// Stores the plan as a new comparison group (before anything runs).
pub fn start_group(store: Option<&Store>, plan: &Plan) -> Result<Option<i64>, Failure> {
    let Some(s) = store else { return Ok(None) };
    s.create_group(
        RunKind::Compare.name(),
        &serde_json::to_string(plan).unwrap_or_default(),
    )
    .context("storing the comparison plan")
    .map(Some)
    .map_err(|e| Failure::new(exit::FAILED, e))
}

/// A stored group's plan and its usable repetitions (rounds numbered per path and block).
pub fn load_group(store: &Store, id: i64) -> anyhow::Result<(Plan, Vec<Rep>, Option<String>)> {
    let g = store
        .group(id)?
        .ok_or_else(|| anyhow!("no comparison group {id} in {}", store.path().display()))?;
    if g.kind.parse() != Ok(RunKind::Compare) {
        return Err(anyhow!(
            "group {id} is a {} group, not a comparison",
            g.kind
        ));
    }
    let plan: Plan = serde_json::from_str(&g.plan_json)
        .with_context(|| format!("group {id}: unreadable plan"))?;
    let mut reps: Vec<Rep> = Vec::new();
    for r in store.group_runs(id)? {
        let Some(path) = r.label.clone() else {
            continue;
        };
        let (cell, stream, rr) = if r.kind.parse() == Ok(RunKind::Rr) {
            let Some(step) = serde_json::from_str::<mtuperf_report::rr::Document>(&r.document)
                .ok()
                .and_then(|d| d.steps.into_iter().next())
            else {
                continue;
            };
            let q = &step.result.request;
            let cell = Cell {
                test: TestKind::Rr,
                block: q.block,
                clients: q.clients,
            };
            (cell, None, Some(step.result))
        } else {
            let Some(run) = serde_json::from_str::<Document>(&r.document)
                .ok()
                .and_then(|d| d.runs.into_iter().next())
            else {
                continue;
            };
            let cell = Cell {
                test: TestKind::Stream,
                block: run.result.request.block,
                clients: 1,
            };
            (cell, Some(run.result), None)
        };
        let round = reps
            .iter()
            .filter(|x| x.rep.path == path && x.rep.cell == cell && !x.rep.interrupted())
            .count() as u32;
        reps.push(Rep {
            run_id: Some(r.id),
            rep: Repetition {
                path,
                cell,
                round,
                stream,
                rr,
            },
        });
    }
    Ok((plan, reps, g.summary_json))
}

/// A comparison's document: its stored summary, else rebuilt from its plan and runs.
pub fn compare_doc(store: &Store, id: i64) -> anyhow::Result<CompareDoc> {
    let (plan, reps, summary) = load_group(store, id)?;
    // Rebuilt from the stored runs (so new figures and charts apply to old groups); the
    // checks and refusal come from the stored summary of a finished comparison.
    Ok(
        match summary.and_then(|s| serde_json::from_str::<CompareDoc>(&s).ok()) {
            Some(old) => rc::build(
                &plan,
                &old.checks,
                &reps,
                Some(id),
                old.refused,
                old.interrupted,
            ),
            None => rc::build(&plan, &[], &reps, Some(id), None, true),
        },
    )
}

/// Stream runs picked by id: one "path" per label (or per run without one).
pub fn adhoc_doc(store: &Store, ids: &[i64]) -> anyhow::Result<CompareDoc> {
    let runs = store.list(&Filter {
        ids: ids.to_vec(),
        ..Filter::default()
    })?;
    if let Some(missing) = ids.iter().find(|i| !runs.iter().any(|r| r.id == **i)) {
        return Err(anyhow!(
            "no run with id {missing} in {}",
            store.path().display()
        ));
    }
    let mut reps: Vec<Rep> = Vec::new();
    let mut paths: Vec<PathSpec> = Vec::new();
    let mut blocks = BTreeSet::new();
    let mut runs = runs;
    runs.sort_by_key(|r| r.id);
    for r in runs {
        if r.kind.parse() != Ok(RunKind::Stream) {
            return Err(anyhow!(
                "run {} is a {} run; reports cover stream runs and comparisons",
                r.id,
                r.kind
            ));
        }
        let doc: Document =
            serde_json::from_str(&r.document).with_context(|| format!("run {}", r.id))?;
        let name = r.label.clone().unwrap_or_else(|| format!("run{}", r.id));
        if !paths.iter().any(|p| p.name == name) {
            paths.push(PathSpec {
                name: name.clone(),
                target: r.target.clone(),
                bind: None,
            });
        }
        for run in doc.runs {
            let block = run.result.request.block;
            blocks.insert(block);
            let round = reps
                .iter()
                .filter(|x| x.rep.path == name && x.rep.cell.block == block)
                .count() as u32;
            let cell = Cell {
                test: TestKind::Stream,
                block,
                clients: 1,
            };
            reps.push(Rep {
                run_id: Some(r.id),
                rep: Repetition {
                    path: name.clone(),
                    cell,
                    round,
                    stream: Some(run.result),
                    rr: None,
                },
            });
        }
    }
    let plan = Plan {
        version: compare::PLAN_VERSION,
        paths,
        tests: vec![TestKind::Stream],
        blocks: blocks.into_iter().collect(),
        clients: vec![1],
        time_ms: 0,
        repeat: Repeat::Fixed { n: 1 },
        force: false,
        sysctls: compare::local_sysctls(),
    };
    Ok(rc::build(&plan, &[], &reps, None, None, false))
}
