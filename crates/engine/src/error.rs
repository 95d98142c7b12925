use std::net::SocketAddr;

use mtuperf_proto::codec::FrameError;
use mtuperf_proto::failed::Failed;
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
    /// The agent refused. Its words, which name the flag or limit that decides it,
    /// are report's (`mtuperf_report::error::engine_error`); this text names none.
    #[error("refused by the agent ({0:?})")]
    Refused(Refusal),
    /// The agent asked ran a third-party test, and its peer agent `peer` refused it
    /// (worded by report as [`EngineError::Refused`] is).
    #[error("agent error: the peer agent {peer} refused ({refusal:?})")]
    PeerRefused { peer: String, refusal: Refusal },
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("authentication: {0}")]
    Auth(AuthFailure),
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
    /// One of `rr --from`'s client hosts failed: which, and why. Report words it
    /// for people, naming the flag.
    #[error("from {host}: {source}")]
    FromHost {
        host: String,
        source: Box<EngineError>,
    },
    /// Mesh discovery: no node's agent answered; `first` is the first node's error (a
    /// refusal typed, worded by report).
    #[error("agent error: no node's agent could be asked for its interfaces (first: {})", failed_text(.first))]
    NoNodeAnswered { first: Failed },
    /// Mesh discovery found no network that two of the nodes share, within what the
    /// user selected.
    #[error("no network is shared by two of the nodes ({within})")]
    NoSharedNetwork { within: Within },
    /// Too few file descriptors for `clients` TCP clients: `want` needed, the hard
    /// limit (RLIMIT_NOFILE) is `hard`.
    #[error("{clients} TCP clients need {want} file descriptors, but the hard limit (RLIMIT_NOFILE) is {hard}")]
    NoFile { clients: u32, want: u64, hard: u64 },
}

/// Why the keyed handshake failed on this end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthFailure {
    /// A key was given, but the agent holds none (an open agent).
    #[error("a key was given but the agent does not authenticate; refusing to talk to an unauthenticated agent")]
    AgentOpen,
    /// The agent's proof does not match this end's key.
    #[error("the agent could not prove it holds the same key (wrong key on one side)")]
    AgentProof,
}

/// Which networks a mesh looked among: every one, those inside the given prefixes,
/// or the cluster_interconnect subnets of an oifcfg listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Within {
    All,
    Nets(Vec<ipnet::IpNet>),
    Oifcfg,
}

impl std::fmt::Display for Within {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Within::All => f.write_str("any network"),
            Within::Nets(nets) => {
                let nets: Vec<String> = nets.iter().map(ToString::to_string).collect();
                write!(f, "within {}", nets.join(", "))
            }
            Within::Oifcfg => f.write_str("cluster_interconnect subnets of the oifcfg listing"),
        }
    }
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

/// A kept failure's text without report's words: a refusal as its Debug form.
fn failed_text(f: &Failed) -> String {
    match f {
        Failed::Error { text } => text.clone(),
        f => format!("{f:?}"),
    }
}

impl EngineError {
    /// The error as a result keeps it: a refusal (the agent's, or its peer's) typed,
    /// any other error as its text.
    pub fn failed(&self) -> Failed {
        match self {
            EngineError::Refused(r) => Failed::Refused { refusal: r.clone() },
            EngineError::PeerRefused { peer, refusal } => Failed::PeerRefused {
                peer: peer.clone(),
                refusal: refusal.clone(),
            },
            e => Failed::error(e.to_string()),
        }
    }
}

impl From<FrameError> for EngineError {
    fn from(e: FrameError) -> Self {
        EngineError::Protocol(e.to_string())
    }
}
