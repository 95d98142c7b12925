//! Typed control messages. A control connection opens with `Hello` → `Welcome`
//! (→ `Auth` → `AuthOk` when the agent holds a key), then carries one test at a time:
//! a request, `Ready`, `Go`, live `Interval`s, and a final report. Unknown message
//! types and unknown fields are rejected.

pub mod doctor;
pub mod mesh;
pub mod path;
pub mod rr;
pub mod stream;
pub mod udp;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::host::{HostIdentity, IfaceInfo};
use crate::PROTOCOL_VERSION;

// The refusal types live in their own leaf (below `failed` and `interrupt`, which
// carry them inside other messages); here they are where the messages are.
pub use crate::refusal::{
    CpuLimit, Full, PeerAuth, Refusal, CONNECTIONS_LIMIT, MAX_REFUSAL_CPUS, MAX_REFUSAL_TEXT,
};

pub use doctor::{DoctorReply, DoctorRequest};
pub use path::{PathOpen, PathProbeResult, PathReady, PathReverseProbe, PathServed};
pub use rr::{RrReady, RrRequest, RrServed};
pub use stream::{
    default_rx_coalesce_us, ConnReport, Direction, EndReport, IntervalSample, StreamLimit,
    StreamReady, StreamRequest, DEFAULT_RX_COALESCE_US, MAX_INTERVALS, MAX_RX_COALESCE_US,
    MAX_RX_POLL_US, MIN_INTERVAL_MS, RX_COALESCE_BELOW_BLOCK,
};

/// Identifies mtuperf in a Hello, so a stray client is told apart from a version skew.
pub const MAGIC: &str = "mtuperf";

/// What a new TCP connection to the agent is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Role {
    /// A control connection that will run tests.
    Control,
    /// A data connection of an accepted test, tied to its session by the cookie.
    /// `tag` is the session-keyed tag of (cookie, index, the Hello's nonce) when the
    /// session is authenticated; the agent accepts each nonce once, only while a test
    /// waits for its data connections, and only as many as the test asked for.
    Data {
        cookie: String,
        index: u32,
        tag: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hello {
    pub magic: String,
    pub version: u16,
    pub software: String,
    /// Hex of 16 random bytes (the client's challenge).
    pub nonce: String,
    pub role: Role,
}

impl Hello {
    pub fn new(nonce: [u8; 16], role: Role) -> Hello {
        Hello {
            magic: MAGIC.into(),
            version: PROTOCOL_VERSION,
            software: concat!("mtuperf ", env!("CARGO_PKG_VERSION")).into(),
            nonce: hex::encode(nonce),
            role,
        }
    }
}

/// What the agent allows one client to ask for; sent in `Welcome`, enforced on request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub max_sessions: u32,
    pub max_duration_ms: u64,
    pub max_streams: u32,
    /// Bits per second one test may offer (stream pacing, rr open-loop rate × block).
    pub max_rate_bps: u64,
    pub max_workers: u32,
    pub max_clients: u32,
    pub max_block: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_sessions: 4,
            max_duration_ms: 3_600_000,
            max_streams: 128,
            max_rate_bps: 400_000_000_000,
            max_workers: 64,
            max_clients: 4096,
            max_block: 16 * 1024 * 1024,
        }
    }
}

/// The agent's answer to a control Hello. Before the client has authenticated it
/// carries only what authentication needs: an agent that holds a key tells nothing
/// about its host, software or limits to a peer that has not proved it holds the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Welcome {
    pub version: u16,
    /// Hex of 16 random bytes (the agent's challenge).
    pub nonce: String,
    /// Present when the agent holds a key: hex HMAC proving it (mutual authentication).
    pub agent_proof: Option<String>,
    /// An open agent (no key) gives the session cookie and its details at once; a
    /// keyed agent gives both in `AuthOk`.
    pub cookie: Option<String>,
    pub info: Option<AgentInfo>,
}

/// What an agent tells an admitted client about itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentInfo {
    pub software: String,
    pub host: HostIdentity,
    pub capabilities: Vec<String>,
    pub limits: Limits,
    /// The client's address as the agent sees it.
    pub peer: String,
}

