//! The agent's requester of a `--bidir` run: while serving the client's requests, the
//! agent requests blocks of the same sizes, with the same clients and load shape,
//! from the client's responder, and reports what it measured in `RrServed::reverse`.
//! It sends only to the control connection's IP, at the port the client named, with
//! the client's token (in every UDP request; as an 8-byte hello on each TCP
//! connection). It starts at the agent's Go and ends on its own schedule (duration +
//! drain), or when the abort flag is set.

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::rr::{RrBidir, RrProto, RrReverse};
use mtuperf_proto::msg::RrRequest;

use super::observer::Quiet;
use super::requester::{self, Drive, Transport};
use crate::EngineError;

/// The requester's threads: one per core, at most one per client.
pub fn threads(clients: u32) -> u32 {
    let cores = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    cores.clamp(1, clients.max(1))
}

/// UDP: binds the requester sockets at `local` now, so their ports go into the ready
/// message and the client's responder can register them before traffic flows.
pub fn udp_sockets(
    local: IpAddr,
    clients: u32,
    threads: u32,
) -> Result<Vec<UdpSocket>, EngineError> {
    (0..requester::udp_socket_count(clients, threads))
        .map(|_| requester::udp_socket(local))
        .collect()
}

/// The ports of `socks`, for the ready message.
pub fn ports(socks: &[UdpSocket]) -> Vec<u16> {
    socks
        .iter()
        .filter_map(|s| s.local_addr().ok().map(|a| a.port()))
        .collect()
}

/// TCP: opens one connection per client to the client's listener, each opening with
/// the token.
pub fn tcp_connect(
    peer: IpAddr,
    local: IpAddr,
    b: &RrBidir,
    clients: u32,
    timeout: Duration,
) -> Result<Vec<TcpStream>, EngineError> {
    let to = SocketAddr::new(peer, b.port);
    (0..clients)
        .map(|_| {
            let mut c = crate::client::connect_tcp(to, Some(local), timeout, |s| {
                let _ = s.set_tcp_nodelay(true);
                super::no_time_wait(s);
            })?;
            c.write_all(&b.token.to_be_bytes())
                .and_then(|()| c.set_nonblocking(true))
                .map_err(|e| EngineError::io(format!("reverse connection to {to}"), e))?;
            Ok(c)
        })
        .collect()
}

/// The requester's transports, ready for Go.
pub fn transports(
    proto: RrProto,
    udp: Vec<UdpSocket>,
    tcp: Vec<TcpStream>,
    peer: IpAddr,
    b: &RrBidir,
    threads: u32,
) -> Result<Vec<Transport>, EngineError> {
    match proto {
        RrProto::Udp => requester::udp_transports(udp, SocketAddr::new(peer, b.port), threads),
        RrProto::Tcp => Ok(requester::tcp_transports(tcp, threads)),
    }
}

/// The running requester.
pub struct Requester {
    pub abort: Arc<AtomicBool>,
    handle: JoinHandle<RrReverse>,
}

impl Requester {
    /// Starts requesting now (the agent's Go).
    pub fn start(transports: Vec<Transport>, req: &RrRequest, b: RrBidir) -> Requester {
        let abort = Arc::new(AtomicBool::new(false));
        let (ab, req) = (abort.clone(), req.clone());
        let handle = thread::spawn(move || {
            let d = Drive {
                req: &req,
                token: b.token,
                timeout_ns: b.timeout_ns,
                verify: b.verify,
                stop: &ab,
                interval_ns: 1_000_000_000,
                // The reverse direction's threads are not pinned (--agent-cpu pins
                // the serving threads).
                pin: None,
            };
            requester::run(transports, &d, Instant::now(), &Quiet).0
        });
        Requester { abort, handle }
    }

    /// Waits for the requester's own end until `until`, then aborts it (it stops at
    /// its next poll, within 10 ms).
    pub fn finish(self, until: Instant) -> RrReverse {
        while !self.handle.is_finished() && Instant::now() < until {
            thread::sleep(Duration::from_millis(5));
        }
        self.abort.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}
