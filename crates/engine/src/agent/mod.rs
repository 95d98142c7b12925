//! The agent (`mtuperf serve`): listens for control and data connections, runs up
//! to `max_sessions` sessions at once, applies its limits to every request, and
//! never blocks a legitimate session on a slow, silent or hostile one (every read has
//! a timeout, connections in handshake are capped, each runs on its own thread).

mod conns;
mod handshake;
mod logrl;
mod pending;
mod registry;
mod session;

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_proto::auth::Key;
use mtuperf_proto::msg::Limits;
use socket2::{Domain, Socket, Type};

pub use registry::Registry;
pub use session::SessionCtx;

use crate::EngineError;

/// One line of the agent's log, formatted by the caller (text or JSON).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LogLine {
    pub level: &'static str,
    pub peer: Option<SocketAddr>,
    pub event: &'static str,
    pub message: String,
    /// The message's figures as named values (for JSON logs), with human names for
    /// enumerations ("udp", not "Udp").
    pub fields: serde_json::Map<String, serde_json::Value>,
}

/// The wire name of a serialisable enumeration value ("udp", "forward").
pub fn wire_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

pub type LogFn = Arc<dyn Fn(&LogLine) + Send + Sync>;

#[derive(Clone)]
pub struct AgentConfig {
    pub binds: Vec<SocketAddr>,
    pub key: Option<Key>,
    pub limits: Limits,
    /// Clients allowed to connect; empty means everyone.
    pub allow: Vec<IpNet>,
    /// Bound on the handshake (Hello, Auth) and on a data connection's Hello.
    pub handshake_timeout: Duration,
    /// Bound on a control session's silence between tests.
    pub idle_timeout: Duration,
    /// Connections accepted but not yet through their handshake; more are closed at once.
    pub max_pending: usize,
    /// Honour fault-injection hooks in requests (tests of the measurement only).
    pub test_hooks: bool,
    pub log: LogFn,
    /// Warnings per event are rate-limited (see `logrl`).
    limiter: Arc<logrl::LogLimiter>,
}

impl std::fmt::Debug for AgentConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConfig")
            .field("binds", &self.binds)
            .field("limits", &self.limits)
            .field("allow", &self.allow)
            .finish_non_exhaustive()
    }
}

impl AgentConfig {
    pub fn new(binds: Vec<SocketAddr>) -> AgentConfig {
        AgentConfig {
            binds,
            key: None,
            limits: Limits::default(),
            allow: Vec::new(),
            handshake_timeout: Duration::from_secs(5),
            idle_timeout: Duration::from_mins(2),
            max_pending: 1024,
            test_hooks: false,
            log: Arc::new(|_| {}),
            limiter: Arc::default(),
        }
    }

    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 @ IpAddr::V4(_) => v4,
        };
        self.allow.is_empty() || self.allow.iter().any(|n| n.contains(&ip))
    }

    /// Logs one line. Control characters in the message (which may quote what a peer
    /// sent) are escaped so no line can be forged; warnings are rate-limited per event.
    pub(crate) fn log(
        &self,
        level: &'static str,
        peer: Option<SocketAddr>,
        event: &'static str,
        message: String,
    ) {
        self.log_fields(level, peer, event, message, serde_json::Map::new());
    }

    /// [`Self::log`] with the message's figures as named fields.
    pub(crate) fn log_fields(
        &self,
        level: &'static str,
        peer: Option<SocketAddr>,
        event: &'static str,
        message: String,
        fields: serde_json::Map<String, serde_json::Value>,
    ) {
        if level == "warn" {
            match self.limiter.check(event, std::time::Instant::now()) {
                logrl::Verdict::Drop => return,
                logrl::Verdict::Emit { suppressed: 0 } => {}
                logrl::Verdict::Emit { suppressed } => (self.log)(&LogLine {
                    level,
                    peer: None,
                    event,
                    message: format!(
                        "{suppressed} more {event:?} warnings suppressed in the last {} s",
                        logrl::WINDOW.as_secs()
                    ),
                    fields: serde_json::Map::new(),
                }),
            }
        }
        let message = match mtuperf_proto::text::escape_control(&message) {
            std::borrow::Cow::Borrowed(_) => message,
            std::borrow::Cow::Owned(m) => m,
        };
        (self.log)(&LogLine {
            level,
            peer,
            event,
            message,
            fields,
        });
    }
}

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
            sock.bind(&(*addr).into())
                .and_then(|()| sock.listen(1024))
                .and_then(|()| sock.set_nonblocking(true))
                .map_err(|source| EngineError::Bind {
                    addr: *addr,
                    source,
                })?;
            listeners.push(sock.into());
        }
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

    /// Serves until `shutdown` is set; then stops accepting and lets running sessions
    /// see their sockets close.
    pub fn run(self, shutdown: &Arc<AtomicBool>) {
        let registry = Arc::new(Registry::new(self.config.limits.max_sessions));
        let pending = Arc::new(pending::Pending::default());
        let (cap, nofile) = conns::raise_nofile();
        let conns = conns::Conns::new(cap);
        for a in self.local_addrs() {
            self.config
                .log("info", None, "listen", format!("listening on {a}"));
        }
        self.config.log(
            "info",
            None,
            "limits",
            format!("at most {cap} connections at once (RLIMIT_NOFILE {nofile})"),
        );
        let mut threads = Vec::new();
        for listener in self.listeners {
            let shared = Shared {
                config: self.config.clone(),
                registry: registry.clone(),
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
        self.config
            .log("info", None, "shutdown", "agent stopped".to_string());
    }
}

/// What every connection thread shares.
#[derive(Clone)]
struct Shared {
    config: Arc<AgentConfig>,
    registry: Arc<Registry>,
    pending: Arc<pending::Pending>,
    conns: Arc<conns::Conns>,
    shutdown: Arc<AtomicBool>,
}

fn accept_loop(listener: &TcpListener, sh: &Shared) {
    let config = &sh.config;
    while !sh.shutdown.load(Ordering::Relaxed) {
        let (stream, peer) = match listener.accept() {
            Ok(x) => x,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(10));
                continue;
            }
            Err(e) => {
                config.log("warn", None, "accept", format!("accept failed: {e}"));
                thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if !config.allows(peer.ip()) {
            config.log("warn", Some(peer), "refused", "not in --allow list".into());
            handshake::refuse_not_allowed(stream, peer);
            continue;
        }
        let Some(guard) = sh.conns.enter() else {
            config.log(
                "warn",
                Some(peer),
                "refused",
                format!(
                    "connection cap reached: {} connections open, at most {} (half of RLIMIT_NOFILE beyond a headroom)",
                    sh.conns.live(),
                    sh.conns.cap()
                ),
            );
            handshake::refuse_busy_at_once(stream);
            continue;
        };
        if let Err(why) = sh.pending.enter(peer.ip(), config.max_pending) {
            config.log("warn", Some(peer), "refused", why.into());
            drop(stream);
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

fn handle_connection(stream: TcpStream, peer: SocketAddr, sh: &Shared, guard: conns::ConnGuard) {
    let _ = stream.set_nonblocking(false);
    let outcome = handshake::greet(stream, peer, &sh.config, &sh.registry, guard);
    sh.pending.leave(peer.ip());
    if let Some(ctx) = outcome {
        session::run(ctx, &sh.shutdown);
    }
}
