use std::net::SocketAddr;

use mtuperf_proto::codec::FrameError;
use mtuperf_proto::msg::Refusal;

/// What can go wrong in a session. Setup failures abort; errors during a
/// measurement are recorded in the result instead.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot resolve {target}: {source}")]
    Resolve {
        target: String,
        source: std::io::Error,
    },
    #[error("cannot connect to agent at {addr}: {source}")]
    Connect {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot bind {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("timed out after {secs} s waiting for {what}")]
    Timeout { what: String, secs: u64 },
    /// The agent's address did not accept a connection in time.
    #[error("timed out after {secs} s waiting for connect to {addr}")]
    ConnectTimeout { addr: SocketAddr, secs: u64 },
    /// Something accepted the connection but sent no welcome in time.
    #[error("timed out after {secs} s waiting for the agent's welcome")]
    NoWelcome { secs: u64 },
    /// The peer closed the control connection while a message was awaited.
    #[error("protocol error: connection closed while waiting for {what}")]
    Closed { what: String },
    /// The peer sent a well-formed message, but not the one the protocol's state expects.
    #[error("protocol error: expected {expected}, got {got}")]
    Unexpected { expected: &'static str, got: String },
    #[error("{0}")]
    Refused(Refusal),
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("authentication: {0}")]
    Auth(String),
    #[error("agent error: {0}")]
    Agent(String),
    #[error("{op}: {source}")]
    Io { op: String, source: std::io::Error },
    /// A test's config outside what the protocol allows (caught before asking).
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    /// The connection was closed (or reset) before a single byte answered the hello.
    /// An mtuperf agent answers even when full ("busy"), unless it is so short of
    /// descriptors that it cannot write its refusal; other servers close too. The
    /// message says what was seen, not which of the two it was.
    #[error("{addr} {} the connection before sending a single byte in answer to the hello (an mtuperf agent too short of descriptors to answer even \"busy\" does this, and so can a server of another protocol); try again later, and check that an agent listens there", if *.reset { "reset" } else { "closed" })]
    ClosedBeforeWelcome { addr: SocketAddr, reset: bool },
    /// What answered the hello is something else (an SSH or HTTP server, iperf3).
    #[error("{addr} is not an mtuperf agent ({detail})")]
    NotAgent { addr: SocketAddr, detail: String },
    /// One of `rr --from`'s client hosts failed: which, and why.
    #[error("--from {host}: {source}")]
    FromHost {
        host: String,
        source: Box<EngineError>,
    },
}

impl EngineError {
    pub fn io(op: impl Into<String>, source: std::io::Error) -> EngineError {
        if matches!(
            source.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            return EngineError::Timeout {
                what: op.into(),
                secs: 0,
            };
        }
        EngineError::Io {
            op: op.into(),
            source,
        }
    }

    /// True when the agent could not be reached at all (as opposed to refusing).
    pub fn is_unreachable(&self) -> bool {
        if let EngineError::FromHost { source, .. } = self {
            return source.is_unreachable();
        }
        matches!(
            self,
            EngineError::Connect { .. }
                | EngineError::Resolve { .. }
                | EngineError::NotAgent { .. }
                | EngineError::ClosedBeforeWelcome { .. }
                | EngineError::ConnectTimeout { .. }
                | EngineError::NoWelcome { .. }
        )
    }

    pub fn is_refusal(&self) -> bool {
        if let EngineError::FromHost { source, .. } = self {
            return source.is_refusal();
        }
        matches!(self, EngineError::Refused(_) | EngineError::Auth(_))
    }
}

impl From<FrameError> for EngineError {
    fn from(e: FrameError) -> Self {
        EngineError::Protocol(e.to_string())
    }
}
