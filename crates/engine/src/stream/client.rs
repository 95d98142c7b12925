//! The client's side of a stream test: asks the agent, opens the data connections,
//! runs its half of the phase, relays the agent's live intervals, and assembles both
//! ends' reports into one result.

use std::borrow::Cow;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mtuperf_proto::interrupt::{Interrupt, Side, Stalled};
use mtuperf_proto::msg::{
    AgentMsg, ClientMsg, ConnReport, EndReport, IntervalSample, StreamLimit, StreamReady,
    StreamRequest,
};

use super::measured::{beside_relay, not_a_report};
use super::phase::{self, DataConn, Phase, END_GRACE, IDLE};
use super::{End, StreamResult};
use crate::client::phase::{
    self as client_phase, AgentReader, HostWindow, Relay, RelayPlan, Relayed,
};
use crate::client::Session;
use crate::config::StreamParams;
use crate::payload::incompressible;
use crate::placement::Pinning;
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
    let pin = Pinning::new(cpus);
    let req = data_phase_request(params);
    let started_unix_ms = unix_ms();
    let ready: StreamReady = session.ask(&ClientMsg::Stream(req.clone()), "stream ready")?;
    let sampler = Sampler::toward(session.agent.ip());
    obs.ready(&ready, &sampler);
    let conns = data_conns(session, &req)?;
    let data = payload(params, &req);
    // The test ends at its time, or at the agent's maximum duration (a --bytes or
    // --file transfer that has not finished by then ends there, marked).
    let planned = client_phase::planned(session, req.limit);
    let window = HostWindow::open(&sampler, &pin);
    let end = window.t0 + planned;
    let mut phase = Phase::new(
        &req,
        conns,
        &data,
        end,
        end + END_GRACE,
        params.file.is_none(),
        "the agent",
    );
    phase.pin = Some(pin.clone());
    let mut m = measure(session, &req, &phase, window, stop, obs)?;
    m.started_unix_ms = started_unix_ms;
    drop(phase);
    let explain = obs.explain_failure();
    Ok(assemble(session, params, req, planned, m, stop, explain))
}

/// The test's data connections, each with its socket options and its direction.
fn data_conns(session: &Session, req: &StreamRequest) -> Result<Vec<DataConn>, EngineError> {
    let socks = client_phase::open_data(session, req.connections(), |s| {
        phase::socket_options(s, req);
    })?;
    Ok((0..)
        .zip(socks)
        .map(|(i, sock)| {
            let _ = sock.set_write_timeout(Some(IDLE));
            DataConn {
                index: i,
                sock,
                sending: req.client_sends_on(i),
            }
        })
        .collect())
}

/// What this end sends: the file's bytes (`--file`), else an incompressible block.
fn payload<'a>(params: &'a StreamParams, req: &StreamRequest) -> Cow<'a, [u8]> {
    match &params.file {
        Some((_, d)) => Cow::Borrowed(d),
        None => Cow::Owned(incompressible(req.block as usize, 0x6d74_7570_6572_6600)),
    }
}

/// What one run measured (see [`super::measured`]).
type Measured = super::measured::Measured<ConnReport, IntervalSample, EndReport>;

/// Go, then this end's half of the phase while the agent's live intervals are
/// relayed and Ctrl-C and its silence are watched; the Stop; the agent's report.
fn measure(
    session: &Session,
    req: &StreamRequest,
    phase: &Phase<'_>,
    window: HostWindow<'_>,
    stop: &AtomicBool,
    obs: &dyn StreamObserver,
) -> Result<Measured, EngineError> {
    let t0 = window.t0;
    let interval = phase::interval(req);
    // Nothing of this test is waited for past this instant.
    let hard_end = phase.recv_deadline + IDLE + session.reply_timeout();
    let reader = AgentReader::spawn(session, hard_end, "the agent's report", |m| {
        matches!(m, AgentMsg::Interval(_))
    });
    session.control.send(&ClientMsg::Go)?;
    let halt = AtomicBool::new(false);
    let relay = Relay::new(
        session,
        RelayPlan {
            interrupt: stop,
            halt: &halt,
            abort: None,
            t0,
            silence: Some((IDLE.max(interval * 2), hard_end)),
            report_wait: session.reply_timeout(),
        },
    );
    let omit_ns = req.omit_ms * 1_000_000;
    let on = |m, live: &mut Vec<IntervalSample>| match m {
        AgentMsg::Interval(i) => {
            obs.interval(End::Agent, &i);
            // Bounded as the agent bounds its own.
            super::ticker::bound(live, omit_ns);
            live.push(i);
            Relayed::Live
        }
        AgentMsg::StreamDone(r) => Relayed::Done(Ok(*r)),
        other => not_a_report(other, "an interval or the stream report"),
    };
    Ok(beside_relay(session, &relay, reader, window, on, |_| {
        phase::run(phase, t0, &halt, |i| obs.interval(End::Client, i))
    }))
}

