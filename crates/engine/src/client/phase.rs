//! The phases every test's client side shares, as `serve::phase` holds the agent's:
//! the planned end within the agent's `--max-duration`, the data connections and the
//! agent's DataReady, this end's host around the test (counters before and after,
//! where its threads ran), the reader and relay of the agent's messages while the
//! test runs, the end-of-test Stop (sent once), why a report is missing, and the
//! reasons a run is marked interrupted.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mtuperf_proto::host::{HostIdentity, HostSnapshot, IfaceInfo};
use mtuperf_proto::interrupt::Interrupt;
use mtuperf_proto::msg::{AgentMsg, ClientMsg, StreamLimit};
use mtuperf_proto::placement::Placement;
use socket2::Socket;

use super::Session;
use crate::flow::{DataReady, Expected};
use crate::placement::{Pinning, Watch};
use crate::sampler::Sampler;
use crate::EngineError;

/// How often the relay of the agent's messages looks at Ctrl-C and the agent's
/// silence while no message comes: often enough that a stop is sent promptly, seldom
/// enough not to wake a busy host's CPUs during the test (see `tick::STEP`).
const RELAY_STEP: Duration = Duration::from_millis(200);

/// The agent's `--max-duration` (a day when it has none).
pub fn agent_max(session: &Session) -> Duration {
    match session.info.limits.max_duration_ms {
        0 => Duration::from_hours(24),
        ms => Duration::from_millis(ms),
    }
}

/// How long a stream test plans to run: its time, within the agent's maximum (a
/// byte-limited test is bounded by the maximum alone).
pub fn planned(session: &Session, limit: StreamLimit) -> Duration {
    crate::serve::phase::planned(limit, agent_max(session))
}

/// Opens the accepted test's `n` data connections (`setup` runs on each socket
/// before it connects) and waits for the agent's word that it has them all.
pub fn open_data(
    session: &Session,
    n: u32,
    setup: impl Fn(&Socket),
) -> Result<Vec<TcpStream>, EngineError> {
    let conns = (0..n)
        .map(|i| session.open_data(i, &setup))
        .collect::<Result<Vec<_>, _>>()?;
    session
        .control
        .expect::<DataReady>(Some(session.reply_timeout()), "data ready")?;
    Ok(conns)
}

/// This end's address on the control connection ("" when it has none).
pub fn local_addr(session: &Session) -> String {
    session
        .control
        .local()
        .map(|a| a.to_string())
        .unwrap_or_default()
}

/// This host, as a result names it.
pub fn client_host() -> HostIdentity {
    mtuperf_sys::host::identity(crate::stamp::SOFTWARE)
}

/// This end's host while a test runs, from its Go (`t0`): the counters at the start
/// and the sampling of where its threads run.
pub struct HostWindow<'a> {
    sampler: &'a Sampler,
    watch: Watch,
    pub t0: Instant,
    before: HostSnapshot,
}

/// What [`HostWindow`] saw: the counters at both ends of the test, where this end's
/// threads ran, and the time from Go to the end.
pub struct HostSeen {
    pub t0: Instant,
    pub before: HostSnapshot,
    pub after: HostSnapshot,
    pub placement: Placement,
    pub wall_ns: u64,
    /// The interface toward the agent.
    pub iface: Option<IfaceInfo>,
}

impl HostWindow<'_> {
    /// Opens the window now: `t0`, the first snapshot, the placement watch of `pin`.
    pub fn open<'a>(sampler: &'a Sampler, pin: &Arc<Pinning>) -> HostWindow<'a> {
        let t0 = Instant::now();
        let before = sampler.snapshot(t0);
        let watch = Watch::start(pin, sampler.iface.as_ref().map(|i| i.name.as_str()));
        HostWindow {
            sampler,
            watch,
            t0,
            before,
        }
    }

    /// The sampler of this end's counters.
    pub fn sampler(&self) -> &Sampler {
        self.sampler
    }

    /// Closes it once this end's threads are done.
    pub fn close(self) -> HostSeen {
        let placement = self.watch.finish();
        let after = self.sampler.snapshot(self.t0);
        HostSeen {
            t0: self.t0,
            before: self.before,
            after,
            placement,
            wall_ns: self.t0.elapsed().as_nanos() as u64,
            iface: self.sampler.iface.clone(),
        }
    }
}

