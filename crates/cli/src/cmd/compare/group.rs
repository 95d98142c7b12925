//! Comparison groups in the history: a comparison's plan is stored as a group before
//! anything runs, each repetition as an ordinary run of its kind in that group, and the
//! summary when the plan completes. Here: creating a group, reading one back as the
//! repetitions the statistics take, and building a comparison document from stored
//! runs (a group, or stream runs picked by id). Running one is in [`super::run`].
use anyhow::{anyhow, Context};
use mtuperf_engine::compare::{Cell, Plan, Repetition, TestKind};
use mtuperf_report::compare::{self as rc, CompareDoc, Rep};
use mtuperf_report::record::RunKind;
use mtuperf_report::stream::Document;
use mtuperf_store::Store;

use crate::exit::{self, Failure};

/// Stores the plan as a new comparison group (before anything runs).
pub fn start_group(store: Option<&Store>, plan: &Plan) -> Result<Option<i64>, Failure> {
    let Some(s) = store else { return Ok(None) };
    s.create_group(
        RunKind::Compare,
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
    let kind = g.kind;
    if kind != RunKind::Compare {
        return Err(anyhow!("group {id} is a {kind} group, not a comparison"));
    }
    let plan: Plan = serde_json::from_str(&g.plan_json)
        .with_context(|| format!("group {id}: unreadable plan"))?;
    let mut reps: Vec<Rep> = Vec::new();
    for r in store.group_runs(id)? {
        let Some(path) = r.label.clone() else {
            continue;
        };
        let Some((cell, stream, rr, udp)) = repetition(r.kind, &r.document) else {
            continue;
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
                udp,
            },
        });
    }
    Ok((plan, reps, g.summary_json))
}

/// One repetition's cell and its result of the cell's kind.
type Parsed = (
    Cell,
    Option<mtuperf_engine::stream::StreamResult>,
    Option<mtuperf_engine::rr::RrResult>,
    Option<mtuperf_engine::stream::udp::UdpStreamResult>,
);

/// One repetition's cell and result, from its stored document (its first run or step);
/// `None` for a document that does not read, or a kind a comparison does not run.
fn repetition(kind: RunKind, document: &str) -> Option<Parsed> {
    let cell = |test, block, clients| Cell {
        test,
        block,
        clients,
    };
    match kind {
        RunKind::Rr => {
            let doc = serde_json::from_str::<mtuperf_report::rr::Document>(document).ok()?;
            let step = doc.steps.into_iter().next()?;
            let q = &step.result.request;
            Some((
                cell(TestKind::Rr, q.block, q.clients),
                None,
                Some(step.result),
                None,
            ))
        }
        RunKind::Udp => {
            let doc =
                serde_json::from_str::<mtuperf_report::stream::udp::Document>(document).ok()?;
            let run = doc.runs.into_iter().next()?;
            let c = cell(TestKind::Udp, run.result.request.block, 1);
            Some((c, None, None, Some(run.result)))
        }
        RunKind::Stream => {
            let doc = serde_json::from_str::<Document>(document).ok()?;
            let run = doc.runs.into_iter().next()?;
            let c = cell(TestKind::Stream, run.result.request.block, 1);
            Some((c, Some(run.result), None, None))
        }
        RunKind::Path | RunKind::Doctor | RunKind::Compare | RunKind::Mesh => None,
    }
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
