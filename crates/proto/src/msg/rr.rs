//! Messages of the `rr` test (block request/response, the Cache Fusion test).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::AgentPathInfo;
use crate::host::{HostSnapshot, IfaceInfo, ThreadsCpu};
use crate::placement::Placement;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RrProto {
    Udp,
    Tcp,
}

/// Fault injection for tests of the measurement itself; an agent honours these only
/// when started with the hidden `--test-hooks` flag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RrHooks {
    /// Stall every worker once for this long, `stall_after_ms` into the test.
    pub stall_ms: u64,
    pub stall_after_ms: u64,
    /// Flip one byte in the payload of response number N (1-based; 0 = never).
    pub corrupt_response: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
    /// `--bidir`: the agent also requests blocks from the client (null: one way).
    pub bidir: Option<RrBidir>,
    /// `--agent-cpu`: pin the agent's serving threads to these CPUs (each thread may
    /// run on any of them); the agent refuses CPUs outside its `serve --cpus`.
    pub cpus: Option<Vec<u32>>,
}

/// The reverse direction of a `--bidir` run: the agent requests blocks of the same
/// sizes, with the same clients and load shape, from the client's responder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RrBidir {
    /// The client's responder: its UDP port (udp), or the port of the listener the
    /// agent connects its data connections to (tcp), at the control connection's IP.
    pub port: u16,
    /// Token every reverse request (udp) or connection hello (tcp) must carry; fresh
    /// per step, chosen by the client.
    pub token: u64,
    /// The agent's requester counts a UDP request lost after this long.
    pub timeout_ns: u64,
    /// The agent's requester checks every block's checksum.
    pub verify: bool,
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
    /// `--bidir` over udp: the agent's requester source ports, the only ports the
    /// client's responder answers.
    pub reverse_ports: Vec<u16>,
}

/// The agent's account of an rr test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// `--bidir`: the agent's own requester, toward the client's responder.
    pub reverse: Option<RrReverse>,
    /// CPU of the agent's threads that served (and, under `--bidir`, requested).
    pub cpu: Option<ThreadsCpu>,
    /// Where the agent's serving threads and receive softirqs ran (protocol 5).
    pub placement: Option<Placement>,
}

/// A requester's side of one direction (the agent's, in a `--bidir` run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RrReverse {
    pub counts: RrCounts,
    /// Requests cut off unanswered by a stop (Ctrl-C, the far end gone) before they
    /// had waited the timeout: neither answered nor lost. Requests still unanswered
    /// after the whole drain are lost (`counts.lost_at_end`).
    pub unanswered: u64,
    /// Failures during the run (a TCP connection closed, ...).
    pub errors: Vec<String>,
    pub latency: Latency,
    /// Threads that multiplexed the agent's clients.
    pub threads: u32,
    /// The requester's measured phase: its Go → its last thread finished (ns).
    pub wall_ns: u64,
    /// CPU of the requester's threads (null when they could not be read).
    pub cpu: Option<ThreadsCpu>,
}

/// What went wrong with individual transactions on a requester's side (counted, not
/// fatal). Loss is counted per request: a request whose block did not arrive within
/// the timeout, whatever datagram of the transaction was dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RrCounts {
    /// Request datagrams or messages sent, re-sends included.
    pub requests_sent: u64,
    /// Blocks received for a request still waited for (one per completed transaction).
    pub blocks: u64,
    /// Requests unanswered within the timeout: each re-sent under a new sequence
    /// while the run lasts, and those still unanswered when the drain after the end
    /// ran out (they waited at least the timeout too).
    pub lost: u64,
    /// Of `lost`, the requests still unanswered when the drain after the end ran out.
    pub lost_at_end: u64,
    /// Blocks that arrived after their request had been counted lost.
    pub late: u64,
    /// Blocks received twice for the same request.
    pub duplicate: u64,
    /// Blocks that arrived after a block of a later request of the same client.
    pub out_of_order: u64,
    /// Blocks whose checksum did not match (`--verify`).
    pub corrupt: u64,
    /// Datagrams that were not a valid answer (wrong token, size, kind or client).
    pub invalid: u64,
    /// Open loop: sends made more than 1 ms after the request was due and the client
    /// was free to send it (the client side fell behind its schedule).
    pub behind_sends: u64,
    /// Open loop: the largest such delay (ns).
    pub behind_max_ns: u64,
    /// Open loop: sum of all such delays (ns), for the mean.
    pub behind_sum_ns: u64,
}

impl RrCounts {
    pub fn add(&mut self, o: &RrCounts) {
        self.requests_sent += o.requests_sent;
        self.blocks += o.blocks;
        self.lost += o.lost;
        self.lost_at_end += o.lost_at_end;
        self.late += o.late;
        self.duplicate += o.duplicate;
        self.out_of_order += o.out_of_order;
        self.corrupt += o.corrupt;
        self.invalid += o.invalid;
        self.behind_sends += o.behind_sends;
        self.behind_max_ns = self.behind_max_ns.max(o.behind_max_ns);
        self.behind_sum_ns += o.behind_sum_ns;
    }
}

/// Block latency (request sent or due → last byte of the block received), in ns,
/// summarised from an HDR histogram (3 significant digits, 1 ns to 100 s). With no
/// block answered (`count` 0) there is no latency: every figure is None (`null`),
/// never 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Latency {
    /// Always "ns".
    #[schemars(extend("const" = "ns"))]
    pub unit: String,
    pub count: u64,
    #[schemars(range(min = 1))]
    pub min: Option<u64>,
    pub mean: Option<f64>,
    #[schemars(range(min = 1))]
    pub p50: Option<u64>,
    #[schemars(range(min = 1))]
    pub p90: Option<u64>,
    #[schemars(range(min = 1))]
    pub p99: Option<u64>,
    #[schemars(range(min = 1))]
    pub p999: Option<u64>,
    #[schemars(range(min = 1))]
    pub max: Option<u64>,
    /// Non-empty buckets as `[highest value equivalent to the bucket (ns), count]`.
    pub buckets: Vec<[u64; 2]>,
}
