//! The client's side of a UDP stream: registers its sockets' ports, asks the agent,
//! runs its half, relays the agent's live intervals and its sender counts, and
//! assembles both ends' reports into one result.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::udp::{UdpEndReport, UdpInterval, UdpSent, UdpStreamReady};
use mtuperf_proto::msg::{AgentMsg, ClientMsg, StreamLimit};

use super::data::DRAIN;
use super::phase::{self, Conn};
use super::plan::{Live, Plan};
use super::{datagrams_per_index, sockets, UdpStreamResult, IDLE, LIVE_DEFAULT};
use crate::client::Session;
use crate::config::UdpStreamConfig;
use crate::placement::{Pinning, Watch};
use crate::sampler::Sampler;
use crate::stamp::unix_ms;
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
    obs.ready(&ready);
    let sampler = Sampler::toward(session.agent.ip());
    let agent_max = match session.info.limits.max_duration_ms {
        0 => Duration::from_hours(24),
        ms => Duration::from_millis(ms),
    };
    let planned = match req.limit {
        StreamLimit::Time { ms } => Duration::from_millis(ms).min(agent_max),
        StreamLimit::Bytes { .. } => agent_max,
    };
    let lives: Vec<Live> = (0..n).map(|_| Live::new()).collect();
    let conns: Vec<Conn> = phase::conns(socks, |i| req.client_sends_on(i), req.io, req.block);
    let has_senders = conns.iter().any(|c| c.sending);
    let every = config.interval.unwrap_or(LIVE_DEFAULT);

    let t0 = Instant::now();
    let before = sampler.snapshot(t0);
    let plan = Plan {
        token: ready.token,
        block: req.block,
        rate_bps: ready.rate_bps / u64::from(req.streams),
        count: datagrams_per_index(&req),
        t0,
        end: t0 + planned,
        hard_end: t0 + planned + DRAIN + IDLE,
        halt: AtomicBool::new(false),
        abort: AtomicBool::new(false),
        pin: Pinning::new(config.cpus.clone()),
    };
    let watch = Watch::start(&plan.pin, sampler.iface.as_ref().map(|i| i.name.as_str()));
    let hard_end = plan.hard_end + IDLE + session.reply_timeout();
    let (tx, rx) = mpsc::channel::<Result<AgentMsg, EngineError>>();
    let reader = {
        let control = session.control.clone();
        thread::spawn(move || loop {
            let m = control.recv_by::<AgentMsg>(Some(hard_end), "the agent's udp report");
            let last = !matches!(m, Ok(AgentMsg::UdpInterval(_) | AgentMsg::UdpSent(_)));
            if tx.send(m).is_err() || last {
                break;
            }
        })
    };
    session.control.send(&ClientMsg::Go)?;
    let stop_sent = AtomicBool::new(false);
    let send_stop = || {
        if !stop_sent.swap(true, Relaxed) {
            let _ = session.control.send(&ClientMsg::Stop);
        }
    };
    let local_done = AtomicBool::new(false);
    let mut agent_intervals: Vec<UdpInterval> = Vec::new();
    let mut report: Option<Result<UdpEndReport, EngineError>> = None;
    let (plan, lives, req_r) = (&plan, &lives, &req);
    let (report_r, agent_iv, local_done_r, send_stop_r) =
        (&mut report, &mut agent_intervals, &local_done, &send_stop);
    let (client_conns, client_intervals) = thread::scope(|s| {
        let relay = s.spawn(move || {
            let (report, local_done, send_stop) = (report_r, local_done_r, send_stop_r);
            let mut done_at: Option<Instant> = None;
            loop {
                if stop.load(Relaxed) {
                    plan.halt.store(true, Relaxed);
                    send_stop();
                }
                let m = match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(m) => m,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if local_done.load(Relaxed) {
                            let at = *done_at.get_or_insert_with(Instant::now);
                            if at.elapsed() >= session.reply_timeout() + IDLE {
                                break;
                            }
                        }
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                };
                match m {
                    Ok(AgentMsg::UdpInterval(i)) => {
                        obs.interval(End::Agent, &i);
                        agent_iv.push(*i);
                    }
                    Ok(AgentMsg::UdpSent(sent)) => set_expected(lives, &sent, req_r, false),
                    Ok(AgentMsg::UdpStreamDone(r)) => {
                        *report = Some(Ok(*r));
                        break;
                    }
                    Ok(AgentMsg::Error { message }) => {
                        *report = Some(Err(EngineError::Agent(message)));
                        break;
                    }
                    Ok(other) => {
                        *report = Some(Err(EngineError::Unexpected {
                            expected: "a udp interval or report",
                            got: format!("{other:?}"),
                        }));
                        break;
                    }
                    Err(e) => {
                        *report = Some(Err(e));
                        break;
                    }
                }
            }
            if !matches!(*report, Some(Ok(_))) {
                plan.halt.store(true, Relaxed);
                plan.abort.store(true, Relaxed);
            }
        });
        let out = phase::run(
            conns,
            plan,
            lives,
            &sampler,
            every,
            |i| obs.interval(End::Client, i),
            |sent| {
                if has_senders {
                    let _ = session.control.send(&ClientMsg::UdpSent(UdpSent { sent }));
                }
            },
        );
        send_stop();
        local_done.store(true, Relaxed);
        let _ = relay.join();
        out
    });
    let client_placement = Some(watch.finish());
    let after = sampler.snapshot(t0);
    let wall_ns = t0.elapsed().as_nanos() as u64;
    if !matches!(report, Some(Ok(_))) {
        session.control.shutdown();
    }
    let _ = reader.join();

    let mut reasons = Vec::new();
    if stop.load(Relaxed) {
        reasons.push("stopped by a signal (Ctrl-C or SIGTERM)".to_string());
    }
    let report_missing = !matches!(report, Some(Ok(_)));
    let agent = match report {
        Some(Ok(r)) => r,
        other => {
            reasons.push(match other {
                Some(Err(e)) => format!("the agent's report never came: {e}"),
                _ => "the agent's report never came".into(),
            });
            UdpEndReport {
                intervals: agent_intervals,
                interrupted: true,
                ..UdpEndReport::default()
            }
        }
    };
    for (end, conns) in [("this end", &client_conns), ("the agent", &agent.conns)] {
        if let Some(c) = conns.iter().find(|c| c.error.is_some()) {
            reasons.push(format!(
                "{end}, socket {}: {}",
                c.index,
                c.error.as_deref().unwrap_or_default()
            ));
        }
    }
    let interrupted = !reasons.is_empty() || agent.interrupted;
    let mut result = UdpStreamResult {
        paced_rate_bps: ready.rate_bps,
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
        client: UdpEndReport {
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
        client_placement,
        diagnosis: None,
    };
    let e = evidence(&result, report_missing);
    let failed = report_missing || lost_a_direction(&result);
    if failed && obs.explain_failure() && !stop.load(Relaxed) {
        result.diagnosis = Some(crate::explain::diagnose(session, &e));
    }
    Ok(result)
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

impl crate::kind::Outcome for UdpStreamResult {
    fn target(&self) -> &str {
        &self.target
    }

    fn interrupt_reason(&self) -> Option<&str> {
        self.interrupt_reason.as_deref()
    }
}
