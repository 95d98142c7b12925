//! The client's side of a UDP stream: registers its sockets' ports, asks the agent,
//! runs its half, relays the agent's live intervals and its sender counts, and
//! assembles both ends' reports into one result.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use mtuperf_proto::interrupt::{Interrupt, Side};
use mtuperf_proto::msg::udp::{
    UdpConnReport, UdpEndReport, UdpInterval, UdpSent, UdpStreamReady, UdpStreamRequest,
};
use mtuperf_proto::msg::{AgentMsg, ClientMsg};

use super::data::DRAIN;
use super::phase::{self, Conn};
use super::plan::{Live, Plan};
use super::{datagrams_per_index, sockets, UdpStreamResult, IDLE, LIVE_DEFAULT};
use crate::client::phase::{
    self as client_phase, AgentReader, HostWindow, Relay, RelayPlan, Relayed,
};
use crate::client::Session;
use crate::config::UdpStreamConfig;
use crate::placement::Pinning;
use crate::sampler::Sampler;
use crate::stamp::unix_ms;
use crate::stream::measured::{beside_relay, not_a_report};
use crate::stream::End;
use crate::EngineError;

/// Progress callbacks (the CLI prints; tests may ignore).
pub trait UdpObserver: Sync {
    fn ready(&self, _ready: &UdpStreamReady) {}
    fn interval(&self, _end: End, _sample: &UdpInterval) {}
    /// Whether a run that lost every datagram of a direction or lost the agent's
    /// report checks the path again to name the likely cause (`explain`; a few
    /// seconds).
    fn explain_failure(&self) -> bool {
        false
    }
}

/// An observer that ignores everything.
pub struct Quiet;
impl UdpObserver for Quiet {}

/// Runs one UDP stream on an open session. `stop` (Ctrl-C) ends it early; the result
/// then covers what was measured and is marked interrupted.
pub fn run(
    session: &Session,
    config: &UdpStreamConfig,
    stop: &Arc<AtomicBool>,
    obs: &dyn UdpObserver,
) -> Result<UdpStreamResult, EngineError> {
    config
        .validate(&session.info.limits)
        .map_err(|e| EngineError::Refused(e.into()))?;
    let started_unix_ms = unix_ms();
    let (req, ready, socks) = ask(session, config)?;
    obs.ready(&ready);
    let sampler = Sampler::toward(session.agent.ip());
    let planned = client_phase::planned(session, req.limit);
    let conns: Vec<Conn> = phase::conns(socks, |i| req.client_sends_on(i), req.io, req.block);
    let pin = Pinning::new(config.cpus.clone());
    let window = HostWindow::open(&sampler, &pin);
    let t0 = window.t0;
    let this = ThisEnd {
        req: &req,
        lives: (0..config.connections()).map(|_| Live::new()).collect(),
        every: config.interval.unwrap_or(LIVE_DEFAULT),
        plan: Plan {
            token: ready.token,
            block: req.block,
            rate_bps: ready.rate_bps / u64::from(req.streams),
            count: datagrams_per_index(&req),
            t0,
            end: t0 + planned,
            hard_end: t0 + planned + DRAIN + IDLE,
            halt: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            pin,
        },
    };
    let mut m = measure(session, &this, conns, window, stop, obs)?;
    m.started_unix_ms = started_unix_ms;
    let explain = obs.explain_failure();
    Ok(assemble(session, req, ready.rate_bps, m, stop, explain))
}

