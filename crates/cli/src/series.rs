//! The one series driver every measuring command runs through (`stream`, `stream
//! --udp`, `rr`): a plan of steps (repetitions, a sweep of rates or loads), each
//! measured, printed, then stored before the next starts; then the command's
//! document, then its exit code. What differs between kinds (how a step is measured,
//! its words, its document) is the kind's [`Kind`]; the loop, the order and the exit
//! codes are here once.
//!
//! Order and failures, for every kind:
//! - a run's text is printed as it finishes, then the run is stored ("stored as run
//!   N" follows when the kind says so); a storage failure never discards it (the
//!   document is kept as a file and the failure reported after the output, exit 5);
//! - Ctrl-C or SIGTERM ends the series after the run in progress (exit 130 or 143);
//! - a run that ends early on its own is kept, and the series ends with exit 5 and
//!   the reason on stderr (`interrupt::measured_exit`);
//! - a step that fails ends the series: the runs already measured are printed (they
//!   are stored already) before the failure is reported.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::EngineError;
use mtuperf_report::record::RunRecord;
use mtuperf_store::Store;

use crate::connect;
use crate::exit::{CmdResult, Failure};
use crate::history;
use crate::interrupt;

/// One kind as the series driver runs it.
pub trait Kind {
    /// One point of the plan: a repetition, a rate of a sweep, a load step.
    type Step: Copy;
    /// One run's document: printed, then stored.
    type Run: RunRecord;
    /// The command's document of every run.
    type Doc: serde::Serialize;

    /// Measures one step; `session` is None when the kind reaches its agents itself
    /// (`rr --from`).
    fn measure(
        &self,
        session: Option<&Session>,
        step: Self::Step,
        stop: &Arc<AtomicBool>,
    ) -> Result<Self::Run, EngineError>;
    /// Records the run's id in the history (None: not stored).
    fn set_run_id(run: &mut Self::Run, id: Option<i64>);
    /// The label stored with a step's run.
    fn label(&self, step: Self::Step) -> Option<String>;
    /// Prints run `i` of `planned` as it finished (text output only).
    fn print_run(&self, i: usize, planned: usize, run: &Self::Run);
    /// Whether "stored as run N" follows a run's text.
    fn says_stored(&self, planned: usize) -> bool;
    /// The document of every run measured.
    fn document(&self, runs: Vec<Self::Run>) -> Self::Doc;
    /// Prints what the text output ends with (a summary of repetitions, a sweep).
    fn print_end(&self, doc: &Self::Doc);
    /// Why a run ended early (the first), in report's words, for exit 5.
    fn interrupt_reason(doc: &Self::Doc) -> Option<String>;
    /// The exit code of a series that ran whole: 0, or the kind's own (rr --verify).
    fn ok_code(&self, _doc: &Self::Doc) -> u8 {
        0
    }
    /// The history group that holds a sweep's runs: its kind and parameters.
    fn group(&self) -> Option<(mtuperf_store::RunKind, String)> {
        None
    }
    /// What the group records once the series ends.
    fn group_summary(&self, _doc: &Self::Doc) -> String {
        String::new()
    }
}

/// How the series reaches its agent.
pub enum Connect<'a> {
    /// A fresh session for every run (stream: each repetition starts clean).
    EachRun(&'a str, &'a ConnectOptions),
    /// One session for the whole series (rr: the steps of one sweep).
    Once(&'a str, &'a ConnectOptions),
    /// The kind reaches its agents itself (rr --from).
    Never,
}

/// One command's series: its plan and where its runs go.
pub struct Series<'a, K: Kind> {
    pub kind: &'a K,
    pub plan: Vec<K::Step>,
    pub connect: Connect<'a>,
    /// The target the history records (as the user gave it).
    pub target: &'a str,
    pub store: Option<&'a Store>,
    pub json: bool,
    pub stop: Arc<AtomicBool>,
}

impl<K: Kind> Series<'_, K> {
    /// Runs the plan, prints the document, and returns the exit code.
    pub fn run(self) -> CmdResult {
        let once = match self.connect {
            Connect::Once(target, opts) => {
                Some(Session::connect(target, opts).map_err(connect::engine_failure)?)
            }
            _ => None,
        };
        let group = self.open_group();
        let (runs, failed) = self.measure_all(once.as_ref(), group);
        if let Some(s) = once {
            s.close();
        }
        let measured = !runs.is_empty();
        let doc = self.kind.document(runs);
        self.finish(group, &doc, measured || failed.is_none());
        if let Some(f) = failed {
            return Err(f);
        }
        let why = K::interrupt_reason(&doc);
        Ok(interrupt::measured_exit(
            &self.stop,
            why.as_deref(),
            self.kind.ok_code(&doc),
        ))
    }

    fn open_group(&self) -> Option<i64> {
        let (store, (kind, params)) = (self.store?, self.kind.group()?);
        store.create_group(kind, &params).ok()
    }

    /// Every step in turn, until one fails or a signal stops the series.
    fn measure_all(
        &self,
        once: Option<&Session>,
        group: Option<i64>,
    ) -> (Vec<K::Run>, Option<Failure>) {
        let mut runs = Vec::new();
        let mut failed = None;
        for (i, &step) in self.plan.iter().enumerate() {
            let mut run = match self.step(once, step) {
                Ok(run) => run,
                Err(e) => {
                    failed = Some(connect::engine_failure(e));
                    break;
                }
            };
            let kept = self.keep(i, step, group, &mut run);
            runs.push(run);
            if let Err(f) = kept {
                failed = Some(f);
                break;
            }
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
        }
        (runs, failed)
    }

    /// Measures one step, on the series' session or a fresh one.
    fn step(&self, once: Option<&Session>, step: K::Step) -> Result<K::Run, EngineError> {
        match (&self.connect, once) {
            (Connect::EachRun(target, opts), _) => {
                let session = Session::connect(target, opts)?;
                let run = self.kind.measure(Some(&session), step, &self.stop);
                session.close();
                run
            }
            (_, session) => self.kind.measure(session, step, &self.stop),
        }
    }

    /// Prints run `i`, then stores it (before the next run starts).
    fn keep(
        &self,
        i: usize,
        step: K::Step,
        group: Option<i64>,
        run: &mut K::Run,
    ) -> Result<(), Failure> {
        let planned = self.plan.len();
        if !self.json {
            self.kind.print_run(i, planned, run);
        }
        let label = self.kind.label(step);
        let id = history::store_record(
            self.store,
            run,
            history::Place {
                target: self.target,
                group,
                label: label.as_deref(),
            },
        )?;
        K::set_run_id(run, id);
        if let (Some(id), false, true) = (id, self.json, self.kind.says_stored(planned)) {
            outln!("stored as run {id}");
        }
        Ok(())
    }

    /// The document (JSON), or the text's end; the group's summary. Nothing of the
    /// kind when no run was measured (the first step failed).
    fn finish(&self, group: Option<i64>, doc: &K::Doc, measured: bool) {
        if !measured {
            return;
        }
        if let (Some(s), Some(id)) = (self.store, group) {
            let _ = s.finish_group(id, &self.kind.group_summary(doc));
        }
        if self.json {
            crate::out::json(doc);
        } else {
            self.kind.print_end(doc);
        }
    }
}

/// The session a kind that always has one measures on.
pub fn needs(session: Option<&Session>) -> Result<&Session, EngineError> {
    session.ok_or_else(|| EngineError::Protocol("no session to the agent".into()))
}
