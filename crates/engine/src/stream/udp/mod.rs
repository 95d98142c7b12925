//! `stream --udp`: paced UDP datagram streams in one or both directions, counted by
//! sequence number on the receiving end (received, lost, duplicated, reordered,
//! RFC 3550 jitter), with each end's kernel counters (IP fragments created,
//! reassembly, UDP buffer errors, interface frames) and CPU over the same run.
//!
//! Loss is exact: a sender tells the receiving end over control how many datagrams
//! it sent on each index, and the receiver drains until it has them or a deadline
//! passes, so sent = received + lost per index.

pub mod agent;
mod batch;
pub mod client;
mod data;
pub mod metrics;
mod pace;
mod phase;
mod plan;
mod seq;
mod sockets;
pub mod sweep;

use std::time::Duration;

use mtuperf_proto::host::HostIdentity;
use mtuperf_proto::msg::udp::{UdpEndReport, UdpStreamRequest};
use mtuperf_proto::msg::StreamLimit;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use client::{run, UdpObserver, UdpStream};

/// How long either end waits for the other's word past the planned end and drain.
const IDLE: Duration = Duration::from_secs(10);
/// Intervals are cut this often when the user asks for no live lines.
const LIVE_DEFAULT: Duration = Duration::from_secs(1);

/// Datagrams each sending index sends in a --bytes run (the total per direction
/// split evenly over the streams, whole datagrams, at least one).
fn datagrams_per_index(req: &UdpStreamRequest) -> Option<u64> {
    match req.limit {
        StreamLimit::Bytes { total } => Some(
            (total / u64::from(req.streams.max(1)))
                .div_ceil(u64::from(req.block.max(1)))
                .max(1),
        ),
        StreamLimit::Time { .. } => None,
    }
}

/// Everything both ends measured in one UDP stream run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UdpStreamResult {
    pub request: UdpStreamRequest,
    /// The rate each direction was paced at (bit/s of UDP payload).
    pub paced_rate_bps: u64,
    pub target: String,
    pub local_addr: String,
    pub remote_addr: String,
    pub started_unix_ms: i64,
    pub client_host: HostIdentity,
    pub agent_host: HostIdentity,
    pub client: UdpEndReport,
    pub agent: UdpEndReport,
    pub interrupted: bool,
    /// Why, when interrupted: each cause, with its numbers (report words them);
    /// empty when the run was whole.
    pub interrupted_by: Vec<mtuperf_proto::interrupt::Interrupt>,
    /// Where the client's data threads and receive softirqs ran (the agent's is
    /// `agent.placement`).
    pub client_placement: Option<mtuperf_proto::placement::Placement>,
    /// Why a run lost every datagram of a direction or the agent's report: the path
    /// checked again on a fresh session (None when nothing failed).
    pub diagnosis: Option<crate::explain::Diagnosis>,
}
