//! The `/metrics` listener on the address the operator gave (never a default one),
//! answering `GET /metrics` and nothing else, on a management network where anyone
//! may connect. It is bounded in every way a client could use to hurt the agent:
//!
//! - a request head (line and headers) of at most [`Bounds::max_head`] bytes, read
//!   within [`Bounds::head_time`] of the connection (slowloris); a larger one is
//!   answered 431 and closed, having cost 8 KiB;
//! - at most the metrics share of the agent's connection cap at once, counted inside
//!   that cap; when the share is full, the connection that has waited longest for
//!   its request head makes room for the new one;
//! - one request per connection (`Connection: close`), and the answer written within
//!   [`Bounds::write_time`]: a client that pipelines requests and never reads its
//!   answers is dropped at that deadline and never holds up another;
//! - accept(2) failing for want of descriptors (EMFILE) pauses accepting for a moment
//!   and never closes the listener: it accepts again as soon as descriptors are free;
//! - one thread, all sockets non-blocking, at most 20 encodings of the metrics a
//!   second (a flood's scrapes share the last one): a scrape flood costs the
//!   measurement no more than that thread.
//!
//! Why our own small server: tiny_http (used before) has none of these bounds and a
//! thread per connection; hyper bounds the head's size and read time but needs an
//! async runtime inside the agent, and a write deadline, the connection cap and the
//! accept loop's recovery would still be ours to write. What is left is the loop
//! below; the request head is parsed by httparse (hyper's parser).

mod conn;
#[cfg(test)]
mod tests;

use std::io::{ErrorKind, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags};

use self::conn::{Conn, End};
use super::Metrics;
use crate::agent::conns::Conns;
use crate::agent::AgentConfig;
use crate::{EngineError, Shutdown};

/// The limits of the metrics listener.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Request line and headers, bytes.
    pub max_head: usize,
    /// From accept to the end of the request head.
    pub head_time: Duration,
    /// From the request head to the last byte of the answer.
    pub write_time: Duration,
    /// After the answer, how long what the client still sends is read and dropped
    /// before the connection is closed.
    pub linger: Duration,
    /// Connections at once (the metrics share of the agent's connection cap).
    pub max_conns: usize,
}

/// The listener's limits. Prometheus' default scrape timeout is 10 s; a scrape's
/// request head is about 200 bytes, sent at once.
pub const BOUNDS: Bounds = Bounds {
    max_head: 8 * 1024,
    head_time: Duration::from_secs(5),
    write_time: Duration::from_secs(5),
    linger: Duration::from_secs(1),
    max_conns: 64,
};

/// How long accepting pauses after accept(2) failed for want of descriptors.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Encodings of the metrics per second at most; beyond them, scrapes share the last
/// one (under a flood only: every scrape of a normal rate gets a fresh encoding).
const ENCODES_PER_SECOND: u32 = 20;

/// Connections accepted per turn of the loop, so that accepting cannot starve the
/// connections already open.
const ACCEPT_BATCH: usize = 64;

/// A bound listener, ready to serve.
pub struct Listener {
    sock: TcpListener,
    agent: AgentConfig,
    bounds: Bounds,
}

impl Listener {
    /// Binds `addr` for the agent `agent`, whose connection cap its connections
    /// count in (its metrics share at most) and whose log it writes to.
    pub fn bind(addr: SocketAddr, agent: &AgentConfig) -> Result<Listener, EngineError> {
        let sock = TcpListener::bind(addr)
            .and_then(|s| s.set_nonblocking(true).map(|()| s))
            .map_err(|source| EngineError::Bind { addr, source })?;
        let bounds = Bounds {
            max_conns: agent.conns.metrics_share(),
            ..BOUNDS
        };
        Ok(Listener {
            sock,
            agent: agent.clone(),
            bounds,
        })
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.sock.local_addr().ok()
    }

    /// Serves on its own thread until `shutdown` is triggered.
    pub fn spawn(
        self,
        metrics: Arc<Metrics>,
        shutdown: Shutdown,
    ) -> std::io::Result<JoinHandle<()>> {
        let source = move || metrics.encode().into_bytes();
        let mut server = Server::new(self.sock, self.agent.conns.clone(), self.bounds);
        server.log = Some(self.agent);
        thread::Builder::new()
            .name("mtuperf-metrics".into())
            .spawn(move || server.run(&source, &shutdown))
    }
}