/// Binds this end's sockets, asks the agent (their ports in the request) and
/// connects each to the agent's port of the same index.
fn ask(
    session: &Session,
    config: &UdpStreamConfig,
) -> Result<(UdpStreamRequest, UdpStreamReady, Vec<UdpSocket>), EngineError> {
    let n = config.connections();
    let local = session
        .bind()
        .unwrap_or_else(|| std::net::IpAddr::from([0u8; 4]));
    let socks = sockets::bind(local, n, config.window)?;
    let req = config.request(sockets::ports(&socks)?);
    let ready: UdpStreamReady =
        session.ask(&ClientMsg::UdpStream(req.clone()), "udp stream ready")?;
    if ready.ports.len() != n as usize {
        return Err(EngineError::Unexpected {
            expected: "one agent port per socket",
            got: format!("{} ports for {n} sockets", ready.ports.len()),
        });
    }
    sockets::connect(&socks, session.agent.ip(), &ready.ports)?;
    Ok((req, ready, socks))
}

/// This end of one run: what it asked, what its threads share, their live counts
/// and how often an interval closes.
struct ThisEnd<'a> {
    req: &'a UdpStreamRequest,
    plan: Plan,
    lives: Vec<Live>,
    every: Duration,
}

/// What one run measured (see [`crate::stream::measured`]).
type Measured = crate::stream::measured::Measured<UdpConnReport, UdpInterval, UdpEndReport>;

/// Go, then this end's threads while the agent's intervals and sender counts are
/// relayed; this end's counts to the agent once its senders are done; the Stop; the
/// agent's report.
fn measure(
    session: &Session,
    this: &ThisEnd<'_>,
    conns: Vec<Conn>,
    window: HostWindow<'_>,
    stop: &AtomicBool,
    obs: &dyn UdpObserver,
) -> Result<Measured, EngineError> {
    let t0 = window.t0;
    let hard_end = this.plan.hard_end + IDLE + session.reply_timeout();
    let reader = AgentReader::spawn(session, hard_end, "the agent's udp report", |m| {
        matches!(m, AgentMsg::UdpInterval(_) | AgentMsg::UdpSent(_))
    });
    session.control.send(&ClientMsg::Go)?;
    let relay = Relay::new(
        session,
        RelayPlan {
            interrupt: stop,
            halt: &this.plan.halt,
            abort: Some(&this.plan.abort),
            t0,
            silence: None,
            report_wait: session.reply_timeout() + IDLE,
        },
    );
    let has_senders = conns.iter().any(|c| c.sending);
    let on = |m, live: &mut Vec<UdpInterval>| match m {
        AgentMsg::UdpInterval(i) => {
            obs.interval(End::Agent, &i);
            live.push(*i);
            Relayed::Live
        }
        AgentMsg::UdpSent(sent) => {
            set_expected(&this.lives, &sent, this.req, false);
            Relayed::Live
        }
        AgentMsg::UdpStreamDone(r) => Relayed::Done(Ok(*r)),
        other => not_a_report(other, "a udp interval or report"),
    };
    Ok(beside_relay(
        session,
        &relay,
        reader,
        window,
        on,
        |window| {
            phase::run(
                conns,
                &this.plan,
                &this.lives,
                window.sampler(),
                this.every,
                |i| obs.interval(End::Client, i),
                |sent| {
                    if has_senders {
                        let _ = session.control.send(&ClientMsg::UdpSent(UdpSent { sent }));
                    }
                },
            )
        },
    ))
}

