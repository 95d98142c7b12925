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
mod bidir_requester;
mod bidir_responder;
pub mod client;
pub mod from;
pub(crate) mod hist;
mod observer;
mod requester;
mod responder;
pub(crate) mod wire;

use mtuperf_proto::host::{HostIdentity, HostSnapshot, IfaceInfo, ThreadsCpu};
use mtuperf_proto::msg::{RrRequest, RrServed};
use mtuperf_proto::placement::Placement;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use client::{run, Rr};
pub use from::{run_from, RrFromFailed, RrFromHost};
pub use hist::from_histogram;
pub use mtuperf_proto::msg::rr::{Latency, RrCounts, RrReverse};
pub use observer::{Quiet, RrObserver};
pub use wire::{MAX_UDP_BLOCK, UDP_MAX_PAYLOAD};

/// Makes a data connection close abortively (SO_LINGER 0), leaving no TIME_WAIT on
/// either end. An rr connection closes only after everything sent on it was
/// accounted for (answered, timed out, or counted unanswered) and the agent reported,
/// so there is nothing a graceful close would still deliver. With graceful closes a
/// sweep leaves a TIME_WAIT socket per client per step for a minute: after a few
/// 2048- and 4096-client steps the client's connect() crawls through an ephemeral port
/// range held by them (up to 10 s for 2048 connections, running out the agent's
/// data-connection window; BENCHMARKS §4), and a SYN that meets the agent's own
/// TIME_WAIT for the same ports can be dropped as a PAWS failure.
pub(crate) fn no_time_wait(s: &socket2::Socket) {
    let _ = s.set_linger(Some(std::time::Duration::ZERO));
}

/// One interval of the client's side, as sampled live.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RrInterval {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Blocks fully received in the interval.
    pub blocks: u64,
    /// Requests that timed out in the interval (UDP only).
    pub lost: u64,
    /// Blocks that arrived in the interval for a request already counted lost: the
    /// agent answered, later than the timeout (a queue past the knee, not a stall).
    pub late: u64,
    /// Mean and maximum block latency of the blocks received in the interval (ns);
    /// None when none was.
    pub mean_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

/// The client's side of one rr run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RrClientEnd {
    pub counts: RrCounts,
    /// Requests cut off unanswered by a stop (Ctrl-C, the agent gone) before they had
    /// waited the timeout: neither answered nor lost. Those still unanswered after the
    /// whole drain (the timeout, at least 1 s) are lost (`counts.lost_at_end`).
    pub unanswered: u64,
    /// Setup-free failures during the run (a TCP connection closed, ...).
    pub errors: Vec<String>,
    pub latency: Latency,
    /// Threads that multiplexed the clients.
    pub threads: u32,
    /// CPU of those threads, each over its life (getrusage RUSAGE_THREAD).
    pub cpu: Option<ThreadsCpu>,
    pub timeout_ns: u64,
    pub verify: bool,
    pub before: HostSnapshot,
    pub after: HostSnapshot,
    pub iface: Option<IfaceInfo>,
    /// Measured phase: Go → the last thread finished (ns).
    pub wall_ns: u64,
    pub intervals: Vec<RrInterval>,
    /// Where this end's requester threads and receive softirqs ran.
    pub placement: Option<Placement>,
}

/// Everything both ends measured in one rr run (one load step).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
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
    /// `--bidir`: the agent → client direction (null in one-way runs).
    pub reverse: Option<RrBidirResult>,
    /// Ended early or abnormally (Ctrl-C, the agent gone, a stall, no report, an
    /// `rr --from` host that failed: the figures then cover only the others).
    pub interrupted: bool,
    /// Why, when interrupted: each cause, with its numbers (report words them);
    /// empty when the run was whole.
    pub interrupted_by: Vec<mtuperf_proto::interrupt::Interrupt>,
    /// `rr --from`: each client host's own result; `client` is then their union
    /// (counts summed, histograms merged) and `agent` the target's accounts summed.
    pub from: Vec<RrFromHost>,
    /// `rr --from`: the hosts that failed once every session was open, with their
    /// share and error; no figure of the step includes them.
    pub from_failed: Vec<RrFromFailed>,
    /// A step that got no block back, stalled or lost the agent's report: the likely
    /// cause, from a path check toward the same agent (`explain`).
    pub diagnosis: Option<crate::explain::Diagnosis>,
}

/// The reverse direction of a `--bidir` run: the agent requested, the client served.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RrBidirResult {
    /// The agent's requester (counts and latency measured on the agent's clock, its
    /// `wall_ns` from the agent's Go to its last requester thread done).
    pub requester: RrReverse,
    /// The client's responder, over its whole serving time (before Go → the agent's
    /// report).
    pub responder: RrResponded,
}

/// What a responder served.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RrResponded {
    /// Valid requests received (right source, token, size).
    pub requests: u64,
    pub responses: u64,
    pub bytes_sent: u64,
    /// Datagrams (or TCP connections) dropped for a bad token, a wrong source or a
    /// malformed header; none of them answered.
    pub rejected: u64,
    /// CPU of the responder's serving threads.
    pub cpu: Option<ThreadsCpu>,
}

impl RrBidirResult {
    pub(crate) fn new(requester: RrReverse, t: &responder::Tally) -> RrBidirResult {
        RrBidirResult {
            requester,
            responder: RrResponded {
                requests: t.requests,
                responses: t.responses,
                bytes_sent: t.bytes_sent,
                rejected: t.rejected,
                cpu: t.cpu,
            },
        }
    }
}