/// One of the agent's messages as the reader passed it on, with when it came.
pub type Heard = (Instant, Result<AgentMsg, EngineError>);

/// The thread that owns the control connection's input while a test runs: it passes
/// each of the agent's messages on until one that is not live (`live` says which
/// are), a failure, or `hard_end`.
pub struct AgentReader {
    thread: JoinHandle<()>,
}

impl AgentReader {
    pub fn spawn(
        session: &Session,
        hard_end: Instant,
        what: &'static str,
        live: fn(&AgentMsg) -> bool,
    ) -> (AgentReader, mpsc::Receiver<Heard>) {
        let (tx, rx) = mpsc::channel::<Heard>();
        let control = session.control.clone();
        let thread = thread::spawn(move || loop {
            let m = control.recv_by::<AgentMsg>(Some(hard_end), what);
            let last = !matches!(&m, Ok(m) if live(m));
            if tx.send((Instant::now(), m)).is_err() || last {
                break;
            }
        });
        (AgentReader { thread }, rx)
    }

    /// Waits for the reader once the test is over. When the agent's report never
    /// came (`report_missing`), nothing more is expected from it: the control
    /// connection is shut, which ends a reader still waiting.
    pub fn finish(self, session: &Session, report_missing: bool) {
        if report_missing {
            session.control.shutdown();
        }
        let _ = self.thread.join();
    }
}

/// What a relay makes of one of the agent's messages.
pub enum Relayed<R> {
    /// A live message (an interval, a count), taken: more follow.
    Live,
    /// The agent's report, or its failure: the last message of the test.
    Done(Result<R, EngineError>),
}

/// How a relay waits for the agent while this end runs.
pub struct RelayPlan<'a> {
    /// Ctrl-C or SIGTERM.
    pub interrupt: &'a AtomicBool,
    /// Stops this end's side early: Ctrl-C, or the agent gone or silent.
    pub halt: &'a AtomicBool,
    /// Set with `halt` when the agent is gone (receivers that must stop at once too).
    pub abort: Option<&'a AtomicBool>,
    pub t0: Instant,
    /// While this end runs: no word from the agent for this long, or this instant
    /// passed, means it is gone (None: only the reader's own deadline applies).
    pub silence: Option<(Duration, Instant)>,
    /// How long the agent's report is waited for once this end finished.
    pub report_wait: Duration,
}

/// The relay of the agent's messages while this end's side runs, and the
/// end-of-test Stop: sent once, at Ctrl-C or when this end finished.
pub struct Relay<'a> {
    session: &'a Session,
    plan: RelayPlan<'a>,
    local_done: AtomicBool,
    stop_sent: AtomicBool,
}

/// What the relay collected: the agent's report (or its failure) and when it came,
/// or why the relay stopped waiting for it.
pub struct Report<R> {
    pub report: Option<(Instant, Result<R, EngineError>)>,
    pub gave_up: Option<Interrupt>,
}

