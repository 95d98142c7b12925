//! A requester: spreads the clients of one direction over its threads (one transport
//! each: clients are sharded, a thread never touches another's), runs the hot loop
//! (`hot`) on every thread while the ticker samples live intervals, and merges what
//! the threads counted. The client drives it toward the agent; under `--bidir` the
//! agent drives it toward the client's responder too.

mod hot;
mod recv;
mod slots;
mod ticker;

use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::Instant;

use mtuperf_proto::msg::rr::{RrCounts, RrProto, RrReverse};
use mtuperf_proto::msg::RrRequest;

use mtuperf_proto::host::ThreadsCpu;

pub use self::hot::Transport;
use self::hot::{Live, Plan, Shape};
use super::hist::{from_histogram, new_histogram};
use super::observer::RrObserver;
use super::RrInterval;
use crate::config::RrConfig;
use crate::tick::Running;
use crate::EngineError;

/// Descriptors a client keeps besides its data connections (standard streams, the
/// control connection, UDP sockets, epoll instances, the store, files of /proc).
const FD_HEADROOM: u64 = 128;

/// Raises this process's soft RLIMIT_NOFILE far enough for `req`'s TCP connections
/// (one per client, twice that under `--bidir`, whose responder accepts as many).
/// Fails, naming the limit, when the hard limit does not allow it.
pub fn ensure_nofile(req: &RrConfig) -> Result<(), EngineError> {
    if req.proto == RrProto::Udp {
        return Ok(());
    }
    let per_client = if req.bidir { 2 } else { 1 };
    let want = u64::from(req.clients) * per_client + FD_HEADROOM;
    let (soft, hard) = mtuperf_sys::limits::raise_nofile(want)
        .map_err(|e| EngineError::io("raising RLIMIT_NOFILE", e))?;
    if soft >= want {
        return Ok(());
    }
    Err(EngineError::NoFile {
        clients: req.clients,
        want,
        hard,
    })
}

/// A UDP socket at `ip` with large buffers (requester or responder).
pub fn udp_socket(ip: IpAddr) -> Result<UdpSocket, EngineError> {
    let addr = SocketAddr::new(ip, 0);
    let s = UdpSocket::bind(addr).map_err(|source| EngineError::Bind { addr, source })?;
    let r = socket2::SockRef::from(&s);
    let _ = r.set_recv_buffer_size(4 << 20);
    let _ = r.set_send_buffer_size(4 << 20);
    Ok(s)
}

/// Clients that share one UDP requester socket at most. Their blocks land in that
/// socket's receive buffer together: 128 × 8 KiB blocks fit a 4 MiB buffer, where
/// 1024 overflow it and turn into timeouts (the knee would be the socket's).
const CLIENTS_PER_UDP_SOCKET: u32 = 128;
/// At most this many sockets: the responder accepts as many registered ports.
const MAX_UDP_SOCKETS: u32 = crate::config::bounds::MAX_UDP_PORTS as u32;

/// How many UDP sockets `clients` need on `threads` threads: at least one per
/// thread, and one per `CLIENTS_PER_UDP_SOCKET` clients.
pub fn udp_socket_count(clients: u32, threads: u32) -> u32 {
    clients
        .div_ceil(CLIENTS_PER_UDP_SOCKET)
        .max(threads)
        .clamp(1, MAX_UDP_SOCKETS)
}

/// Connects each requester socket to the responder at `to`, non-blocking, and deals
/// them into at most `threads` transports (as even as possible, in order).
pub fn udp_transports(
    socks: Vec<UdpSocket>,
    to: SocketAddr,
    threads: u32,
) -> Result<Vec<Transport>, EngineError> {
    for s in &socks {
        s.connect(to)
            .and_then(|()| s.set_nonblocking(true))
            .map_err(|e| EngineError::io(format!("udp connect to {to}"), e))?;
    }
    let nt = (threads.max(1) as usize).min(socks.len().max(1));
    let mut out: Vec<Vec<UdpSocket>> = (0..nt).map(|_| Vec::new()).collect();
    let n = socks.len();
    for (i, s) in socks.into_iter().enumerate() {
        if let Some(g) = out.get_mut(i * nt / n.max(1)) {
            g.push(s);
        }
    }
    Ok(out
        .into_iter()
        .filter(|g| !g.is_empty())
        .map(Transport::Udp)
        .collect())
}

/// Deals one TCP connection per client (non-blocking) into at most `threads` groups.
pub fn tcp_transports(conns: Vec<TcpStream>, threads: u32) -> Vec<Transport> {
    let per = conns.len().div_ceil(threads.max(1) as usize).max(1);
    let mut it = conns.into_iter().peekable();
    let mut out = Vec::new();
    while it.peek().is_some() {
        out.push(Transport::Tcp(it.by_ref().take(per).collect()));
    }
    out
}

