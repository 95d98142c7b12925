//! The client's side of a stream test: asks the agent, opens the data connections,
//! runs its half of the phase, relays the agent's live intervals, and assembles both
//! ends' reports into one result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{
    AgentMsg, ClientMsg, ConnReport, EndReport, IntervalSample, StreamLimit, StreamReady,
    StreamRequest,
};

use super::phase::{self, DataConn, Phase, END_GRACE, IDLE};
use super::{End, StreamResult};
use crate::client::Session;
use crate::config::StreamParams;
use crate::flow::DataReady;
use crate::payload::incompressible;
use crate::sampler::Sampler;
use crate::stall::{self, Span};
use crate::stamp::unix_ms;
use crate::EngineError;

/// Progress callbacks (the CLI prints; tests may ignore).
pub trait StreamObserver: Sync {
    fn ready(&self, _ready: &StreamReady, _sampler: &Sampler) {}
    fn interval(&self, _end: End, _sample: &IntervalSample) {}
    /// Whether a run that moved nothing, stalled or lost the agent's report checks
    /// the path again to name the likely cause (`explain`; a few seconds).
    fn explain_failure(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct Quiet;
impl StreamObserver for Quiet {}

fn data_phase_request(p: &StreamParams) -> StreamRequest {
    let mut req = p.request.clone();
    if let Some((_, data)) = &p.file {
        req.limit = StreamLimit::Bytes {
            total: data.len() as u64 * u64::from(req.streams),
        };
    }
    req
}

/// Runs one stream test on an open session. `stop` (Ctrl-C) ends it early; the
/// result is then complete for what was measured and marked interrupted.
pub fn run(
    session: &Session,
    params: &StreamParams,
    stop: &Arc<AtomicBool>,
    obs: &dyn StreamObserver,
) -> Result<StreamResult, EngineError> {
    run_pinned(session, params, None, stop, obs)
}

/// [`run`], with this end's data threads pinned to `cpus` (`--cpu`; None: not
/// pinned). Where they ran is recorded either way.
pub fn run_pinned(
    session: &Session,
    params: &StreamParams,
    cpus: Option<Vec<u32>>,
    stop: &Arc<AtomicBool>,
    obs: &dyn StreamObserver,
) -> Result<StreamResult, EngineError> {
    let pin = crate::placement::Pinning::new(cpus);
    let req = data_phase_request(params);
    let started_unix_ms = unix_ms();
    let ready: StreamReady = session.ask(&ClientMsg::Stream(req.clone()), "stream ready")?;
    let sampler = Sampler::toward(session.agent.ip());
    obs.ready(&ready, &sampler);
    let mut conns = Vec::new();
    for i in 0..req.connections() {
        let sock = session.open_data(i, |s| phase::socket_options(s, &req))?;
        let _ = sock.set_write_timeout(Some(IDLE));
        conns.push(DataConn {
            index: i,
            sock,
            sending: req.client_sends_on(i),
        });
    }
    session
        .control
        .expect::<DataReady>(Some(session.reply_timeout()), "data ready")?;

    let generated;
    let data: &[u8] = if let Some((_, d)) = &params.file {
        d
    } else {
        generated = incompressible(req.block as usize, 0x6d74_7570_6572_6600);
        &generated
    };
    let t0 = Instant::now();
    // The test ends at its time, or at the agent's maximum duration (a --bytes or
    // --file transfer that has not finished by then ends there, marked).
    let agent_max = match session.info.limits.max_duration_ms {
        0 => Duration::from_hours(24),
        ms => Duration::from_millis(ms),
    };
    let planned = match req.limit {
        StreamLimit::Time { ms } => Duration::from_millis(ms).min(agent_max),
        StreamLimit::Bytes { .. } => agent_max,
    };
    let end = t0 + planned;
    // Nothing of this test is waited for past this instant.
    let hard_end = end + END_GRACE + IDLE + session.reply_timeout();

    // One reader thread owns the control socket's input for the rest of the test.
    let (tx, rx) = mpsc::channel::<(Instant, Result<AgentMsg, EngineError>)>();
    let reader = {
        let control = session.control.clone();
        thread::spawn(move || loop {
            let m = control.recv_by::<AgentMsg>(Some(hard_end), "the agent's report");
            let last = !matches!(m, Ok(AgentMsg::Interval(_)));
            if tx.send((Instant::now(), m)).is_err() || last {
                break;
            }
        })
    };

    let before = sampler.snapshot(t0);
    session.control.send(&ClientMsg::Go)?;
    let interval = phase::interval(&req);
    let mut phase = Phase::new(
        &req,
        conns,
        data,
        end,
        end + END_GRACE,
        params.file.is_none(),
        "the agent",
    );
    phase.pin = Some(pin.clone());
    let watch =
        crate::placement::Watch::start(&pin, sampler.iface.as_ref().map(|i| i.name.as_str()));

    // Relay the agent's live intervals, watch for Ctrl-C and the deadlines while our
    // threads run. `halt` stops our side early: Ctrl-C, or the agent gone silent.
    let halt = AtomicBool::new(false);
    let local_done = AtomicBool::new(false);
    let stop_sent = AtomicBool::new(false);
    let mut relay = Relay {
        intervals: Vec::new(),
        report: None,
        gave_up: None,
    };
    let (client_conns, client_intervals) = thread::scope(|s| {
        let ctx = RelayCtx {
            session,
            stop,
            halt: &halt,
            local_done: &local_done,
            stop_sent: &stop_sent,
            t0,
            silence: IDLE.max(interval * 2),
            report_wait: session.reply_timeout(),
            hard_end,
            omit_ns: req.omit_ms * 1_000_000,
        };
        let out = &mut relay;
        let relay_thread = s.spawn(move || relay_loop(&ctx, &rx, obs, out));
        let out = phase::run(&phase, t0, &halt, |i| obs.interval(End::Client, i));
        local_done.store(true, Ordering::Relaxed);
        let _ = relay_thread.join();
        out
    });
    let after = sampler.snapshot(t0);
    let client_placement = Some(watch.finish());
    let wall_ns = t0.elapsed().as_nanos() as u64;
    if !stop_sent.load(Ordering::Relaxed) {
        let _ = session.control.send(&ClientMsg::Stop);
    }
    if relay.report.is_none() || relay.gave_up.is_some() {
        // Unblocks the reader: nothing more is expected from the agent.
        session.control.shutdown();
    }
    let _ = reader.join();

    let mut reasons = Vec::new();
    if stop.load(Ordering::Relaxed) {
        reasons.push("stopped by a signal (Ctrl-C or SIGTERM)".to_string());
    }
    let relay_missing = !matches!(relay.report, Some((_, Ok(_))));
    let agent = match relay.report {
        Some((_, Ok(r))) => r,
        missing => {
            reasons.push(relay.gave_up.take().unwrap_or_else(|| match missing {
                Some((at, Err(e))) => gone(&e, at, t0),
                _ => "the agent's report never came".into(),
            }));
            // Keep what the agent sent live.
            EndReport {
                intervals: std::mem::take(&mut relay.intervals),
                interrupted: true,
                ..EndReport::default()
            }
        }
    };
    reasons.extend(conn_reasons("this end", &client_conns));
    reasons.extend(conn_reasons("the agent", &agent.conns));
    if let StreamLimit::Bytes { total } = req.limit {
        let per = total / u64::from(req.streams);
        let short = client_conns
            .iter()
            .any(|c| c.sending && c.error.is_none() && c.bytes < per);
        if short && params.file.is_none() && t0 + planned <= Instant::now() {
            reasons.push(format!(
                "ended at the agent's maximum duration of {} s (serve --max-duration) before all bytes were sent",
                planned.as_secs()
            ));
        }
    }
    let spans: Vec<Span> = client_intervals
        .iter()
        .map(|i| Span {
            start_ns: i.start_ns,
            end_ns: i.end_ns,
            moved: i.bytes_sent + i.bytes_received > 0,
        })
        .collect();
    let gaps = stall::stalls(
        &spans,
        interval.as_nanos() as u64,
        planned.as_nanos() as u64,
    );
    reasons.extend(stall::describe(
        &gaps,
        "no bytes moved between this end and the agent",
    ));
    let interrupted = !reasons.is_empty() || agent.interrupted;
    if agent.interrupted && reasons.is_empty() {
        reasons.push("the agent marked its side interrupted".into());
    }
    let mut result = StreamResult {
        request: req,
        target: session.agent.to_string(),
        local_addr: session
            .control
            .local()
            .map(|a| a.to_string())
            .unwrap_or_default(),
        remote_addr: session.agent.to_string(),
        started_unix_ms,
        client_host: mtuperf_sys::host::identity(crate::stamp::SOFTWARE),
        agent_host: session.info.host.clone(),
        client: EndReport {
            conns: client_conns,
            before,
            after,
            iface: sampler.iface.clone(),
            intervals: client_intervals,
            wall_ns,
            interrupted,
            placement: None,
        },
        agent,
        interrupted,
        interrupt_reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        source: params
            .file
            .as_ref()
            .map_or_else(|| "generated".to_string(), |(p, _)| p.clone()),
        client_placement,
        diagnosis: None,
    };
    let failed = relay_missing || !gaps.is_empty() || moved(&result) == 0;
    if failed && obs.explain_failure() && !stop.load(Ordering::Relaxed) {
        result.diagnosis = Some(explain(session, &result, relay_missing));
    }
    Ok(result)
}

/// The likely cause of a run that moved nothing, stalled or lost the agent's report.
fn explain(session: &Session, r: &StreamResult, report_missing: bool) -> crate::explain::Diagnosis {
    crate::explain::diagnose(session, &evidence(r, report_missing))
}

/// Bytes the receiving ends read, both directions (the agent's: when it reported).
fn moved(r: &StreamResult) -> u64 {
    r.client
        .conns
        .iter()
        .chain(&r.agent.conns)
        .filter(|c| !c.sending)
        .map(|c| c.bytes)
        .sum()
}

/// What a run that failed showed, for [`crate::explain::diagnose`].
fn evidence(r: &StreamResult, report_missing: bool) -> crate::explain::Evidence {
    let bytes = |sending: bool| -> u64 {
        r.agent
            .conns
            .iter()
            .filter(|c| c.sending == sending)
            .map(|c| c.bytes)
            .sum()
    };
    crate::explain::Evidence {
        test: crate::explain::Test::Stream,
        received: moved(r),
        late: 0,
        timeout_ns: 0,
        agent: (!report_missing).then(|| crate::explain::Account {
            received: bytes(false),
            answered: bytes(true),
        }),
    }
}

/// Why the agent's report is missing when its connection failed at `at`.
fn gone(e: &EngineError, at: Instant, t0: Instant) -> String {
    let when = at.saturating_duration_since(t0).as_secs_f64();
    match e {
        EngineError::Agent(m) => format!("the agent failed at {when:.1} s: {m}"),
        EngineError::Timeout { .. } => {
            format!("no report from the agent (control connection silent) at {when:.1} s")
        }
        other => format!(
            "the agent went away at {when:.1} s ({other}); only this end's figures are complete"
        ),
    }
}

/// The first connection error of one end, with how many more there were.
fn conn_reasons(end: &str, conns: &[ConnReport]) -> Option<String> {
    let mut errs = conns
        .iter()
        .filter_map(|c| c.error.as_ref().map(|e| (c.index, e)));
    let (i, first) = errs.next()?;
    let more = errs.count();
    Some(if more == 0 {
        format!("{end}, connection {i}: {first}")
    } else {
        format!("{end}, connection {i}: {first} (and {more} more connections)")
    })
}

/// What the relay collected.
struct Relay {
    intervals: Vec<IntervalSample>,
    /// The agent's final answer (or its failure) and when it came.
    report: Option<(Instant, Result<EndReport, EngineError>)>,
    /// Set when the relay stopped waiting for the agent, with the reason.
    gave_up: Option<String>,
}

struct RelayCtx<'a> {
    session: &'a Session,
    stop: &'a AtomicBool,
    halt: &'a AtomicBool,
    local_done: &'a AtomicBool,
    stop_sent: &'a AtomicBool,
    t0: Instant,
    /// No message from the agent for this long while the test runs: it is gone.
    silence: Duration,
    /// Wait for the agent's report this long after our side finished.
    report_wait: Duration,
    hard_end: Instant,
    omit_ns: u64,
}

fn relay_loop(
    c: &RelayCtx<'_>,
    rx: &mpsc::Receiver<(Instant, Result<AgentMsg, EngineError>)>,
    obs: &dyn StreamObserver,
    out: &mut Relay,
) {
    let mut heard = Instant::now();
    let mut report_by: Option<Instant> = None;
    let send_stop = || {
        if !c.stop_sent.swap(true, Ordering::Relaxed) {
            let _ = c.session.control.send(&ClientMsg::Stop);
        }
    };
    loop {
        if c.stop.load(Ordering::Relaxed) {
            c.halt.store(true, Ordering::Relaxed);
            send_stop();
        }
        let (at, m) = match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(x) => x,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                if c.local_done.load(Ordering::Relaxed) {
                    // Our side is finished: tell the agent, which ends its half.
                    send_stop();
                    let by = *report_by.get_or_insert(now + c.report_wait);
                    if now >= by {
                        out.gave_up = Some(format!(
                            "no report from the agent within {} s of this end's finish at {:.1} s",
                            c.report_wait.as_secs(),
                            by.saturating_duration_since(c.t0 + c.report_wait)
                                .as_secs_f64()
                        ));
                        break;
                    }
                } else if now.saturating_duration_since(heard) >= c.silence || now >= c.hard_end {
                    out.gave_up = Some(format!(
                        "no word from the agent for {} s after {:.1} s",
                        c.silence.as_secs(),
                        heard.saturating_duration_since(c.t0).as_secs_f64()
                    ));
                    break;
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        heard = at;
        let done = match m {
            Ok(AgentMsg::Interval(i)) => {
                obs.interval(End::Agent, &i);
                // Kept only in case the report never comes; bounded as the agent
                // bounds its own.
                super::ticker::bound(&mut out.intervals, c.omit_ns);
                out.intervals.push(i);
                continue;
            }
            Ok(AgentMsg::StreamDone(r)) => Ok(*r),
            Ok(AgentMsg::Error { message }) => Err(EngineError::Agent(message)),
            Ok(other) => Err(EngineError::Unexpected {
                expected: "an interval or the stream report",
                got: format!("{other:?}"),
            }),
            Err(e) => Err(e),
        };
        out.report = Some((at, done));
        break;
    }
    if !matches!(out.report, Some((_, Ok(_)))) {
        // The agent is gone or silent: end our side now, do not wait for it.
        c.halt.store(true, Ordering::Relaxed);
        c.session.control.shutdown();
    }
}

/// The stream (TCP) kind; this end's data threads pinned to `cpus` (`--cpu`; None:
/// not pinned).
#[derive(Debug, Clone, Default)]
pub struct Stream {
    pub cpus: Option<Vec<u32>>,
}

impl crate::kind::Measurement for Stream {
    type Config = StreamParams;
    type Result = StreamResult;
    type Observer = dyn StreamObserver;
    type Handler = super::agent::StreamHandler;
    const NAME: &'static str = "stream";

    fn run(
        &self,
        session: &Session,
        params: &StreamParams,
        stop: &Arc<AtomicBool>,
        obs: &dyn StreamObserver,
    ) -> Result<StreamResult, EngineError> {
        run_pinned(session, params, self.cpus.clone(), stop, obs)
    }
}

impl crate::kind::Outcome for StreamResult {
    fn target(&self) -> &str {
        &self.target
    }

    fn interrupt_reason(&self) -> Option<&str> {
        self.interrupt_reason.as_deref()
    }
}
