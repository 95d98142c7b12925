//! The `stream` test: bulk TCP in one or both directions over N connections, measured
//! on both ends (bytes, calls, time inside calls, first/last byte), with CPU,
//! interface counters and TCP_INFO.

pub mod advice;
pub mod agent;
mod cause;
pub mod client;
pub(crate) mod data;
mod ends;
pub mod limits;
mod measured;
pub mod metrics;
mod phase;
mod ticker;
pub mod udp;
pub mod verdict;
pub mod window_eq;

use mtuperf_proto::host::HostIdentity;
use mtuperf_proto::msg::{EndReport, StreamRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::config::StreamParams;
pub use client::{run, Stream, StreamObserver};

/// Which end a figure belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum End {
    Client,
    Agent,
}

/// Everything both ends measured in one stream run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StreamResult {
    pub request: StreamRequest,
    pub target: String,
    pub local_addr: String,
    pub remote_addr: String,
    pub started_unix_ms: i64,
    pub client_host: HostIdentity,
    pub agent_host: HostIdentity,
    pub client: EndReport,
    pub agent: EndReport,
    /// Ended early or abnormally (Ctrl-C, a deadline, a stall, the agent gone); the
    /// figures cover what was measured.
    pub interrupted: bool,
    /// Why, when interrupted: each cause, with its numbers (report words them);
    /// empty when the run was whole.
    pub interrupted_by: Vec<mtuperf_proto::interrupt::Interrupt>,
    /// Where the payload came from: "generated" or the file's path.
    pub source: String,
    /// Where the client's data threads and receive softirqs ran (the agent's is
    /// `agent.placement`).
    pub client_placement: Option<mtuperf_proto::placement::Placement>,
    /// A run that moved nothing, stalled or lost the agent's report: the likely
    /// cause, from a path check toward the same agent (`explain`).
    pub diagnosis: Option<crate::explain::Diagnosis>,
}