/// The loop's state: the listener, its open connections and the last encoding.
struct Server {
    listener: TcpListener,
    conns: Vec<Conn>,
    cap: Arc<Conns>,
    bounds: Bounds,
    paused_until: Option<Instant>,
    cached: Encodings,
    log: Option<AgentConfig>,
    /// How connections ended, for the tests.
    #[cfg(test)]
    ended: Vec<End>,
}

impl Server {
    fn new(listener: TcpListener, cap: Arc<Conns>, bounds: Bounds) -> Server {
        Server {
            listener,
            conns: Vec::new(),
            cap,
            bounds,
            paused_until: None,
            cached: Encodings::default(),
            log: None,
            #[cfg(test)]
            ended: Vec::new(),
        }
    }

    /// Turns until the stop. With no connection open the loop sleeps in poll(2) on
    /// the listener and the stop alone: an idle listener never wakes.
    fn run(&mut self, source: &dyn Fn() -> Vec<u8>, shutdown: &Shutdown) {
        while !shutdown.is_set() {
            self.turn(source, shutdown);
        }
    }

    /// A warning in the agent's log. Each event is rate-limited on its own, so that a
    /// flood of one kind (evictions) hides no other (accept failures).
    fn warn(&self, event: &'static str, peer: Option<SocketAddr>, message: String) {
        if let Some(a) = &self.log {
            a.log(crate::agent::LogLevel::Warn, peer, event, message);
        }
    }

    /// One turn: drop what is past its deadline, wait (until the next deadline, the
    /// stop or a ready socket), move the ready connections on, accept new ones.
    fn turn(&mut self, source: &dyn Fn() -> Vec<u8>, shutdown: &Shutdown) {
        let now = Instant::now();
        self.expire(now);
        if self.paused_until.is_some_and(|t| now >= t) {
            self.paused_until = None;
        }
        let listening = self.paused_until.is_none();
        let next = self
            .conns
            .iter()
            .map(|c| c.deadline(&self.bounds).0)
            .chain(self.paused_until)
            .min();
        let wait = next.map(|t| t.saturating_duration_since(now));
        let (listener_ready, ready) = self.wait_ready(listening, shutdown, wait);
        let now = Instant::now();
        let Server {
            conns,
            cached,
            bounds,
            ..
        } = self;
        let mut body = || cached.body(source, now);
        let mut ended = Vec::new();
        for (i, c) in conns.iter_mut().enumerate() {
            if ready.get(i).copied().unwrap_or(false) {
                if let Some(end) = c.progress(bounds, now, &mut body) {
                    ended.push((i, end));
                }
            }
        }
        for (i, end) in ended.into_iter().rev() {
            let c = self.conns.remove(i);
            self.ended(&c, end);
        }
        if listener_ready {
            self.accept(source, now);
        }
    }

    /// poll(2) on every connection, the listener (when `listening`) and the stop,
    /// at most `wait` (None: until one is ready).
    fn wait_ready(
        &self,
        listening: bool,
        shutdown: &Shutdown,
        wait: Option<Duration>,
    ) -> (bool, Vec<bool>) {
        let mut fds: Vec<PollFd<'_>> = self
            .conns
            .iter()
            .map(|c| PollFd::new(c.socket().as_fd(), c.interest()))
            .collect();
        let n = fds.len();
        if listening {
            fds.push(PollFd::new(self.listener.as_fd(), PollFlags::POLLIN));
        }
        if let Some(stop) = shutdown.fd() {
            fds.push(PollFd::new(stop, PollFlags::POLLIN));
        }
        // Rounded up: a deadline 0.4 ms away must not spin the loop.
        if poll(&mut fds, shutdown.poll_timeout(wait)).is_err() {
            // EINTR: look again at once; the deadlines are checked every turn.
            return (false, Vec::new());
        }
        let ready: Vec<bool> = fds
            .iter()
            .map(|f| f.revents().is_some_and(|r| !r.is_empty()))
            .collect();
        let listener_ready = listening && ready.get(n).copied().unwrap_or(false);
        (listener_ready, ready[..n].to_vec())
    }

    fn expire(&mut self, now: Instant) {
        let mut i = 0;
        while i < self.conns.len() {
            let (until, end) = self.conns[i].deadline(&self.bounds);
            if until <= now {
                let c = self.conns.remove(i);
                self.ended(&c, end);
            } else {
                i += 1;
            }
        }
    }

