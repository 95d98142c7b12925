//! The client's side of an rr run: registers its UDP ports (or opens one TCP data
//! connection per client), spreads the clients over a few threads, samples live
//! intervals, and joins both ends' accounts into one result.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::interrupt::{Interrupt, Stalled};
use mtuperf_proto::msg::rr::{RrBidir, RrProto, RrReverse};
use mtuperf_proto::msg::{ClientMsg, RrReady, RrRequest, RrServed};

use super::bidir_responder::{self, Listen, Responder};
use super::observer::RrObserver;
use super::requester::{self, udp_socket, Drive, Transport};
use super::{RrBidirResult, RrClientEnd, RrInterval, RrResult};
use crate::client::phase::{self as client_phase, HostSeen, HostWindow};
use crate::client::Session;
use crate::config::RrConfig;
use crate::explain;
use crate::placement::Pinning;
use crate::sampler::Sampler;
use crate::stall::{self, Span};
use crate::stamp::unix_ms;
use crate::EngineError;

/// Runs one rr step on an open session. `stop` (Ctrl-C) ends it early.
pub fn run(
    session: &Session,
    params: &RrConfig,
    stop: &Arc<AtomicBool>,
    obs: &dyn RrObserver,
) -> Result<RrResult, EngineError> {
    let nthreads = threads(params);
    let local_ip = session.bind().unwrap_or(session.agent.ip());
    requester::ensure_nofile(params)?;
    let local = Local::bind(params, local_ip, nthreads, obs)?;
    // The wire request, whole: the config with the ports just bound.
    let req = params.wire(local.udp_ports(), local.bidir);
    let started_unix_ms = unix_ms();
    let ready: RrReady = session.ask(&ClientMsg::Rr(req.clone()), "rr ready")?;
    obs.ready(&ready);
    // Serves the agent's reverse requests from before Go until its report arrived.
    let responder = local
        .listen
        .and_then(|l| responder(session, params, &req, &ready, l, nthreads, obs));
    let sampler = Sampler::toward(session.agent.ip());
    let transports = transports(session, &req, &ready, local.udp, nthreads)?;
    let pin = Pinning::new(params.cpus.clone());
    let window = HostWindow::open(&sampler, &pin);
    session.control.send(&ClientMsg::Go)?;
    let drive = Drive {
        req: &req,
        token: ready.token,
        timeout_ns: params.timeout.as_nanos() as u64,
        verify: params.verify,
        stop,
        interval_ns: params.interval.as_nanos() as u64,
        pin: Some(&pin),
    };
    let (mine, intervals) = requester::run(transports, &drive, window.t0, obs);
    let host = window.close();
    let mut reasons = client_phase::reasons(stop);
    let mut agent = report(session, &req, params, host.t0, &mut reasons);
    let reverse = reverse(responder, agent.as_mut(), &reasons)?;
    let m = Measured {
        started_unix_ms,
        workers: ready.workers,
        mine,
        intervals,
        host,
        agent,
        reverse,
        reasons,
    };
    Ok(assemble(session, params, req, m, stop))
}

/// Requester threads: `--threads`, else one per core, within the clients.
fn threads(params: &RrConfig) -> u32 {
    let cores = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    params
        .threads
        .unwrap_or(cores)
        .clamp(1, params.clients.max(1))
}

/// What this end binds before it asks: the UDP requester sockets (their ports go
/// in the request) and, under `--bidir`, the responder's socket or listener.
struct Local {
    udp: Vec<UdpSocket>,
    listen: Option<Listen>,
    bidir: Option<RrBidir>,
}

