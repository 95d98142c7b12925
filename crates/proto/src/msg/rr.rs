//! Messages of the `rr` test (block request/response, the Cache Fusion test).

use serde::{Deserialize, Serialize};

use super::AgentPathInfo;
use crate::host::{HostSnapshot, IfaceInfo};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RrProto {
    Udp,
    Tcp,
}

/// Fault injection for tests of the measurement itself; an agent honours these only
/// when started with the hidden `--test-hooks` flag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrHooks {
    /// Stall every worker once for this long, `stall_after_ms` into the test.
    pub stall_ms: u64,
    pub stall_after_ms: u64,
    /// Flip one byte in the payload of response number N (1-based; 0 = never).
    pub corrupt_response: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrRequest {
    pub proto: RrProto,
    /// Response size in bytes.
    pub block: u32,
    /// Request size in bytes.
    pub request: u32,
    /// Serving threads asked for (capped by the agent's --max-workers).
    pub workers: u32,
    /// Concurrent clients the client will run (for the agent's --max-clients).
    pub clients: u32,
    pub duration_ms: u64,
    /// Open-loop offered load in requests/s (None: closed loop).
    pub rate: Option<u64>,
    /// The client's UDP source ports; the agent answers only these, at the control
    /// connection's address.
    pub udp_ports: Vec<u16>,
    pub hooks: Option<RrHooks>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrReady {
    /// UDP port of the responder (udp) or the agent's TCP port for data connections.
    pub port: u16,
    /// Token every request datagram must carry.
    pub token: u64,
    pub workers: u32,
    pub path: AgentPathInfo,
}

/// The agent's account of an rr test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrServed {
    pub requests: u64,
    pub responses: u64,
    pub bytes_sent: u64,
    /// Datagrams dropped for a bad token, a wrong source or a malformed header.
    pub rejected: u64,
    pub before: HostSnapshot,
    pub after: HostSnapshot,
    pub iface: Option<IfaceInfo>,
    pub wall_ns: u64,
}