    fn ended(&mut self, c: &Conn, end: End) {
        #[cfg(test)]
        self.ended.push(end);
        let b = self.bounds;
        let why = match end {
            End::SlowHead => format!(
                "closed a connection that sent no complete request within {} s",
                b.head_time.as_secs_f64()
            ),
            End::SlowReader => format!(
                "closed a connection that did not read its answer within {} s",
                b.write_time.as_secs_f64()
            ),
            _ if c.route == Some(conn::Route::HeadTooLarge) => {
                format!("answered 431 to a request head over {} bytes", b.max_head)
            }
            _ => return,
        };
        self.warn("metrics_closed", Some(c.peer), why);
    }

    fn accept(&mut self, source: &dyn Fn() -> Vec<u8>, now: Instant) {
        for _ in 0..ACCEPT_BATCH {
            match self.listener.accept() {
                Ok((stream, peer)) => self.admit(stream, peer, source, now),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::ConnectionAborted
                    ) => {}
                // EMFILE, ENFILE, ENOBUFS: the listener stays; accepting resumes soon.
                Err(e) => {
                    self.paused_until = Some(now + ACCEPT_PAUSE);
                    self.warn(
                        "metrics_accept",
                        None,
                        format!(
                            "accept failed: {e}; accepting again in {} s",
                            ACCEPT_PAUSE.as_secs_f64()
                        ),
                    );
                    return;
                }
            }
        }
    }

    fn admit(
        &mut self,
        stream: TcpStream,
        peer: SocketAddr,
        source: &dyn Fn() -> Vec<u8>,
        now: Instant,
    ) {
        let Some(share) = self.cap.enter() else {
            busy_at_once(&stream);
            self.warn(
                "metrics_accept",
                Some(peer),
                format!(
                    "answered 503: the agent holds its cap of {} connections",
                    self.cap.cap()
                ),
            );
            return;
        };
        if self.conns.len() >= self.bounds.max_conns {
            self.evict(now);
        }
        let _ = stream.set_nonblocking(true);
        let mut c = Conn::new(stream, peer, share, now);
        let Server { cached, bounds, .. } = self;
        let mut body = || cached.body(source, now);
        match c.progress(bounds, now, &mut body) {
            Some(end) => self.ended(&c, end),
            None => self.conns.push(c),
        }
    }

    /// Makes room: drops the connection that has waited longest for its request
    /// head (or, when every one has its answer, the oldest).
    fn evict(&mut self, now: Instant) {
        let oldest = |head_only: bool| {
            self.conns
                .iter()
                .enumerate()
                .filter(|(_, c)| !head_only || c.in_head())
                .min_by_key(|(_, c)| c.accepted)
                .map(|(i, _)| i)
        };
        let Some(i) = oldest(true).or_else(|| oldest(false)) else {
            return;
        };
        let c = self.conns.remove(i);
        self.warn(
            "metrics_evict",
            Some(c.peer),
            format!(
                "closed a connection open {:.1} s to make room: at most {} at once",
                now.saturating_duration_since(c.accepted).as_secs_f64(),
                self.bounds.max_conns
            ),
        );
    }
}

/// The last encoding of the metrics and how many were made in the current second.
#[derive(Default)]
struct Encodings {
    last: Option<Arc<[u8]>>,
    window: Option<Instant>,
    made: u32,
}

impl Encodings {
    /// A fresh encoding, or the last one when this second's are used up.
    fn body(&mut self, source: &dyn Fn() -> Vec<u8>, now: Instant) -> Arc<[u8]> {
        if self
            .window
            .is_none_or(|w| now.saturating_duration_since(w) >= Duration::from_secs(1))
        {
            self.window = Some(now);
            self.made = 0;
        }
        match &self.last {
            Some(body) if self.made >= ENCODES_PER_SECOND => body.clone(),
            _ => {
                self.made += 1;
                let body: Arc<[u8]> = Arc::from(source());
                self.last = Some(body.clone());
                body
            }
        }
    }
}

/// Beyond the agent's connection cap: a 503 written without waiting, then closed
/// (the request read first when it has come: closing with unread data would reset
/// the connection before the client reads the answer).
fn busy_at_once(mut stream: &TcpStream) {
    let _ = stream.set_nonblocking(true);
    let body = "agent busy: at its connection cap; try again later\n";
    let _ = write!(
        stream,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 1024];
    let _ = std::io::Read::read(&mut stream, &mut sink);
}
