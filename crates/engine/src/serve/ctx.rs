//! The context a test handler gets from its session: the control connection, the
//! peer, the agent's limits, and the services that hold the agent's own state
//! (connection admission, data connections, log, counters). The agent's session
//! implements it; a test double implements it in tests.

use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use mtuperf_proto::auth::Key;
use mtuperf_proto::msg::{Limits, Refusal};

use crate::control::Control;
use crate::EngineError;

/// What a test handler may see and do of the session serving it.
pub trait ServeCtx {
    /// The session's control connection.
    fn control(&self) -> &Control;
    /// The client's address (the control connection's peer).
    fn peer(&self) -> SocketAddr;
    /// The agent's limits (`serve --max-*`).
    fn limits(&self) -> &Limits;
    /// Bound on a handshake, and (twice it) on the client's Go and data connections.
    fn handshake_timeout(&self) -> Duration;
    /// Bound on the session's silence between requests.
    fn idle_timeout(&self) -> Duration;
    /// Whether fault-injection hooks in requests are honoured (`serve --test-hooks`).
    fn test_hooks(&self) -> bool;
    /// The agent's key, when it holds one.
    fn key(&self) -> Option<&Key>;
    /// `serve --cpus`: the processor set serving threads may be pinned to (None:
    /// every online CPU).
    fn agent_cpus(&self) -> Option<&[u32]>;

    /// Sends a refusal to the client and counts it.
    fn refuse(&self, refusal: Refusal) -> Result<(), EngineError>;
    /// Admits a test that will hold `n` connections, or refuses it by name, saying
    /// how many are free. Ok(true): go on.
    fn reserve_connections(&self, n: u32) -> Result<bool, EngineError>;
    /// Waits (bounded) for the test's `n` data connections; sorted by index.
    fn accept_data(&self, n: u32) -> Result<Vec<TcpStream>, EngineError>;
    /// Counts the bytes a test moved (the agent's `/metrics`).
    fn test_bytes(&self, sent: u64, received: u64);
    /// Logs one line at `level` about this session's peer.
    fn log_at(&self, level: super::LogLevel, event: &'static str, message: crate::said::Said);
    /// Logs one info line with the message's figures as named fields (a JSON object).
    fn log_fields(&self, event: &'static str, message: String, fields: serde_json::Value);

    /// Logs one info line about this session's peer.
    fn log(&self, event: &'static str, message: String) {
        self.log_at(super::LogLevel::Info, event, message.into());
    }

    /// Logs one warning about this session's peer.
    fn warn(&self, event: &'static str, message: String) {
        self.log_at(super::LogLevel::Warn, event, message.into());
    }

    /// Refuses a request beyond a limit, naming the limit.
    fn refuse_limit(&self, limit: &str, requested: u64, allowed: u64) -> Result<(), EngineError> {
        self.refuse(Refusal::Limit {
            limit: limit.into(),
            requested,
            allowed,
        })
    }

    /// Refuses a malformed request, saying what is wrong.
    fn refuse_bad(&self, detail: String) -> Result<(), EngineError> {
        self.refuse(Refusal::BadRequest { detail })
    }

    /// Checks a request's `--agent-cpu` list against this agent's processor set
    /// (`serve --cpus`, else its online CPUs) and refuses it, naming the flag, the
    /// value, the allowed set and a hint, when outside. Ok(true): go on.
    fn check_cpus(&self, cpus: Option<&[u32]>) -> Result<bool, EngineError> {
        let Some(cpus) = cpus else {
            return Ok(true);
        };
        let online = mtuperf_sys::affinity::online_cpus();
        match crate::placement::check_agent_cpus(cpus, self.agent_cpus(), &online) {
            Ok(()) => Ok(true),
            Err(refusal) => self.refuse(refusal).map(|()| false),
        }
    }
}

/// The wire name of a serialisable enumeration value ("udp", "forward").
pub fn wire_name<T: serde::Serialize>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}
