//! What a mesh run is asked to do and what it found.

use std::net::IpAddr;
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_proto::msg::mesh::{Discovery, PathSummary, RrSummary, StopKind, StreamSummary};
use serde::{Deserialize, Serialize};

use crate::client::ConnectOptions;

/// Which tests a mesh runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeshTests {
    Path,
    Rr,
    Stream,
    Doctor,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct MeshConfig {
    /// Each node: its name when given, and its agent ("HOST[:PORT]"). A node without
    /// a name is labelled by its hostname when every node's differs, else its agent.
    pub nodes: Vec<(Option<String>, String)>,
    pub connect: ConnectOptions,
    /// Only networks inside these (empty: every network shared by two nodes).
    pub nets: Vec<IpNet>,
    /// The MTU every path must carry (None: the largest interface MTU on each network).
    pub expect: Option<u32>,
    pub tests: Vec<MeshTests>,
    /// Tests one node takes part in at once (as sender or as peer).
    pub per_node: usize,
    /// Pair tests at once over the whole mesh (each waits on one agent).
    pub parallel: usize,
    /// Deadline of one pair's test, from the request to its result.
    pub pair_timeout: Duration,
    /// Length of each rr or stream test.
    pub load_time: Duration,
}

/// One node as discovered.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeshNode {
    pub label: String,
    /// The agent's control address as given.
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Why the node could not be discovered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The agent's session limit (`--max-sessions`): the most tests it takes part in at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_sessions: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<Discovery>,
}

/// A node's address on a network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeAddr {
    pub node: usize,
    pub addr: IpAddr,
    pub iface: String,
    /// The interface's MTU as the node reports it.
    pub mtu: u32,
}

/// A subnet shared by at least two nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeshNetwork {
    /// "A", "B", ... in address order.
    pub name: String,
    pub cidr: IpNet,
    /// The MTU each path must carry: `--expect`, else the largest interface MTU here.
    pub expect: u32,
    pub members: Vec<NodeAddr>,
}

/// One ordered pair's tests on one network: `from` asked to test toward `to`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairResult {
    pub net: usize,
    pub from: usize,
    pub to: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<PathSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rr: Option<RrSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<StreamSummary>,
    /// Why a test of this pair failed (the others may still have results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The path test failed once and was tried again: the first failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried: Option<String>,
    /// Tests not run on this pair, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    pub elapsed_ms: u64,
}

/// One direction of a matrix cell, as the diagnosis read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirCell {
    pub mtu: u32,
    pub stop: StopKind,
    pub ok: bool,
    /// The finding that explains a failing direction (index into `findings`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<usize>,
}

/// A matrix cell: the test `from` → `to` on `net`, both of its directions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cell {
    pub net: usize,
    pub from: usize,
    pub to: usize,
    /// "ok", "nic", "switch_port", "network", "asymmetric", "limited", "error".
    pub verdict: String,
    /// `from` → `to`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward: Option<DirCell>,
    /// `to` → `from`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<DirCell>,
}

/// A whole mesh run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MeshResult {
    pub started_unix_ms: i64,
    pub elapsed_ms: u64,
    pub tests: Vec<MeshTests>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<u32>,
    pub nodes: Vec<MeshNode>,
    pub networks: Vec<MeshNetwork>,
    pub pairs: Vec<PairResult>,
    pub cells: Vec<Cell>,
    pub findings: Vec<MeshFinding>,
    /// Stopped early (Ctrl-C): pairs not yet tested are missing.
    #[serde(default)]
    pub interrupted: bool,
}

impl MeshResult {
    /// Every pair tested and nothing found.
    pub fn ok(&self) -> bool {
        self.findings.is_empty() && !self.interrupted
    }

    pub fn cell(&self, net: usize, from: usize, to: usize) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.net == net && c.from == from && c.to == to)
    }
}

/// What a finding blames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A node's interface MTU is below the others'.
    NicMtu,
    /// Every path through a node is silently limited while its NIC is fine.
    SwitchPort,
    /// Every path through a node is limited by a router answering frag-needed.
    NodeRoute,
    /// Every pair of a network is limited.
    Network,
    /// One direction of a pair carries the MTU, the other does not.
    Asymmetric,
    /// A pair's path is limited in both directions.
    Limited,
    /// A pair's test could not run.
    TestFailed,
    /// A node's agent could not be reached or discovered.
    Unreachable,
    /// `--tests doctor`: a setting differs from the other nodes'.
    Setting,
}

/// One finding, in one line plus its evidence and the next step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeshFinding {
    pub kind: FindingKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<usize>,
    /// The failing directions (from node, to node) this finding explains.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub directions: Vec<(usize, usize)>,
    pub summary: String,
    pub evidence: String,
    pub next: String,
}