/// Both ends' reports as one result, with the reasons it is marked interrupted and,
/// when it failed, the likely cause.
fn assemble(
    session: &Session,
    params: &StreamParams,
    req: StreamRequest,
    planned: Duration,
    mut m: Measured,
    stop: &AtomicBool,
    explain: bool,
) -> StreamResult {
    let t0 = m.host.t0;
    let mut reasons = client_phase::reasons(stop);
    let report_missing = m.agent.missing();
    // Without the agent's report, keep what it sent live.
    let agent = m.agent_end(&mut reasons, |intervals| EndReport {
        intervals,
        interrupted: true,
        ..EndReport::default()
    });
    reasons.extend(conn_reasons(Side::Client, &m.conns));
    reasons.extend(conn_reasons(Side::Agent, &agent.conns));
    reasons.extend(short_of_bytes(
        params,
        &req,
        &m.conns,
        t0 + planned,
        planned,
    ));
    let gaps = stalls(&m.intervals, phase::interval(&req), planned);
    reasons.extend(stall::describe(&gaps, Stalled::Bytes));
    let interrupted = !reasons.is_empty() || agent.interrupted;
    if agent.interrupted && reasons.is_empty() {
        reasons.push(Interrupt::AgentSide);
    }
    let host = m.host;
    let mut result = StreamResult {
        request: req,
        target: session.agent.to_string(),
        local_addr: client_phase::local_addr(session),
        remote_addr: session.agent.to_string(),
        started_unix_ms: m.started_unix_ms,
        client_host: client_phase::client_host(),
        agent_host: session.info.host.clone(),
        client: EndReport {
            conns: m.conns,
            before: host.before,
            after: host.after,
            iface: host.iface,
            intervals: m.intervals,
            wall_ns: host.wall_ns,
            interrupted,
            placement: None,
        },
        agent,
        interrupted,
        interrupted_by: reasons,
        source: params
            .file
            .as_ref()
            .map_or_else(|| "generated".to_string(), |(p, _)| p.clone()),
        client_placement: Some(host.placement),
        diagnosis: None,
    };
    let failed = report_missing || !gaps.is_empty() || moved(&result) == 0;
    result.diagnosis = crate::explain::when_failed(session, failed, explain, stop, || {
        evidence(&result, report_missing)
    });
    result
}

/// Why a `--bytes` run that did not send all its bytes ended: the agent's maximum
/// duration (`planned`, passed at `end`).
fn short_of_bytes(
    params: &StreamParams,
    req: &StreamRequest,
    conns: &[ConnReport],
    end: Instant,
    planned: Duration,
) -> Option<Interrupt> {
    let StreamLimit::Bytes { total } = req.limit else {
        return None;
    };
    let per = total / u64::from(req.streams);
    let short = conns
        .iter()
        .any(|c| c.sending && c.error.is_none() && c.bytes < per);
    (short && params.file.is_none() && end <= Instant::now()).then_some(
        Interrupt::AgentMaxDuration {
            secs: planned.as_secs(),
        },
    )
}

/// The spans of this end's intervals in which no byte moved for long.
fn stalls(intervals: &[IntervalSample], interval: Duration, planned: Duration) -> Vec<(u64, u64)> {
    let spans: Vec<Span> = intervals
        .iter()
        .map(|i| Span {
            start_ns: i.start_ns,
            end_ns: i.end_ns,
            moved: i.bytes_sent + i.bytes_received > 0,
        })
        .collect();
    stall::stalls(
        &spans,
        interval.as_nanos() as u64,
        planned.as_nanos() as u64,
    )
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

/// The first connection error of one end, with how many more there were.
fn conn_reasons(end: Side, conns: &[ConnReport]) -> Option<Interrupt> {
    let mut errs = conns
        .iter()
        .filter_map(|c| c.error.as_ref().map(|e| (c.index, e)));
    let (index, first) = errs.next()?;
    let more = errs.count();
    Some(Interrupt::Connection {
        end,
        index,
        error: first.clone(),
        more: u32::try_from(more).unwrap_or(u32::MAX),
    })
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

crate::kind::outcome_of_fields!(StreamResult);
