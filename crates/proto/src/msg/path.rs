//! Messages of the `path` test (path MTU verification in both directions).

use serde::{Deserialize, Serialize};

use super::AgentPathInfo;

/// Opens a probing session: the agent registers the client's UDP ports at the control
/// connection's address and answers only there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathOpen {
    /// The port forward probes come from (and their acks go to).
    pub client_port: u16,
    /// The port reverse probes go to (and their acks come from), so that the two
    /// directions' searches run at once on sockets of their own (None: `client_port`).
    pub reverse_port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathReady {
    /// The agent's UDP port for forward probes.
    pub port: u16,
    /// Token every probe must carry.
    pub token: u64,
    pub path: AgentPathInfo,
}

/// Asks the agent to send one DF probe of `size` bytes (IP packet size) to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathReverseProbe {
    pub seq: u64,
    pub size: u32,
    /// How long the agent waits for the client's ack or an error before answering.
    pub wait_ms: u32,
}

/// Largest reverse probe the agent sends (IP packet size).
pub const MAX_PROBE_SIZE: u32 = 65_535;
/// Reverse probes one session may ask for.
pub const MAX_REVERSE_PROBES: u64 = 2_000;
/// Longest wait for one reverse probe's ack.
pub const MAX_WAIT_MS: u32 = 2_000;

/// What the agent saw when it sent a reverse probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathProbeResult {
    pub seq: u64,
    pub sent: bool,
    /// EMSGSIZE from the agent's own interface or route, with the MTU it gave.
    pub local_mtu: Option<u32>,
    /// ICMP frag-needed / packet-too-big from a router on the way back.
    pub icmp_from: Option<String>,
    pub icmp_mtu: Option<u32>,
    /// The client acknowledged the probe over UDP.
    pub acked: bool,
}

/// The agent's account of a path session, its answer to the client's `Stop`.
/// Datagrams the responder ignored are counted by reason: probes that arrive from
/// another address or port than the one registered (a NAT or a multi-homed client)
/// are never answered, and without these counts would look like a black hole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathServed {
    /// Forward probes acknowledged.
    pub answered: u64,
    /// Datagrams from an address or port other than the registered client's.
    pub other_source: u64,
    /// Datagrams from the client's address with another session's token.
    pub bad_token: u64,
    /// Datagrams too short or not mtuperf's.
    pub malformed: u64,
}