/// Messages from a client to an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMsg {
    Hello(Hello),
    /// Hex HMAC answering the agent's challenge.
    Auth {
        proof: String,
    },
    Stream(StreamRequest),
    Rr(RrRequest),
    PathOpen(PathOpen),
    PathReverseProbe(PathReverseProbe),
    Doctor(DoctorRequest),
    /// A UDP datagram stream (`stream --udp`).
    UdpStream(udp::UdpStreamRequest),
    /// The client's senders are done: what they sent on each index.
    UdpSent(udp::UdpSent),
    /// Mesh discovery: the agent's interfaces and addresses.
    Discover(mesh::DiscoverRequest),
    /// Mesh: run a test from this agent toward another agent.
    ThirdParty(mesh::ThirdPartyRequest),
    /// Mesh: the agent's kernel counters now (protocol 11).
    Counters(mesh::CountersRequest),
    /// Start the accepted test now.
    Go,
    /// Stop the running test early (Ctrl-C); the agent still sends its report.
    Stop,
    /// Asks for an immediate `Ack` (round-trip time through the agent).
    Ping,
    /// End of the session.
    Bye,
}

impl ClientMsg {
    /// The message's name on the wire (its `type`: "stream", "path_open").
    pub fn name(&self) -> &'static str {
        match self {
            ClientMsg::Hello(_) => "hello",
            ClientMsg::Auth { .. } => "auth",
            ClientMsg::Stream(_) => "stream",
            ClientMsg::Rr(_) => "rr",
            ClientMsg::PathOpen(_) => "path_open",
            ClientMsg::PathReverseProbe(_) => "path_reverse_probe",
            ClientMsg::Doctor(_) => "doctor",
            ClientMsg::UdpStream(_) => "udp_stream",
            ClientMsg::UdpSent(_) => "udp_sent",
            ClientMsg::Discover(_) => "discover",
            ClientMsg::ThirdParty(_) => "third_party",
            ClientMsg::Counters(_) => "counters",
            ClientMsg::Go => "go",
            ClientMsg::Stop => "stop",
            ClientMsg::Ping => "ping",
            ClientMsg::Bye => "bye",
        }
    }
}

/// Messages from an agent to a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum AgentMsg {
    Welcome(Box<Welcome>),
    AuthOk {
        cookie: String,
        info: Box<AgentInfo>,
    },
    Refused(Refusal),
    StreamReady(StreamReady),
    RrReady(RrReady),
    PathReady(PathReady),
    /// Every data connection of the test is connected.
    DataReady,
    /// One live interval of the agent's side.
    Interval(IntervalSample),
    StreamDone(Box<EndReport>),
    RrDone(Box<RrServed>),
    PathProbeResult(PathProbeResult),
    /// End of a path session: what the responder answered and ignored.
    PathServed(PathServed),
    DoctorReply(Box<DoctorReply>),
    UdpStreamReady(udp::UdpStreamReady),
    /// The agent's senders are done: what they sent on each index.
    UdpSent(udp::UdpSent),
    /// One live interval of the agent's side of a UDP stream.
    UdpInterval(Box<udp::UdpInterval>),
    UdpStreamDone(Box<udp::UdpEndReport>),
    Discovery(Box<mesh::Discovery>),
    ThirdPartyDone(Box<mesh::ThirdPartyResult>),
    Counters(Box<mesh::NodeCounters>),
    /// Acknowledges a message that needs no other answer.
    Ack,
    /// The agent failed while running an accepted test.
    Error {
        message: String,
    },
    /// A third-party test's peer agent `peer` refused the agent asked (protocol 19):
    /// the refusal passed on typed, checked for size as it is decoded
    /// ([`AgentMsg::check_peer_refused`]).
    PeerRefused {
        peer: String,
        refusal: Refusal,
    },
}

impl AgentMsg {
    /// Checks a decoded [`AgentMsg::PeerRefused`]'s sizes: the peer at most
    /// [`MAX_REFUSAL_TEXT`] bytes, the refusal as [`Refusal::check`]. Other messages
    /// pass.
    pub fn check_peer_refused(&self) -> Result<(), String> {
        match self {
            AgentMsg::PeerRefused { peer, refusal } => {
                if peer.len() > MAX_REFUSAL_TEXT {
                    return Err(format!(
                        "a refusing peer's name of {} bytes, at most {MAX_REFUSAL_TEXT} allowed",
                        peer.len()
                    ));
                }
                refusal.check()
            }
            _ => Ok(()),
        }
    }
}