/// Both ends' reports as one result, with the reasons it is marked interrupted and,
/// when a direction lost everything or the agent's report is missing, the likely
/// cause.
fn assemble(
    session: &Session,
    req: UdpStreamRequest,
    paced_rate_bps: u64,
    mut m: Measured,
    stop: &AtomicBool,
    explain: bool,
) -> UdpStreamResult {
    let mut reasons = client_phase::reasons(stop);
    let report_missing = m.agent.missing();
    // Without the agent's report, keep what it sent live.
    let agent = m.agent_end(&mut reasons, |intervals| UdpEndReport {
        intervals,
        interrupted: true,
        ..UdpEndReport::default()
    });
    reasons.extend(socket_error(Side::Client, &m.conns));
    reasons.extend(socket_error(Side::Agent, &agent.conns));
    let interrupted = !reasons.is_empty() || agent.interrupted;
    let host = m.host;
    let mut result = UdpStreamResult {
        paced_rate_bps,
        request: req,
        target: session.agent.to_string(),
        local_addr: client_phase::local_addr(session),
        remote_addr: session.agent.to_string(),
        started_unix_ms: m.started_unix_ms,
        client_host: client_phase::client_host(),
        agent_host: session.info.host.clone(),
        client: UdpEndReport {
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
        client_placement: Some(host.placement),
        diagnosis: None,
    };
    let failed = report_missing || lost_a_direction(&result);
    result.diagnosis = crate::explain::when_failed(session, failed, explain, stop, || {
        evidence(&result, report_missing)
    });
    result
}

/// The first socket error of one end.
fn socket_error(end: Side, conns: &[UdpConnReport]) -> Option<Interrupt> {
    let c = conns.iter().find(|c| c.error.is_some())?;
    Some(Interrupt::Socket {
        end,
        index: c.index,
        error: c.error.clone().unwrap_or_default(),
    })
}

/// Datagrams sent and received one way: (sent, received), from the sending end's
/// and the receiving end's counts.
fn counts(sender: &UdpEndReport, receiver: &UdpEndReport) -> (u64, u64) {
    let sent = sender
        .conns
        .iter()
        .filter(|c| c.sending)
        .map(|c| c.sent)
        .sum();
    let received = receiver
        .conns
        .iter()
        .filter(|c| !c.sending)
        .map(|c| c.received)
        .sum();
    (sent, received)
}

/// A direction that sent datagrams of which none arrived.
fn lost_a_direction(r: &UdpStreamResult) -> bool {
    [counts(&r.client, &r.agent), counts(&r.agent, &r.client)]
        .into_iter()
        .any(|(sent, received)| sent > 0 && received == 0)
}

/// What a run that failed showed, for [`crate::explain::diagnose`]: the datagrams
/// each end received, and the agent's account when its report came.
fn evidence(r: &UdpStreamResult, report_missing: bool) -> crate::explain::Evidence {
    let req = &r.request;
    let ways = (0..req.connections()).map(|i| req.client_sends_on(i));
    let (to_agent, from_agent) = ways.fold((false, false), |(t, f), c| (t || c, f || !c));
    let (_, to_agent_got) = counts(&r.client, &r.agent);
    let (agent_sent, to_client_got) = counts(&r.agent, &r.client);
    crate::explain::Evidence {
        test: crate::explain::Test::UdpStream {
            datagram: req.block,
            to_agent,
            from_agent,
        },
        received: to_agent_got + to_client_got,
        late: 0,
        timeout_ns: 0,
        agent: (!report_missing).then_some(crate::explain::Account {
            received: to_agent_got,
            answered: agent_sent,
        }),
    }
}

/// Gives this end's receivers the sender's counts (`client_sends`: whose indexes).
fn set_expected(
    lives: &[Live],
    sent: &UdpSent,
    req: &mtuperf_proto::msg::udp::UdpStreamRequest,
    client_sends: bool,
) {
    for (i, c) in sent.sent.iter().enumerate() {
        if req.client_sends_on(i as u32) == client_sends {
            if let Some(l) = lives.get(i) {
                l.expected.store(*c, Relaxed);
            }
        }
    }
}

/// The UDP stream kind (`stream --udp`).
#[derive(Debug, Clone, Copy, Default)]
pub struct UdpStream;

impl crate::kind::Measurement for UdpStream {
    type Config = UdpStreamConfig;
    type Result = UdpStreamResult;
    type Observer = dyn UdpObserver;
    type Handler = super::agent::UdpStreamHandler;
    const NAME: &'static str = "udp";

    fn run(
        &self,
        session: &Session,
        config: &UdpStreamConfig,
        stop: &Arc<AtomicBool>,
        obs: &dyn UdpObserver,
    ) -> Result<UdpStreamResult, EngineError> {
        run(session, config, stop, obs)
    }
}

crate::kind::outcome_of_fields!(UdpStreamResult);
