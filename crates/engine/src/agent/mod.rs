//! The agent (`mtuperf serve`): listens for control and data connections, runs up
//! to `max_sessions` sessions at once, applies its limits to every request, and
//! never blocks a legitimate session on a slow, silent or hostile one (every read has
//! a timeout, connections in handshake are capped, each runs on its own thread).

pub mod config;
pub(crate) mod conns;
pub mod counters;
pub mod gate;
mod handlers;
mod handshake;
mod logrl;
pub(crate) mod pending;
mod registry;
mod session;

mod ctx;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::Full;
use socket2::{Domain, Socket, Type};

pub use crate::said::{Note, Said};
pub use config::{AgentConfig, LogFn, LogLevel, LogLine};
pub use counters::AgentCounters;
pub use gate::Gate;
pub use registry::Registry;

use crate::serve::Handlers;
use crate::{EngineError, Shutdown};

/// The listening socket's accept queue: one rr step's data connections at most.
const LISTEN_BACKLOG: i32 = 4096;

/// A bound agent, ready to run.
pub struct Agent {
    config: Arc<AgentConfig>,
    listeners: Vec<TcpListener>,
}

impl Agent {
    pub fn bind(config: AgentConfig) -> Result<Agent, EngineError> {
        let mut listeners = Vec::new();
        for addr in &config.binds {
            let sock =
                Socket::new(Domain::for_address(*addr), Type::STREAM, None).map_err(|source| {
                    EngineError::Bind {
                        addr: *addr,
                        source,
                    }
                })?;
            let _ = sock.set_reuse_address(true);
            if addr.is_ipv6() {
                let _ = sock.set_only_v6(true);
            }
            // A 4096-client rr step connects 4096 data connections back to back;
            // a backlog of 1024 overflowed, and each dropped SYN cost its connection
            // a 1 s retransmission (the kernel caps this at net.core.somaxconn).
            sock.bind(&(*addr).into())
                .and_then(|()| sock.listen(LISTEN_BACKLOG))
                .and_then(|()| sock.set_nonblocking(true))
                .map_err(|source| EngineError::Bind {
                    addr: *addr,
                    source,
                })?;
            listeners.push(sock.into());
        }
        let (cap, _) = conns::raise_nofile();
        config
            .conns
            .configure(cap, config.max_pending, config.limits.max_sessions as usize);
        Ok(Agent {
            config: Arc::new(config),
            listeners,
        })
    }

    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.listeners
            .iter()
            .filter_map(|l| l.local_addr().ok())
            .collect()
    }

    /// Serves until `shutdown` is triggered; then stops accepting and lets running
    /// sessions see their sockets close. An idle agent sleeps in poll(2) on its
    /// listeners and the stop: it wakes for nothing else.
    pub fn run(self, shutdown: &Shutdown) {
        let registry = Arc::new(Registry::new(self.config.limits.max_sessions));
        let handlers = Arc::new(handlers::all());
        let pending = self.config.pending.clone();
        let conns = self.config.conns.clone();
        let (cap, nofile) = (conns.cap(), conns::nofile());
        for a in self.local_addrs() {
            self.config
                .log(LogLevel::Info, None, "listen", format!("listening on {a}"));
        }
        self.config.log(
            LogLevel::Info,
            None,
            "limits",
            format!(
                "at most {cap} connections at once (RLIMIT_NOFILE {nofile}); tests may hold {} of them together, the rest is kept for handshakes, sessions and /metrics ({} at most)",
                conns.test_budget(),
                conns.metrics_share()
            ),
        );
        let mut threads = Vec::new();
        for listener in self.listeners {
            let shared = Shared {
                config: self.config.clone(),
                registry: registry.clone(),
                handlers: handlers.clone(),
                pending: pending.clone(),
                conns: conns.clone(),
                shutdown: shutdown.clone(),
            };
            threads.push(thread::spawn(move || accept_loop(&listener, &shared)));
        }
        for t in threads {
            let _ = t.join();
        }
        registry.close_all();
        self.config.log(
            LogLevel::Info,
            None,
            "shutdown",
            "agent stopped".to_string(),
        );
    }
}

/// What every connection thread shares.
#[derive(Clone)]
struct Shared {
    config: Arc<AgentConfig>,
    registry: Arc<Registry>,
    /// The request handlers sessions dispatch through.
    handlers: Arc<Handlers>,
    pending: Arc<pending::Pending>,
    conns: Arc<conns::Conns>,
    shutdown: Shutdown,
}

fn accept_loop(listener: &TcpListener, sh: &Shared) {
    let config = &sh.config;
    while !sh.shutdown.is_set() {
        let (stream, peer) = match listener.accept() {
            Ok(x) => x,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                wait_readable(listener, &sh.shutdown);
                continue;
            }
            Err(e) => {
                config.log(
                    LogLevel::Warn,
                    None,
                    "accept",
                    format!("accept failed: {e}"),
                );
                sh.shutdown
                    .wait_until(Instant::now() + Duration::from_millis(50));
                continue;
            }
        };
        if !config.allows(peer.ip()) {
            config.note(LogLevel::Warn, Some(peer), "refused", Note::NotAllowed);
            handshake::refuse_not_allowed(stream, peer, &config.counters);
            continue;
        }
        let Some(guard) = sh.conns.enter() else {
            config.log(
                LogLevel::Warn,
                Some(peer),
                "refused",
                format!(
                    "connection cap reached: {} connections open, at most {} (half of RLIMIT_NOFILE beyond a headroom)",
                    sh.conns.live(),
                    sh.conns.cap()
                ),
            );
            handshake::refuse_busy_at_once(stream, Full::Connections, &config.counters);
            continue;
        };
        if let Err(why) = sh.pending.enter(peer.ip(), config.max_pending) {
            config.log(
                LogLevel::Warn,
                Some(peer),
                "refused",
                format!("busy: {why}"),
            );
            handshake::refuse_busy_at_once(stream, Full::Handshakes, &config.counters);
            continue;
        }
        let sh2 = sh.clone();
        let spawned = thread::Builder::new()
            .name("mtuperf-conn".into())
            .stack_size(256 * 1024)
            .spawn(move || handle_connection(stream, peer, &sh2, guard));
        if spawned.is_err() {
            sh.pending.leave(peer.ip());
        }
    }
}

/// Sleeps until `listener` has a connection to accept or the stop comes, with no
/// timeout: an idle agent does not wake (it used to, twice a second, to look at a
/// shutdown flag; before that 100 times a second).
fn wait_readable(listener: &TcpListener, shutdown: &Shutdown) {
    use nix::poll::{poll, PollFd, PollFlags};
    use std::os::fd::AsFd;
    let mut fds = vec![PollFd::new(listener.as_fd(), PollFlags::POLLIN)];
    if let Some(stop) = shutdown.fd() {
        fds.push(PollFd::new(stop, PollFlags::POLLIN));
    }
    if poll(&mut fds, shutdown.poll_timeout(None)).is_err() {
        // EINTR (a signal): fall back to a short sleep so a storm of signals
        // cannot spin the loop.
        thread::sleep(Duration::from_millis(10));
    }
}

fn handle_connection(stream: TcpStream, peer: SocketAddr, sh: &Shared, guard: conns::ConnGuard) {
    let _ = stream.set_nonblocking(false);
    let outcome = handshake::greet(stream, peer, &sh.config, &sh.registry, guard);
    sh.pending.leave(peer.ip());
    if let Some(ctx) = outcome {
        session::run(ctx, &sh.handlers, sh.shutdown.flag());
    }
}