/// The agent's view of its own side of a test's traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentPathInfo {
    /// Interface the agent's route back to the client leaves through.
    pub iface: Option<IfaceInfo>,
    /// The agent's address on that path.
    pub addr: String,
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::{ClientMsg, Hello, Role};

    /// A peer's refusal passed on (protocol 19) round-trips typed, and its decode check
    /// refuses a long peer name, a long text, a long CPU list and a nesting too deep;
    /// what `fit` cuts passes.
    #[test]
    fn a_peer_refusal_is_checked_for_size_on_decode() {
        use super::{AgentMsg, CpuLimit, PeerAuth, Refusal, MAX_REFUSAL_CPUS, MAX_REFUSAL_TEXT};
        let msg = |peer: &str, refusal: Refusal| AgentMsg::PeerRefused {
            peer: peer.into(),
            refusal,
        };
        let busy = Refusal::Busy {
            active: Some(3),
            max: Some(3),
            full: super::Full::Sessions,
        };
        let ok = msg("10.0.0.2:7878", busy);
        let json = serde_json::to_string(&ok).unwrap();
        assert!(
            json.starts_with(r#"{"type":"peer_refused","peer":"10.0.0.2:7878""#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<AgentMsg>(&json).unwrap(), ok);
        assert_eq!(ok.check_peer_refused(), Ok(()));
        let long = "a".repeat(MAX_REFUSAL_TEXT + 1);
        let nested = |inner: Refusal| Refusal::PeerNotAuthenticated {
            peer: "p".into(),
            why: PeerAuth::Refused {
                refusal: Box::new(inner),
            },
        };
        let bad = [
            (msg(&long, Refusal::AuthFailed), "peer's name"),
            (
                msg(
                    "p",
                    Refusal::BadRequest {
                        detail: long.clone(),
                    },
                ),
                "refusal's text",
            ),
            (
                msg(
                    "p",
                    Refusal::AgentCpus {
                        asked: vec![0; MAX_REFUSAL_CPUS + 1],
                        allowed: Vec::new(),
                        limit: CpuLimit::Online,
                    },
                ),
                "CPU list",
            ),
            (msg("p", nested(nested(Refusal::AuthFailed))), "nested"),
            (
                msg("p", nested(Refusal::NotAllowed { peer: long.clone() })),
                "refusal's text",
            ),
        ];
        for (m, why) in &bad {
            let e = m.check_peer_refused().unwrap_err();
            assert!(e.contains(why), "{e}");
            let AgentMsg::PeerRefused { refusal, .. } = m else {
                unreachable!()
            };
            assert_eq!(refusal.fit().check(), Ok(()), "{m:?}");
        }
        assert_eq!(AgentMsg::Ack.check_peer_refused(), Ok(()));
    }

    /// `ClientMsg::name` is the message's `type` on the wire.
    #[test]
    fn a_client_message_name_is_its_wire_type() {
        for msg in [
            ClientMsg::Hello(Hello::new([0; 16], Role::Control)),
            ClientMsg::Auth { proof: "00".into() },
            ClientMsg::PathOpen(super::path::PathOpen {
                client_port: 1,
                reverse_port: None,
            }),
            ClientMsg::PathReverseProbe(super::path::PathReverseProbe {
                seq: 1,
                size: 1500,
                wait_ms: 0,
            }),
            ClientMsg::Doctor(super::doctor::DoctorRequest {
                profile: "rac".into(),
                sample_ms: 0,
            }),
            ClientMsg::UdpSent(super::udp::UdpSent { sent: vec![1] }),
            ClientMsg::Discover(super::mesh::DiscoverRequest {}),
            ClientMsg::Counters(super::mesh::CountersRequest::default()),
            ClientMsg::Go,
            ClientMsg::Stop,
            ClientMsg::Ping,
            ClientMsg::Bye,
        ] {
            let json = serde_json::to_value(&msg).unwrap();
            assert_eq!(json["type"], msg.name(), "{msg:?}");
        }
    }
}
