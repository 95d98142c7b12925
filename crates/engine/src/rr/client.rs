//! The client's side of an rr run: registers its UDP ports (or opens one TCP data
//! connection per client), spreads the clients over a few threads, samples live
//! intervals, and joins both ends' accounts into one result.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::rr::RrProto;
use mtuperf_proto::msg::{AgentMsg, ClientMsg, RrReady, RrRequest};

use super::hist::{new_histogram, Latency};
use super::load::{self, Live, Plan, Shape, Transport};
use super::{RrClientEnd, RrCounts, RrInterval, RrResult};
use crate::client::Session;
use crate::sampler::Sampler;
use crate::{unix_ms, EngineError};

/// What to run (one load step).
#[derive(Debug, Clone)]
pub struct RrParams {
    /// `udp_ports` is filled in by `run`.
    pub request: RrRequest,
    /// A UDP request unanswered this long is counted lost and re-sent.
    pub timeout: Duration,
    pub verify: bool,
    /// Client threads (None: one per core, at most one per client).
    pub threads: Option<u32>,
    pub interval: Duration,
}

/// Progress callbacks.
pub trait RrObserver: Sync {
    fn ready(&self, _ready: &RrReady) {}
    fn interval(&self, _sample: &RrInterval) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl RrObserver for Quiet {}

fn expect_ready(m: AgentMsg) -> Result<RrReady, EngineError> {
    match m {
        AgentMsg::RrReady(r) => Ok(r),
        other => Err(EngineError::Protocol(format!(
            "expected rr ready, got {other:?}"
        ))),
    }
}

fn udp_sockets(session: &Session, n: u32) -> Result<Vec<UdpSocket>, EngineError> {
    let ip = session.bind().unwrap_or(session.agent.ip());
    (0..n)
        .map(|_| {
            let addr = SocketAddr::new(ip, 0);
            let s = UdpSocket::bind(addr).map_err(|source| EngineError::Bind { addr, source })?;
            let r = socket2::SockRef::from(&s);
            let _ = r.set_recv_buffer_size(4 << 20);
            let _ = r.set_send_buffer_size(1 << 20);
            Ok(s)
        })
        .collect()
}

/// Runs one rr step on an open session. `stop` (Ctrl-C) ends it early.
pub fn run(
    session: &Session,
    params: &RrParams,
    stop: &Arc<AtomicBool>,
    obs: &dyn RrObserver,
) -> Result<RrResult, EngineError> {
    let mut req = params.request.clone();
    let cores = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let nthreads = params.threads.unwrap_or(cores).clamp(1, req.clients.max(1));
    let udp = if req.proto == RrProto::Udp {
        let socks = udp_sockets(session, nthreads)?;
        req.udp_ports = socks
            .iter()
            .filter_map(|s| s.local_addr().ok().map(|a| a.port()))
            .collect();
        socks
    } else {
        req.udp_ports = Vec::new();
        Vec::new()
    };
    let started_unix_ms = unix_ms();
    let ready = expect_ready(session.request(&ClientMsg::Rr(req.clone()), "rr ready")?)?;
    obs.ready(&ready);
    let sampler = Sampler::toward(session.agent.ip());
    let mut transports = Vec::new();
    if udp.is_empty() {
        let mut conns = Vec::new();
        for i in 0..req.clients {
            let c = session.open_data(i, |s| {
                let _ = s.set_tcp_nodelay(true);
            })?;
            c.set_nonblocking(true)
                .map_err(|e| EngineError::io("data connection", e))?;
            conns.push(c);
        }
        match session
            .control
            .recv::<AgentMsg>(Some(session.reply_timeout()), "data ready")?
        {
            AgentMsg::DataReady => {}
            AgentMsg::Refused(r) => return Err(EngineError::Refused(r)),
            AgentMsg::Error { message } => return Err(EngineError::Agent(message)),
            other => {
                return Err(EngineError::Protocol(format!(
                    "expected data ready, got {other:?}"
                )))
            }
        }
        let per = req.clients.div_ceil(nthreads) as usize;
        let mut it = conns.into_iter().peekable();
        while it.peek().is_some() {
            transports.push(Transport::Tcp(it.by_ref().take(per).collect()));
        }
    } else {
        let to = SocketAddr::new(session.agent.ip(), ready.port);
        for s in udp {
            s.connect(to)
                .and_then(|()| s.set_nonblocking(true))
                .map_err(|e| EngineError::io(format!("udp connect to {to}"), e))?;
            transports.push(Transport::Udp(s));
        }
    }
    let shape = match req.rate {
        Some(r) if r > 0 => Shape::Open {
            spacing_ns: (1_000_000_000 / r).max(1),
            clients: req.clients,
        },
        _ => Shape::Closed,
    };
    // Clients per thread: as even as possible, in global id order.
    let nt = transports.len() as u32;
    let mut plans_meta = Vec::new();
    let mut base = 0u32;
    for (k, t) in transports.into_iter().enumerate() {
        let count = match &t {
            Transport::Tcp(v) => v.len() as u32,
            Transport::Udp(_) => req.clients / nt + u32::from((k as u32) < req.clients % nt),
        };
        plans_meta.push((base, count, t));
        base += count;
    }
    let lives: Vec<Live> = plans_meta.iter().map(|_| Live::default()).collect();
    let t0 = Instant::now();
    let before = sampler.snapshot(t0);
    session.control.send(&ClientMsg::Go)?;
    let end_ns = req.duration_ms * 1_000_000;
    let remaining = AtomicUsize::new(plans_meta.len());
    let (outcomes, intervals) = thread::scope(|s| {
        let mut handles = Vec::new();
        for ((base, clients, transport), live) in plans_meta.into_iter().zip(&lives) {
            let (stop, remaining, req) = (&**stop, &remaining, &req);
            handles.push(s.spawn(move || {
                let plan = Plan {
                    base,
                    clients,
                    transport,
                    shape,
                    block: req.block,
                    request: req.request,
                    token: ready.token,
                    timeout_ns: params.timeout.as_nanos() as u64,
                    verify: params.verify,
                    t0,
                    end_ns,
                    stop,
                    live,
                };
                let out = load::run(&plan);
                remaining.fetch_sub(1, Ordering::AcqRel);
                out
            }));
        }
        let intervals = super::ticker::run(t0, params.interval, &lives, &remaining, obs);
        let outs: Vec<_> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        (outs, intervals)
    });
    let wall_ns = t0.elapsed().as_nanos() as u64;
    let after = sampler.snapshot(t0);
    session.control.send(&ClientMsg::Stop)?;
    let agent = match session.control.recv::<AgentMsg>(
        Some(session.reply_timeout() + Duration::from_secs(10)),
        "the agent's rr report",
    )? {
        AgentMsg::RrDone(r) => *r,
        AgentMsg::Error { message } => return Err(EngineError::Agent(message)),
        other => {
            return Err(EngineError::Protocol(format!(
                "expected rr done, got {other:?}"
            )))
        }
    };
    let mut counts = RrCounts::default();
    let mut hist = new_histogram();
    let mut errors = Vec::new();
    let mut unanswered = 0;
    for o in outcomes {
        counts.add(&o.counts);
        let _ = hist.add(&o.hist);
        unanswered += o.unanswered;
        errors.extend(o.error);
    }
    Ok(RrResult {
        workers: ready.workers,
        target: session.agent.to_string(),
        local_addr: session
            .control
            .local()
            .map(|a| a.to_string())
            .unwrap_or_default(),
        started_unix_ms,
        client_host: mtuperf_sys::host::identity(crate::SOFTWARE),
        agent_host: session.welcome.host.clone(),
        client: RrClientEnd {
            counts,
            unanswered,
            errors,
            latency: Latency::from_histogram(&hist),
            threads: nt,
            timeout_ns: params.timeout.as_nanos() as u64,
            verify: params.verify,
            before,
            after,
            iface: sampler.iface.clone(),
            wall_ns,
            intervals,
        },
        agent,
        interrupted: stop.load(Ordering::Relaxed),
        request: req,
    })
}
