//! How each test of a pair ended when it gave no measurement: an error (a finding,
//! grouped by cause) or why it was not measured (never a finding).

use mtuperf_proto::interrupt::Interrupt;
use mtuperf_proto::msg::Refusal;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which tests a mesh runs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum MeshTests {
    Path,
    Rr,
    Stream,
    Doctor,
}

/// Why a pair's test gave no result: an error, a finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum PairError {
    /// The asked agent (node `node`) returned no result before the pair's deadline;
    /// `waited_ms` is the time that really passed since the request.
    NoResult {
        node: usize,
        /// The time that really passed since the request.
        waited_ms: u64,
    },
    /// Node `node`'s agent could not be reached or gave no welcome.
    Unreachable { node: usize, detail: String },
    /// Node `node`'s agent refused the test (a refusal of the peer's agent comes
    /// through it, as `peer_not_authenticated` or `busy`).
    Refused {
        node: usize,
        /// The agent's refusal as the protocol carries it.
        refusal: Refusal,
    },
    /// Node `node`'s agent ran the test, and its peer agent `peer` refused it.
    PeerRefused {
        node: usize,
        peer: String,
        /// The peer's refusal as the protocol carries it.
        refusal: Refusal,
    },
    /// Node `node`'s agent ran the test and reported an error, in its own words.
    Agent {
        node: usize,
        /// The agent's own words.
        message: String,
    },
    /// Node `node`'s answer broke the protocol.
    Protocol { node: usize, detail: String },
    /// An rr or stream test ended early, for the causes its agent gave.
    Cut { causes: Vec<Interrupt> },
}

/// Why a test of a pair was not measured: not an error, nothing to diagnose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum NotMeasured {
    /// Stopped by Ctrl-C (or SIGTERM) before or while it ran.
    Interrupted,
    /// The run's deadline came first.
    Deadline,
    /// Node `node` went silent (its `node_silent` finding says when and how).
    NodeSilent { node: usize },
    /// rr and stream are not run on a path short of its network's MTU (TCP would stall).
    PathShort,
    /// rr and stream are not run on a pair whose path test failed.
    PathFailed,
}

/// A test of a pair that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestFailure {
    pub test: MeshTests,
    pub error: PairError,
    /// From the request to the failure.
    pub elapsed_ms: u64,
}

/// A failed test with its pair: an example of a `tests_failed` finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestFailureAt {
    pub net: usize,
    pub from: usize,
    pub to: usize,
    #[serde(flatten)]
    pub failure: TestFailure,
}

/// A test of a pair that was not measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestSkipped {
    pub test: MeshTests,
    pub why: NotMeasured,
}