impl<'a> Relay<'a> {
    pub fn new(session: &'a Session, plan: RelayPlan<'a>) -> Relay<'a> {
        Relay {
            session,
            plan,
            local_done: AtomicBool::new(false),
            stop_sent: AtomicBool::new(false),
        }
    }

    /// Sends the client's Stop, once.
    pub fn send_stop(&self) {
        if !self.stop_sent.swap(true, Relaxed) {
            let _ = self.session.control.send(&ClientMsg::Stop);
        }
    }

    /// This end's side is finished: the Stop tells the agent, which ends its half
    /// and reports.
    pub fn local_done(&self) {
        self.send_stop();
        self.local_done.store(true, Relaxed);
    }

    /// Takes the agent's messages (`on` each) until its report, its failure, its
    /// silence, or the report's wait after this end finished runs out. Without a
    /// good report this end's side is halted and the control connection shut.
    pub fn run<R>(
        &self,
        rx: &mpsc::Receiver<Heard>,
        mut on: impl FnMut(AgentMsg) -> Relayed<R>,
    ) -> Report<R> {
        let mut out = Report::none();
        let mut heard = Instant::now();
        let mut report_by: Option<Instant> = None;
        loop {
            if self.plan.interrupt.load(Relaxed) {
                self.plan.halt.store(true, Relaxed);
                self.send_stop();
            }
            let (at, m) = match rx.recv_timeout(RELAY_STEP) {
                Ok(x) => x,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    out.gave_up = self.given_up(heard, &mut report_by);
                    if out.gave_up.is_some() {
                        break;
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            };
            heard = at;
            match m.and_then(|m| match on(m) {
                Relayed::Live => Ok(None),
                Relayed::Done(r) => r.map(Some),
            }) {
                Ok(None) => {}
                Ok(Some(r)) => {
                    out.report = Some((at, Ok(r)));
                    break;
                }
                Err(e) => {
                    out.report = Some((at, Err(e)));
                    break;
                }
            }
        }
        if !matches!(out.report, Some((_, Ok(_)))) {
            // The agent is gone or silent: end this end's side now, do not wait for it.
            self.plan.halt.store(true, Relaxed);
            if let Some(a) = self.plan.abort {
                a.store(true, Relaxed);
            }
            self.session.control.shutdown();
        }
        out
    }

    /// Why the relay stops waiting now (None: it waits on): the report's wait ran
    /// out after this end finished, or the agent went silent while it ran.
    fn given_up(&self, heard: Instant, report_by: &mut Option<Instant>) -> Option<Interrupt> {
        let (now, p) = (Instant::now(), &self.plan);
        if self.local_done.load(Relaxed) {
            let by = *report_by.get_or_insert(now + p.report_wait);
            let finished = by.saturating_duration_since(p.t0 + p.report_wait);
            return (now >= by).then(|| no_report_within(p.report_wait, finished));
        }
        let (silence, hard_end) = p.silence?;
        (now.saturating_duration_since(heard) >= silence || now >= hard_end).then(|| {
            Interrupt::AgentSilent {
                silence_s: silence.as_secs(),
                heard_ns: ns(heard.saturating_duration_since(p.t0)),
            }
        })
    }
}

impl<R> Report<R> {
    /// Nothing collected (the relay itself failed).
    pub fn none() -> Report<R> {
        Report {
            report: None,
            gave_up: None,
        }
    }

    /// The agent's report; without it, why it is missing goes to `reasons`.
    pub fn take(self, t0: Instant, reasons: &mut Vec<Interrupt>) -> Option<R> {
        match (self.report, self.gave_up) {
            (Some((_, Ok(r))), None) => Some(r),
            (_, Some(why)) => {
                reasons.push(why);
                None
            }
            (Some((at, Err(e))), None) => {
                reasons.push(gone(&e, at, t0));
                None
            }
            (None, None) => {
                reasons.push(Interrupt::ReportNeverCame);
                None
            }
        }
    }

    /// True unless the agent's report came.
    pub fn missing(&self) -> bool {
        self.gave_up.is_some() || !matches!(self.report, Some((_, Ok(_))))
    }
}

/// The reason for a report that did not come within `wait` of this end's finish,
/// `finished` after Go.
pub fn no_report_within(wait: Duration, finished: Duration) -> Interrupt {
    Interrupt::NoReport {
        wait_s: wait.as_secs(),
        finished_ns: ns(finished),
    }
}

