//! Running a comparison: the engine's plan walk with an observer that stores each
//! repetition as it finishes and shows progress on a terminal.
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};
use mtuperf_engine::client::ConnectOptions;
use mtuperf_engine::compare::{
    self, Cell, CompareObserver, Outcome, PathCheck, PathSpec, Plan, Repetition,
};
use mtuperf_engine::EngineError;
use mtuperf_report::compare::{self as rc, CompareDoc, Rep};
use mtuperf_report::record::{RunKind, RunRecord};
use mtuperf_report::stream::RunDoc;
use mtuperf_store::Store;

use crate::connect;
use crate::exit::Failure;
use crate::history;

struct Observer<'a> {
    store: Option<&'a Store>,
    group: Option<i64>,
    bar: ProgressBar,
    reps: Vec<Rep>,
}

impl CompareObserver for Observer<'_> {
    fn checked(&mut self, c: &PathCheck) {
        self.bar.println(format!(
            "  check {}: {}",
            c.name,
            mtuperf_report::compare::check_reason(c)
        ));
    }
    fn starting(&mut self, p: &PathSpec, cell: Cell, round: u32, done: u32, planned: u32) {
        self.bar.set_length(u64::from(planned));
        self.bar.set_position(u64::from(done));
        self.bar.set_message(format!(
            "{} {} {} #{}",
            p.name,
            cell.test.name(),
            rc::block_label(cell.block),
            round + 1
        ));
    }
    fn finished(&mut self, rep: &Repetition) -> Result<(), EngineError> {
        let id = self.store_rep(rep)?;
        self.bar.inc(1);
        self.reps.push(Rep {
            run_id: id,
            rep: rep.clone(),
        });
        Ok(())
    }
}

impl Observer<'_> {
    /// Stores one repetition as an ordinary run of its kind, in the group, labelled
    /// with the path name.
    fn store_rep(&self, rep: &Repetition) -> Result<Option<i64>, EngineError> {
        let (rec, target): (Box<dyn RunRecord>, String) = if let Some(res) = rep.rr.clone() {
            let target = res.target.clone();
            (Box::new(mtuperf_report::rr::StepDoc::new(res)), target)
        } else if let Some(res) = rep.stream.clone() {
            let target = res.target.clone();
            (Box::new(RunDoc::new(res)), target)
        } else if let Some(res) = rep.udp.clone() {
            let target = res.target.clone();
            (
                Box::new(mtuperf_report::stream::udp::RunDoc::new(res)),
                target,
            )
        } else {
            return Ok(None);
        };
        let place = history::Place {
            target: &target,
            group: self.group,
            label: Some(&rep.path),
        };
        history::store_record(self.store, rec.as_ref(), place).map_err(|f| EngineError::Io {
            op: "storing the repetition".into(),
            source: std::io::Error::other(format!("{:#}", f.error)),
        })
    }
}

fn bar(quiet: bool) -> ProgressBar {
    if !crate::progress::bars(quiet) {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(1);
    b.set_style(
        ProgressStyle::with_template("  {bar:30} {pos}/{len} repetitions, ETA {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b
}

/// Runs (or continues, with `prior`) a comparison: every repetition stored in `group`
/// as it finishes, a progress bar on a terminal unless `quiet`, the summary stored when
/// the plan completes. For `demo` and `compare` alike.
pub fn execute(
    store: Option<&Store>,
    plan: &Plan,
    group: Option<i64>,
    prior: Vec<Rep>,
    opts: &ConnectOptions,
    stop: &Arc<AtomicBool>,
    quiet: bool,
) -> Result<(CompareDoc, Outcome), Failure> {
    let mut obs = Observer {
        store,
        group,
        bar: bar(quiet),
        reps: Vec::new(),
    };
    let engine_prior = prior.iter().map(|r| r.rep.clone()).collect();
    let out = compare::run(plan, opts, engine_prior, stop, &mut obs);
    obs.bar.finish_and_clear();
    let mut out = out.map_err(connect::engine_failure)?;
    if out.refused.is_some() {
        out.refused = Some(rc::refusal(&out.checks));
    }
    let mut reps: Vec<Rep> = prior.into_iter().filter(|r| !r.rep.interrupted()).collect();
    reps.extend(obs.reps);
    let doc = rc::build(
        plan,
        &out.checks,
        &reps,
        group,
        out.refused.clone(),
        out.interrupted,
    );
    if let (Some(s), Some(id)) = (store, group) {
        if !out.interrupted {
            let json = serde_json::to_string(&doc).unwrap_or_default();
            if let Err(e) = s.finish_group(id, &json) {
                crate::unsaved::keep(s.path(), RunKind::Compare, &json, &e.into());
            }
        }
    }
    Ok((doc, out))
}