impl Local {
    fn bind(
        params: &RrConfig,
        local_ip: IpAddr,
        nthreads: u32,
        obs: &dyn RrObserver,
    ) -> Result<Local, EngineError> {
        let udp = if params.proto == RrProto::Udp {
            (0..requester::udp_socket_count(params.clients, nthreads))
                .map(|_| udp_socket(local_ip))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        let (listen, bidir) = if params.bidir {
            let (l, b) = bidir_responder::bind(
                local_ip,
                params.proto,
                params.clients,
                params.timeout,
                params.verify,
                |w| obs.warning(w),
            )?;
            (Some(l), Some(b))
        } else {
            (None, None)
        };
        Ok(Local { udp, listen, bidir })
    }

    fn udp_ports(&self) -> Vec<u16> {
        self.udp
            .iter()
            .filter_map(|s| s.local_addr().ok().map(|a| a.port()))
            .collect()
    }
}

/// Starts this end's responder of the reverse direction (`--bidir`), which serves
/// until the agent's report has come.
fn responder(
    session: &Session,
    params: &RrConfig,
    req: &RrRequest,
    ready: &RrReady,
    listen: Listen,
    nthreads: u32,
    obs: &dyn RrObserver,
) -> Option<Responder> {
    let b = req.bidir.as_ref()?;
    let max = Duration::from_millis(req.duration_ms)
        + params.timeout.max(Duration::from_secs(1))
        + session.reply_timeout()
        + Duration::from_secs(30);
    let r = Responder::start(
        listen,
        req,
        b,
        session.agent.ip(),
        ready.reverse_ports.clone(),
        nthreads,
        max,
    );
    obs.responder(listen_addr(session, b));
    Some(r)
}

/// Where this end's responder listens, as the agent reaches it.
fn listen_addr(session: &Session, b: &RrBidir) -> SocketAddr {
    SocketAddr::new(session.bind().unwrap_or(session.agent.ip()), b.port)
}

/// The requester's transports: the UDP sockets connected to the agent's port, or
/// one TCP data connection per client once the agent has them all.
fn transports(
    session: &Session,
    req: &RrRequest,
    ready: &RrReady,
    udp: Vec<UdpSocket>,
    nthreads: u32,
) -> Result<Vec<Transport>, EngineError> {
    if !udp.is_empty() {
        let to = SocketAddr::new(session.agent.ip(), ready.port);
        return requester::udp_transports(udp, to, nthreads);
    }
    let conns = client_phase::open_data(session, req.clients, |s| {
        let _ = s.set_tcp_nodelay(true);
        super::no_time_wait(s);
    })?;
    for c in &conns {
        c.set_nonblocking(true)
            .map_err(|e| EngineError::io("data connection", e))?;
    }
    Ok(requester::tcp_transports(conns, nthreads))
}

/// The Stop, then the agent's report (None: why it is missing is in `reasons`).
fn report(
    session: &Session,
    req: &RrRequest,
    params: &RrConfig,
    t0: Instant,
    reasons: &mut Vec<Interrupt>,
) -> Option<RrServed> {
    // The agent reports after its own requester drained (bidir): allow for the drain.
    let mut wait = session.reply_timeout() + params.timeout;
    if req.bidir.is_some() {
        wait += Duration::from_secs(10);
    }
    client_phase::stop_then_report(session, wait, "the agent's rr report", t0)
        .map_err(|why| reasons.push(why))
        .ok()
}

/// The reverse direction's result (`--bidir`): the agent's requester and this end's
/// responder. Taken out of the agent's report.
fn reverse(
    responder: Option<Responder>,
    agent: Option<&mut RrServed>,
    reasons: &[Interrupt],
) -> Result<Option<RrBidirResult>, EngineError> {
    let requester = agent.and_then(|a| a.reverse.take());
    let Some(r) = responder else {
        return Ok(None);
    };
    let responder = r.finish();
    match requester {
        Some(requester) => Ok(Some(RrBidirResult::new(requester, &responder))),
        None if reasons.is_empty() => Err(EngineError::Protocol(
            "the agent ran no reverse direction in a bidirectional test".into(),
        )),
        None => Ok(Some(RrBidirResult::new(RrReverse::default(), &responder))),
    }
}

/// What one step measured: this end's requester, intervals and host, the agent's
/// report (None: missing), the reverse direction, and the reasons so far.
struct Measured {
    started_unix_ms: i64,
    workers: u32,
    mine: RrReverse,
    intervals: Vec<RrInterval>,
    host: HostSeen,
    agent: Option<RrServed>,
    reverse: Option<RrBidirResult>,
    reasons: Vec<Interrupt>,
}

/// Both ends' accounts as one result, with the reasons it is marked interrupted
/// and, when it failed, the likely cause.
fn assemble(
    session: &Session,
    params: &RrConfig,
    req: RrRequest,
    m: Measured,
    stop: &AtomicBool,
) -> RrResult {
    let mut reasons = m.reasons;
    let mine = m.mine;
    if let Some(first) = mine.errors.first() {
        reasons.push(Interrupt::Requester {
            error: first.clone(),
        });
    }
    let gaps = quiet(&m.intervals, &req, params.interval);
    reasons.extend(stall::describe(&gaps, Stalled::Blocks));
    let report_missing = m.agent.is_none();
    let starved = mine.counts.blocks == 0 && mine.counts.requests_sent > 0;
    let failed = starved || report_missing || !gaps.is_empty();
    let host = m.host;
    let mut result = RrResult {
        workers: m.workers,
        target: session.agent.to_string(),
        local_addr: client_phase::local_addr(session),
        started_unix_ms: m.started_unix_ms,
        client_host: client_phase::client_host(),
        agent_host: session.info.host.clone(),
        client: RrClientEnd {
            counts: mine.counts,
            unanswered: mine.unanswered,
            errors: mine.errors,
            latency: mine.latency,
            threads: mine.threads,
            cpu: mine.cpu,
            timeout_ns: params.timeout.as_nanos() as u64,
            verify: params.verify,
            before: host.before,
            after: host.after,
            iface: host.iface,
            wall_ns: mine.wall_ns,
            intervals: m.intervals,
            placement: Some(host.placement),
        },
        agent: m.agent.unwrap_or_default(),
        reverse: m.reverse,
        interrupted: !reasons.is_empty(),
        interrupted_by: reasons,
        request: req,
        from: Vec::new(),
        from_failed: Vec::new(),
        diagnosis: None,
    };
    result.diagnosis = crate::explain::when_failed(session, failed, params.explain, stop, || {
        evidence(&result, report_missing)
    });
    result
}

/// What a step that failed showed, for [`explain::diagnose`].
fn evidence(r: &RrResult, report_missing: bool) -> explain::Evidence {
    let q = &r.request;
    explain::Evidence {
        test: match q.proto {
            RrProto::Udp => explain::Test::RrUdp {
                block: q.block,
                request: q.request,
            },
            RrProto::Tcp => explain::Test::RrTcp,
        },
        received: r.client.counts.blocks,
        late: r.client.counts.late,
        timeout_ns: r.client.timeout_ns,
        agent: (!report_missing).then_some(explain::Account {
            received: r.agent.requests,
            answered: r.agent.responses,
        }),
    }
}

/// The stalls of a run's intervals: spans where no block arrived at all. A block that
/// came after its request had timed out is still an answer (the agent served it, late:
/// a queue past the knee, counted lost and late), so a retry storm is not a stall.
fn quiet(intervals: &[RrInterval], req: &RrRequest, interval: Duration) -> Vec<(u64, u64)> {
    let spans: Vec<Span> = intervals
        .iter()
        .map(|i| Span {
            start_ns: i.start_ns,
            end_ns: i.end_ns,
            moved: i.blocks + i.late > 0,
        })
        .collect();
    // An open loop slower than one request per second leaves quiet intervals by
    // design: only a silence of several request spacings is a stall there.
    let spacing_ns = req.rate.filter(|&r| r > 0).map_or(0, |r| 2_000_000_000 / r);
    stall::stalls(
        &spans,
        (interval.as_nanos() as u64).max(spacing_ns),
        req.duration_ms * 1_000_000,
    )
}

/// The rr kind: one load step on an open session.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rr;

impl crate::kind::Measurement for Rr {
    type Config = RrConfig;
    type Result = RrResult;
    type Observer = dyn RrObserver;
    type Handler = super::agent::RrHandler;
    const NAME: &'static str = "rr";

