//! Messages of the `path` test (path MTU verification in both directions).

use serde::{Deserialize, Serialize};

use super::AgentPathInfo;

/// Opens a probing session: the agent registers the client's UDP port at the control
/// connection's address and answers only there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathOpen {
    pub client_port: u16,
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
}

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
}