/// TCP, threads not placed by `--cpu`: thread `k` of `threads` runs on the k-th online
/// CPU when there are enough CPUs, so each connection's packets are processed on one
/// CPU; the agent's TCP workers follow them there (SO_INCOMING_CPU, `responder::steer`)
/// and a request, its block and both wakeups stay on that CPU. Measured in
/// BENCHMARKS.md §4 (TCP at 16 to 4096 clients). A failure leaves the thread unpinned.
fn pin_one_per_cpu(k: usize, threads: u32, pin: &crate::placement::Pinning) {
    let online = mtuperf_sys::affinity::online_cpus();
    if threads < 2 || threads as usize > online.len() {
        return;
    }
    if let Some(&c) = online.get(k) {
        pin.pin_own(c);
    }
}

/// What the requester needs besides its transports.
pub struct Drive<'a> {
    pub req: &'a RrRequest,
    /// Token the responder expects in every request.
    pub token: u64,
    pub timeout_ns: u64,
    pub verify: bool,
    /// Ends the run early (Ctrl-C, or the far end gone).
    pub stop: &'a AtomicBool,
    pub interval_ns: u64,
    /// Pins the requester threads and registers them for placement sampling.
    pub pin: Option<&'a crate::placement::Pinning>,
}

/// Runs the requester from `t0` (the caller's Go) until its end and drain; returns the
/// merged result (`wall_ns` = `t0` → last thread done) and the live intervals.
pub fn run(
    transports: Vec<Transport>,
    d: &Drive<'_>,
    t0: Instant,
    obs: &dyn RrObserver,
) -> (RrReverse, Vec<RrInterval>) {
    let nt = transports.len() as u32;
    let shares = shares(transports, d.req.clients);
    let tcp = matches!(shares.first(), Some((_, _, Transport::Tcp(_))));
    let lives: Vec<Live> = shares.iter().map(|_| Live::default()).collect();
    let running = Running::new(shares.len());
    let (outcomes, intervals) = thread::scope(|s| {
        let mut handles = Vec::new();
        for (k, ((base, clients, transport), live)) in shares.into_iter().zip(&lives).enumerate() {
            let running = &running;
            handles.push(s.spawn(move || {
                if let Some(pin) = d.pin {
                    // Pinned before registered: no placement sample predates the pin.
                    if tcp && pin.cpus().is_none() {
                        pin_one_per_cpu(k, nt, pin);
                    }
                    pin.enter(mtuperf_proto::placement::ThreadRole::Requester);
                }
                let out = hot::run(&d.plan(base, clients, transport, t0, live));
                running.finish_one();
                out
            }));
        }
        let interval = std::time::Duration::from_nanos(d.interval_ns);
        let intervals = ticker::run(t0, interval, &lives, &running, obs);
        let outs: Vec<_> = handles.into_iter().filter_map(|h| h.join().ok()).collect();
        (outs, intervals)
    });
    let wall_ns = t0.elapsed().as_nanos() as u64;
    (merge(outcomes, nt, wall_ns), intervals)
}

/// Each transport with the clients its thread drives, as even as possible, in
/// global id order: (first client id, clients, transport).
fn shares(transports: Vec<Transport>, clients: u32) -> Vec<(u32, u32, Transport)> {
    let nt = transports.len() as u32;
    let mut base = 0u32;
    let mut out = Vec::new();
    for (k, t) in transports.into_iter().enumerate() {
        let count = match &t {
            Transport::Tcp(v) => v.len() as u32,
            Transport::Udp(_) => clients / nt + u32::from((k as u32) < clients % nt),
        };
        out.push((base, count, t));
        base += count;
    }
    out
}

impl Drive<'_> {
    /// The load shape: open loop at the request's rate, else closed.
    fn shape(&self) -> Shape {
        match self.req.rate {
            Some(r) if r > 0 => Shape::Open {
                spacing_ns: (1_000_000_000 / r).max(1),
                clients: self.req.clients,
            },
            _ => Shape::Closed,
        }
    }

    /// One thread's plan: its clients from `base`, its transport, its live counts.
    fn plan<'a>(
        &'a self,
        base: u32,
        clients: u32,
        transport: Transport,
        t0: Instant,
        live: &'a Live,
    ) -> Plan<'a> {
        let req = self.req;
        Plan {
            base,
            clients,
            transport,
            shape: self.shape(),
            block: req.block,
            request: req.request,
            token: self.token,
            timeout_ns: self.timeout_ns,
            verify: self.verify,
            t0,
            end_ns: req.duration_ms * 1_000_000,
            stop: self.stop,
            live,
        }
    }
}

/// The threads' outcomes as one: counts and CPU summed, histograms merged, every
/// error kept.
fn merge(outcomes: Vec<hot::Outcome>, threads: u32, wall_ns: u64) -> RrReverse {
    let mut counts = RrCounts::default();
    let mut hist = new_histogram();
    let mut errors = Vec::new();
    let mut unanswered = 0;
    let mut cpu: Option<ThreadsCpu> = None;
    for o in outcomes {
        if let Some(c) = &o.cpu {
            cpu.get_or_insert_with(ThreadsCpu::default).add(c);
        }
        counts.add(&o.counts);
        let _ = hist.add(&o.hist);
        unanswered += o.unanswered;
        errors.extend(o.error);
    }
    RrReverse {
        counts,
        unanswered,
        errors,
        latency: from_histogram(&hist),
        threads,
        wall_ns,
        cpu,
    }
}
