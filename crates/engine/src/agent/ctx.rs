//! The session's state, and its side of [`ServeCtx`]: what a test handler (stream,
//! rr, path, doctor, mesh) gets from its session, through the narrow trait that lives
//! below both the agent and the kinds.

use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mtuperf_proto::auth::Key;
use mtuperf_proto::msg::{AgentMsg, Limits, Refusal, CONNECTIONS_LIMIT};

use super::config::AgentConfig;
use super::conns::{ConnGuard, Reservation};
use super::pending::Allowance;
use super::registry::{DataConn, Registry};
use crate::control::Control;
use crate::serve::ServeCtx;
use crate::EngineError;

/// What a test handler gets: the control connection, the peer, the agent's
/// configuration and limits, and the data connections addressed to this session.
pub struct SessionCtx {
    pub control: Control,
    pub peer: SocketAddr,
    pub config: Arc<AgentConfig>,
    pub(super) registry: Arc<Registry>,
    pub(super) cookie: String,
    pub(super) data_rx: Receiver<DataConn>,
    /// This control connection's share of the agent's connection cap.
    pub(super) _conn: ConnGuard,
    /// The shares of the test's data connections (released when it ends).
    pub(super) data_conns: Mutex<Vec<ConnGuard>>,
    /// The connections promised to the test being served (released when it ends).
    pub(super) reserved: Mutex<Option<Reservation>>,
    /// Room in handshake for its data connections (released once it has them).
    pub(super) allowance: Mutex<Option<Allowance>>,
}

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl SessionCtx {
    /// Admits a test that will hold `n` connections (its data connections, and the
    /// agent's own toward the client): promises them out of the agent's connection
    /// cap, or refuses the test by name, saying how many are free, when they do not
    /// fit beside the tests already running. Ok(true): go on.
    fn reserve(&self, n: u32) -> Result<bool, EngineError> {
        match self.config.conns.reserve(n as usize) {
            Ok(r) => {
                *locked(&self.reserved) = Some(r);
                let ip = self.peer.ip();
                *locked(&self.allowance) = Some(self.config.pending.allow(ip, n as usize));
                Ok(true)
            }
            Err(no) => {
                self.config.log(
                    crate::agent::LogLevel::Warn,
                    Some(self.peer),
                    "admission",
                    format!(
                        "refused a test of {n} connections: {} free of the {} the agent admits to tests ({} promised to tests running, cap {} connections)",
                        no.free,
                        no.free + no.committed,
                        no.committed,
                        self.config.conns.cap()
                    ),
                );
                ServeCtx::refuse_limit(self, CONNECTIONS_LIMIT, u64::from(n), no.free as u64)
                    .map(|()| false)
            }
        }
    }

    /// The test is over: its connections' shares and its promise are given back.
    pub(super) fn end_test(&self) {
        locked(&self.data_conns).clear();
        *locked(&self.reserved) = None;
        *locked(&self.allowance) = None;
    }

    /// Waits for `n` data connections (any order); bounded by the handshake timeout
    /// per connection. Returns them sorted by index. Only while this waits does the
    /// registry take data connections for the session, each Hello once, `n` at most.
    fn accept(&self, n: u32) -> Result<Vec<TcpStream>, EngineError> {
        let mut guards = locked(&self.data_conns);
        guards.clear();
        // Left over from a test that gave up waiting: never handed to this one.
        while self.data_rx.try_recv().is_ok() {}
        self.registry.open_window(&self.cookie, n);
        let r = self.collect_data(n, &mut guards);
        self.registry.close_window(&self.cookie);
        *locked(&self.allowance) = None;
        r
    }

    fn collect_data(
        &self,
        n: u32,
        guards: &mut Vec<ConnGuard>,
    ) -> Result<Vec<TcpStream>, EngineError> {
        let mut got: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
        let deadline = Instant::now() + self.config.handshake_timeout * 2;
        let mut count = 0;
        while count < n {
            let left = deadline.saturating_duration_since(Instant::now());
            let (index, stream, guard) =
                self.data_rx
                    .recv_timeout(left)
                    .map_err(|_| EngineError::Timeout {
                        what: "data connections".into(),
                        secs: (self.config.handshake_timeout * 2).as_secs(),
                    })?;
            if let Some(slot @ None) = got.get_mut(index as usize) {
                *slot = Some(stream);
                guards.push(guard);
                count += 1;
            }
        }
        Ok(got.into_iter().flatten().collect())
    }
}

impl ServeCtx for SessionCtx {
    fn control(&self) -> &Control {
        &self.control
    }

    fn peer(&self) -> SocketAddr {
        self.peer
    }

    fn limits(&self) -> &Limits {
        &self.config.limits
    }

    fn handshake_timeout(&self) -> Duration {
        self.config.handshake_timeout
    }

    fn idle_timeout(&self) -> Duration {
        self.config.idle_timeout
    }

    fn test_hooks(&self) -> bool {
        self.config.test_hooks
    }

    fn key(&self) -> Option<&Key> {
        self.config.key.as_ref()
    }

    fn agent_cpus(&self) -> Option<&[u32]> {
        self.config.cpus.as_deref()
    }

    fn refuse(&self, refusal: Refusal) -> Result<(), EngineError> {
        self.config.counters.refused(&refusal);
        self.control.send(&AgentMsg::Refused(refusal))
    }

    fn reserve_connections(&self, n: u32) -> Result<bool, EngineError> {
        self.reserve(n)
    }

    fn accept_data(&self, n: u32) -> Result<Vec<TcpStream>, EngineError> {
        self.accept(n)
    }

    fn test_bytes(&self, sent: u64, received: u64) {
        self.config.counters.test_bytes(sent, received);
    }

    fn log_at(
        &self,
        level: crate::serve::LogLevel,
        event: &'static str,
        message: crate::said::Said,
    ) {
        self.config.log(level, Some(self.peer), event, message);
    }

    fn log_fields(&self, event: &'static str, message: String, fields: serde_json::Value) {
        let fields = match fields {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        self.config.log_fields(
            crate::agent::LogLevel::Info,
            Some(self.peer),
            event,
            message,
            fields,
        );
    }
}