    fn run(
        &self,
        session: &Session,
        config: &RrConfig,
        stop: &Arc<AtomicBool>,
        obs: &dyn RrObserver,
    ) -> Result<RrResult, EngineError> {
        run(session, config, stop, obs)
    }
}

crate::kind::outcome_of_fields!(RrResult);

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn iv(k: u64, blocks: u64, late: u64) -> RrInterval {
        RrInterval {
            start_ns: k * S,
            end_ns: (k + 1) * S,
            blocks,
            lost: 40_000,
            late,
            mean_ns: (blocks > 0).then_some(150_000_000),
            max_ns: (blocks > 0).then_some(390_000_000),
        }
    }

    fn request() -> RrRequest {
        crate::config::RrConfig {
            time: Duration::from_secs(10),
            ..crate::config::RrConfig::default()
        }
        .wire(Vec::new(), None)
    }

    #[test]
    fn answers_later_than_the_timeout_are_no_stall() {
        // Issue 28's 4096-client UDP step: after the first second every block came
        // after its request had timed out (the agent answered all 403,591 requests),
        // so no block was "on time" for five seconds. That is loss, not a stall.
        let mut storm = vec![iv(0, 9498, 0)];
        storm.extend((1..6).map(|k| iv(k, 0, 38_000)));
        storm.extend((6..10).map(|k| iv(k, 30_000, 1_000)));
        assert!(quiet(&storm, &request(), Duration::from_secs(1)).is_empty());
        // Nothing at all for those five seconds is one.
        let mut silent = vec![iv(0, 9498, 0)];
        silent.extend((1..6).map(|k| iv(k, 0, 0)));
        silent.extend((6..10).map(|k| iv(k, 30_000, 0)));
        assert_eq!(
            quiet(&silent, &request(), Duration::from_secs(1)),
            vec![(S, 6 * S)]
        );
    }
}
