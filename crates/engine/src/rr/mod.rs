//! The `rr` test (block request/response, the Cache Fusion test): clients ask the
//! agent for blocks of `block` bytes with requests of `request` bytes, over UDP (one
//! datagram per block, fragmented by IP above the MTU) or persistent TCP connections,
//! closed loop (N clients, each waits for its block) or open loop (a fixed request
//! rate, latency measured from the intended send time).
//!
//! Sizes: `block` and `request` count application bytes after mtuperf's 40-byte
//! datagram header; each datagram (or TCP message) carries `40 + size` bytes.
//! Latency: request sent (open loop: the time it was due) → last byte of the block
//! received, recorded in nanoseconds in an HDR histogram (3 significant digits).

pub mod agent;
mod agent_tcp;
mod agent_udp;
pub mod client;
mod hist;
mod load;
mod ticker;
mod wire;

use mtuperf_proto::host::{HostIdentity, HostSnapshot, IfaceInfo};
use mtuperf_proto::msg::{RrRequest, RrServed};
use serde::{Deserialize, Serialize};

pub use client::{run, Quiet, RrObserver, RrParams};
pub use hist::Latency;
pub use wire::{MAX_UDP_BLOCK, UDP_MAX_PAYLOAD};

/// One interval of the client's side, as sampled live.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RrInterval {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Blocks fully received in the interval.
    pub blocks: u64,
    /// Requests that timed out in the interval (UDP only).
    pub lost: u64,
    /// Mean and maximum block latency of the blocks received in the interval (ns).
    pub mean_ns: u64,
    pub max_ns: u64,
}

/// What went wrong with individual transactions on the client side (counted, not
/// fatal). Loss is counted per request: a request whose block did not arrive within
/// the timeout, whatever datagram of the transaction was dropped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RrCounts {
    /// Request datagrams or messages sent, re-sends included.
    pub requests_sent: u64,
    /// Blocks received for a request still waited for (one per completed transaction).
    pub blocks: u64,
    /// Requests unanswered within the timeout (each then re-sent under a new sequence).
    pub lost: u64,
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

/// The client's side of one rr run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RrClientEnd {
    pub counts: RrCounts,
    /// Requests still unanswered when the drain after the end (the timeout, at least
    /// 1 s) ran out; not counted lost.
    pub unanswered: u64,
    /// Setup-free failures during the run (a TCP connection closed, ...).
    pub errors: Vec<String>,
    pub latency: Latency,
    /// Threads that multiplexed the clients.
    pub threads: u32,
    pub timeout_ns: u64,
    pub verify: bool,
    pub before: HostSnapshot,
    pub after: HostSnapshot,
    pub iface: Option<IfaceInfo>,
    /// Measured phase: Go → the last thread finished (ns).
    pub wall_ns: u64,
    pub intervals: Vec<RrInterval>,
}

/// Everything both ends measured in one rr run (one load step).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RrResult {
    pub request: RrRequest,
    /// Serving threads the agent granted.
    pub workers: u32,
    pub target: String,
    pub local_addr: String,
    pub started_unix_ms: i64,
    pub client_host: HostIdentity,
    pub agent_host: HostIdentity,
    pub client: RrClientEnd,
    pub agent: RrServed,
    pub interrupted: bool,
}