/// A duration in ns, saturating.
fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Why the agent's report is missing when waiting for it failed with `e` at `at`.
pub fn gone(e: &EngineError, at: Instant, t0: Instant) -> Interrupt {
    let at_ns = ns(at.saturating_duration_since(t0));
    match e {
        EngineError::Agent(m) => Interrupt::AgentFailed {
            at_ns,
            message: m.clone(),
        },
        EngineError::Unexpected { .. }
        | EngineError::Refused(_)
        | EngineError::PeerRefused { .. } => Interrupt::AgentAnswer { error: e.failed() },
        EngineError::Timeout { .. } => Interrupt::ControlSilent { at_ns },
        other => Interrupt::AgentGone {
            at_ns,
            error: other.to_string(),
        },
    }
}

/// The end-of-test Stop of a test without live messages, then its report `T`,
/// waited for at most `wait`. Without it, nothing more is expected from the agent:
/// the control connection is shut, and the error says why, in words.
pub fn stop_then_report<T: Expected<Msg = AgentMsg>>(
    session: &Session,
    wait: Duration,
    what: &str,
    t0: Instant,
) -> Result<T, Interrupt> {
    let finished = Instant::now();
    let answer = session
        .control
        .send(&ClientMsg::Stop)
        .and_then(|()| session.control.expect(Some(wait), what));
    answer.map_err(|e| {
        session.control.shutdown();
        match e {
            EngineError::Timeout { .. } => {
                no_report_within(wait, finished.saturating_duration_since(t0))
            }
            e => gone(&e, Instant::now(), t0),
        }
    })
}

/// The reasons a run is marked interrupted, starting with Ctrl-C or SIGTERM.
pub fn reasons(interrupt: &AtomicBool) -> Vec<Interrupt> {
    if interrupt.load(Relaxed) {
        vec![Interrupt::Signal]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A relay's outcome whose report (or failure) came 2.5 s after `t0`.
    fn report_at(
        t0: Instant,
        r: Option<Result<u32, EngineError>>,
        gave_up: Option<Interrupt>,
    ) -> Report<u32> {
        Report {
            report: r.map(|r| (t0 + Duration::from_millis(2500), r)),
            gave_up,
        }
    }

    #[test]
    fn a_report_that_came_is_taken_and_adds_no_reason() {
        let mut reasons = Vec::new();
        let r = report_at(Instant::now(), Some(Ok(7)), None);
        assert!(!r.missing());
        assert_eq!(r.take(Instant::now(), &mut reasons), Some(7));
        assert!(reasons.is_empty());
    }

    #[test]
    fn a_missing_report_says_why_once() {
        let t0 = Instant::now();
        let at_ns = 2_500_000_000;
        let silent = Interrupt::AgentSilent {
            silence_s: 10,
            heard_ns: 4_000_000_000,
        };
        let cases = [
            (report_at(t0, None, Some(silent.clone())), silent),
            (report_at(t0, None, None), Interrupt::ReportNeverCame),
            (
                report_at(t0, Some(Err(EngineError::Agent("disk full".into()))), None),
                Interrupt::AgentFailed {
                    at_ns,
                    message: "disk full".into(),
                },
            ),
        ];
        for (r, want) in cases {
            assert!(r.missing());
            let mut reasons = Vec::new();
            assert_eq!(r.take(t0, &mut reasons), None);
            assert_eq!(reasons, vec![want]);
        }
        let gone = report_at(
            t0,
            Some(Err(EngineError::Closed {
                what: "report".into(),
            })),
            None,
        );
        let mut reasons = Vec::new();
        assert_eq!(gone.take(t0, &mut reasons), None);
        assert!(
            matches!(&reasons[..], [Interrupt::AgentGone { at_ns: a, .. }] if *a == at_ns),
            "{reasons:?}"
        );
    }

    #[test]
    fn a_signal_is_the_first_reason() {
        assert!(reasons(&AtomicBool::new(false)).is_empty());
        assert_eq!(reasons(&AtomicBool::new(true)), vec![Interrupt::Signal]);
        assert_eq!(
            no_report_within(Duration::from_secs(10), Duration::from_millis(6040)),
            Interrupt::NoReport {
                wait_s: 10,
                finished_ns: 6_040_000_000
            }
        );
    }
}
