//! The client's responder of a `--bidir` run: the agent requests blocks from it while
//! the client requests blocks from the agent. Same serving code as the agent's
//! (`responder::udp` / `responder::tcp`) and the same rules: over UDP it answers only datagrams
//! from the agent's IP and the requester ports the agent registered in its ready
//! message, carrying the token the client chose for this step; over TCP it takes only
//! connections from the agent's IP whose first 8 bytes are that token. It runs on
//! its own thread from before Go until the agent's report arrived (or the run failed:
//! dropping it stops and joins it).

use std::io::{ErrorKind, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::rr::{RrBidir, RrHooks, RrProto};
use mtuperf_proto::msg::RrRequest;

use super::responder::{Serving, Tally};
use crate::EngineError;

/// How long an accepted reverse TCP connection may take to send its token.
const HELLO_TIMEOUT: Duration = Duration::from_secs(2);

/// The bound, not yet serving, responder socket.
pub enum Listen {
    Udp(UdpSocket),
    Tcp(TcpListener),
}

/// Binds the responder at `ip` and describes it for the request (token fresh per step).
/// Over UDP its socket is sized for `clients` requests in flight, as the agent's
/// responder; when it cannot be, `warn` is told.
pub fn bind(
    ip: IpAddr,
    proto: RrProto,
    clients: u32,
    timeout: Duration,
    verify: bool,
    warn: impl FnOnce(&str),
) -> Result<(Listen, RrBidir), EngineError> {
    let listen = match proto {
        RrProto::Udp => {
            let s = super::requester::udp_socket(ip)?;
            if let Some(w) = super::responder::udp::hold_requests(&s, clients) {
                warn(&w);
            }
            let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
            Listen::Udp(s)
        }
        RrProto::Tcp => {
            let addr = SocketAddr::new(ip, 0);
            Listen::Tcp(
                TcpListener::bind(addr).map_err(|source| EngineError::Bind { addr, source })?,
            )
        }
    };
    let port = match &listen {
        Listen::Udp(s) => s.local_addr(),
        Listen::Tcp(l) => l.local_addr(),
    }
    .map_err(|e| EngineError::io("responder local address", e))?
    .port();
    let bidir = RrBidir {
        port,
        token: u64::from_be_bytes(crate::stamp::random_bytes()),
        timeout_ns: timeout.as_nanos() as u64,
        verify,
    };
    Ok((listen, bidir))
}

/// The running responder; dropping it stops and joins it.
pub struct Responder {
    shared: Arc<Serving>,
    handle: Option<JoinHandle<Tally>>,
}

impl Responder {
    /// Starts serving the agent at `agent` (UDP: only from `ports`) until `finish`, at
    /// most `max` from now.
    pub fn start(
        listen: Listen,
        req: &RrRequest,
        bidir: &RrBidir,
        agent: IpAddr,
        ports: Vec<u16>,
        workers: u32,
        max: Duration,
    ) -> Responder {
        let shared = Arc::new(Serving::new(
            bidir.token,
            req.block,
            req.request,
            RrHooks::default(),
        ));
        let sh = shared.clone();
        let clients = req.clients;
        let handle = thread::spawn(move || {
            let deadline = Instant::now() + max;
            match listen {
                Listen::Udp(s) => super::responder::udp::serve(
                    &s,
                    workers,
                    &sh,
                    (agent, &ports),
                    clients,
                    deadline,
                ),
                Listen::Tcp(l) => {
                    let (conns, rejected) = accept(&l, agent, sh.token, clients, &sh, deadline);
                    let mut t = super::responder::tcp::serve(
                        conns,
                        workers,
                        &sh,
                        deadline,
                        &mtuperf_sys::affinity::online_cpus(),
                    );
                    t.rejected += rejected;
                    t
                }
            }
        });
        Responder {
            shared,
            handle: Some(handle),
        }
    }

    /// Stops serving and returns what was served.
    pub fn finish(mut self) -> Tally {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.handle
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Accepts the agent's `n` reverse connections: from `agent` only, each opening with
/// the 8-byte token; anything else is closed and counted rejected.
fn accept(
    l: &TcpListener,
    agent: IpAddr,
    token: u64,
    n: u32,
    shared: &Serving,
    deadline: Instant,
) -> (Vec<TcpStream>, u64) {
    let mut conns = Vec::new();
    let mut rejected = 0;
    if l.set_nonblocking(true).is_err() {
        return (conns, rejected);
    }
    while conns.len() < n as usize
        && !shared.stop.load(Ordering::Relaxed)
        && Instant::now() < deadline
    {
        let (mut s, from) = match l.accept() {
            Ok(x) => x,
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                thread::sleep(Duration::from_millis(2));
                continue;
            }
            Err(_) => break,
        };
        let mut hello = [0u8; 8];
        let ok = super::responder::same_ip(from.ip(), agent)
            && s.set_nonblocking(false).is_ok()
            && s.set_read_timeout(Some(HELLO_TIMEOUT)).is_ok()
            && s.read_exact(&mut hello).is_ok()
            && u64::from_be_bytes(hello) == token
            && s.set_read_timeout(None).is_ok();
        if ok {
            conns.push(s);
        } else {
            rejected += 1;
        }
    }
    (conns, rejected)
}
