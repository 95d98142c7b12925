//! What a mesh run is asked to do and what it found. Everything here is a typed
//! outcome carrying numbers and locations (node and network indexes); the words are
//! the report's (`mtuperf-report`'s `mesh` module).

use std::net::IpAddr;
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_proto::msg::mesh::{
    Discovery, PathSummary, RrLoad, RrSummary, StopKind, StreamSummary,
};
use mtuperf_proto::msg::rr::RrProto;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::client::ConnectOptions;
use crate::config::RrConfig;

use super::doc::MtuComparison;
use super::doc::NetCheck;
use super::doc::NetSource;
use super::doc::NodeKernel;
use super::finding::{MeshFinding, NodeError};
use super::oifcfg::OifcfgEntry;
pub use super::outcome::{
    MeshTests, NotMeasured, PairError, TestFailure, TestFailureAt, TestSkipped,
};

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
    /// Per network: the MTU every path of the networks inside each CIDR must carry
    /// (before `expect`; the first that holds a network applies).
    pub expect_nets: Vec<NetExpect>,
    pub tests: Vec<MeshTests>,
    /// Tests one node takes part in at once (as sender or as peer).
    pub per_node: usize,
    /// Pair tests at once over the whole mesh (each waits on one agent).
    pub parallel: usize,
    /// Deadline of one pair's test, from the request to its result, retries
    /// included (an rr or stream test gets `load_time` more).
    pub pair_timeout: Duration,
    /// Length of each rr or stream test.
    pub load_time: Duration,
    /// What the rr test sends: the Cache Fusion pattern by default.
    pub block: BlockTest,
    /// `--oifcfg`: the cluster's own definition of its networks (None: `nets`).
    pub oifcfg: Option<Vec<OifcfgEntry>>,
    /// `--max-block-p99` (None: 1 ms on a private network, no limit elsewhere).
    pub max_block_p99: Option<Duration>,
}

/// `--expect CIDR=MTU`: what every path of the networks inside `net` must carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetExpect {
    /// A CIDR ("192.168.1.0/24").
    #[schemars(with = "String")]
    pub net: IpNet,
    pub mtu: u32,
}

/// A block unanswered this long is lost, as RAC declares a "gc block lost".
pub const LOST_BLOCK_AFTER: Duration = Duration::from_millis(500);

/// The mesh's rr test: a request answered by a block, one in flight per pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BlockTest {
    pub proto: RrProto,
    pub block: u32,
    pub request: u32,
    /// Open loop: requests per second per pair (None: the next request as soon as
    /// the block arrives).
    pub rate: Option<u64>,
}

impl Default for BlockTest {
    /// Cache Fusion: an 8 KiB block over UDP for a 128-byte request.
    fn default() -> Self {
        BlockTest {
            proto: RrProto::Udp,
            block: 8192,
            request: 128,
            rate: None,
        }
    }
}

impl BlockTest {
    /// The third-party load of one pair: one client, one thread, one serving
    /// thread, lost after [`LOST_BLOCK_AFTER`].
    pub fn load(&self, time: Duration) -> RrLoad {
        RrLoad {
            proto: self.proto,
            block: self.block,
            request: self.request,
            clients: 1,
            workers: 1,
            threads: 1,
            duration_ms: time.as_millis() as u64,
            rate: self.rate,
            timeout_ms: LOST_BLOCK_AFTER.as_millis() as u64,
            verify: false,
        }
    }

    /// One rr step of this pattern from this node (the watch's probe): one client
    /// on one thread each end, lost after [`LOST_BLOCK_AFTER`].
    pub fn rr_config(&self, time: Duration) -> RrConfig {
        RrConfig {
            proto: self.proto,
            block: self.block,
            request: self.request,
            time,
            rate: self.rate,
            timeout: LOST_BLOCK_AFTER,
            threads: Some(1),
            workers: Some(1),
            ..RrConfig::default()
        }
    }
}

/// One node as discovered.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MeshNode {
    pub label: String,
    /// The agent's control address as given (`ssh DEST` for a node `--ssh` could not
    /// start).
    pub agent: String,
    pub hostname: Option<String>,
    /// Why the node could not be used.
    pub error: Option<NodeError>,
    /// The agent's session limit (`--max-sessions`): the most tests it takes part in at once.
    pub max_sessions: Option<u32>,
    pub discovery: Option<Discovery>,
}

/// A node's address on a network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NodeAddr {
    /// The node (index into `nodes`).
    pub node: usize,
    pub addr: IpAddr,
    pub iface: String,
    /// The interface's MTU as the node reported it at discovery (0: not reported).
    pub mtu: u32,
}

/// A subnet shared by at least two nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MeshNetwork {
    /// "A", "B", ... in address order.
    pub name: String,
    /// The subnet, as a CIDR ("192.168.1.0/24").
    #[schemars(with = "String")]
    pub cidr: IpNet,
    /// The MTU each path must carry: `--expect`, else the largest interface MTU here.
    pub expect: u32,
    pub members: Vec<NodeAddr>,
    /// Where it comes from (a shared subnet, an `oifcfg getif` line, HAIP).
    pub source: NetSource,
}

impl MeshNetwork {
    /// Node `node`'s NIC MTU on this network, when it reported one.
    pub fn nic_mtu(&self, node: usize) -> Option<u32> {
        self.members
            .iter()
            .find(|m| m.node == node)
            .map(|m| m.mtu)
            .filter(|&m| m > 0)
    }
}

/// One ordered pair's tests on one network: `from` asked to test toward `to`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PairResult {
    pub net: usize,
    pub from: usize,
    pub to: usize,
    pub path: Option<PathSummary>,
    /// The block test measured on the `from` node (it asks, the `to` node serves) over
    /// `wall_ns`; latencies null when no block was answered, never 0.
    pub rr: Option<RrSummary>,
    /// Application bytes the `to` node received over its `wall_ns`, one TCP stream.
    pub stream: Option<StreamSummary>,
    /// Tests of this pair that failed (the others may still have results).
    pub failed: Vec<TestFailure>,
    /// Tests of this pair that were not measured, and why.
    pub not_measured: Vec<TestSkipped>,
    /// The path test failed once and was tried again within the pair's deadline:
    /// the first failure.
    pub retried: Option<TestFailure>,
    pub elapsed_ms: u64,
}

impl PairResult {
    pub fn new(net: usize, from: usize, to: usize) -> PairResult {
        PairResult {
            net,
            from,
            to,
            ..PairResult::default()
        }
    }

    /// Why `test` was not measured, when it was not.
    pub fn not_measured(&self, test: MeshTests) -> Option<NotMeasured> {
        self.not_measured
            .iter()
            .find(|s| s.test == test)
            .map(|s| s.why)
    }

    /// How `test` failed, when it did.
    pub fn failure(&self, test: MeshTests) -> Option<&TestFailure> {
        self.failed.iter().find(|f| f.test == test)
    }
}

/// Why a direction's measurement was not used as evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Doubt {
    /// A value no path between the two ends can carry (above the smaller NIC MTU).
    Implausible,
    /// It contradicts another node's measurement of the same direction.
    Disputed,
}

/// One direction of a matrix cell, as the asked node measured it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DirCell {
    pub mtu: u32,
    pub stop: StopKind,
    /// Carries the network's expected MTU (false for a doubted measurement).
    pub ok: bool,
    /// The finding that explains a failing direction, or says why this measurement
    /// was doubted (index into `findings`).
    pub finding: Option<usize>,
    /// Left out of the diagnosis, and why.
    pub doubt: Option<Doubt>,
}

/// What a matrix cell shows.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CellVerdict {
    /// Both directions carry the network's expected MTU.
    Ok,
    /// Explained by a node's low NIC MTU.
    NicMtu,
    /// Explained by a node's own route refusing larger packets.
    RouteMtu,
    /// Explained by an L2 device: a node's switch port, or one on the pair's segment.
    SwitchPort,
    /// Explained by the whole network (its switch or VLAN).
    Network,
    /// Explained by a one-way drop on the pair's segment (one end's outbound side
    /// or the other's inbound side; no node's every direction explains it).
    OneWayDrop,
    /// Explained by a node dropping inbound frames above the MTU.
    InboundDrop,
    /// Explained by a node dropping outbound frames above the MTU.
    OutboundDrop,
    /// Frames into a node whose NIC MTU is unknown vanish.
    SilentDrop,
    /// Explained by a black hole past a router.
    BlackHole,
    /// Explained by a router answering frag-needed.
    RouterMtu,
    /// Falls short, with no finding of the paths explaining it.
    Limited,
    /// A measurement of this cell was refused as evidence (implausible or
    /// contradicted by another node's).
    Disputed,
    /// The test failed.
    Error,
    /// The test did not run (interrupted, deadline, a silent node).
    NotMeasured,
}

/// A matrix cell: the test `from` → `to` on `net`, both of its directions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Cell {
    pub net: usize,
    pub from: usize,
    pub to: usize,
    pub verdict: CellVerdict,
    /// `from` → `to`.
    pub forward: Option<DirCell>,
    /// `to` → `from`.
    pub reverse: Option<DirCell>,
}

/// A whole mesh run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct MeshResult {
    pub started_unix_ms: i64,
    pub elapsed_ms: u64,
    /// The run's deadline from its start, derived from the plan (every pair at its
    /// whole deadline); nothing runs past it.
    pub deadline_ms: u64,
    pub tests: Vec<MeshTests>,
    pub expect: Option<u32>,
    /// `--expect CIDR=MTU`, as given.
    pub expect_nets: Vec<NetExpect>,
    pub nodes: Vec<MeshNode>,
    pub networks: Vec<MeshNetwork>,
    /// Every planned pair, measured or not (its `not_measured` says why).
    pub pairs: Vec<PairResult>,
    pub cells: Vec<Cell>,
    pub findings: Vec<MeshFinding>,
    /// What the rr test sent (when it ran).
    pub block: Option<BlockTest>,
    /// Each node's kernel counters over the run.
    pub kernel: Vec<NodeKernel>,
    /// Per network, the cluvfy-style checks.
    pub checks: Vec<NetCheck>,
    /// Jumbo vs standard: every two networks of different MTUs, the same node pairs'
    /// block test compared.
    pub jumbo: Vec<MtuComparison>,
    /// Stopped early (Ctrl-C): tests not yet run are not measured.
    pub interrupted: bool,
    /// The run's deadline passed: tests not yet run are not measured.
    pub deadline_passed: bool,
}

impl MeshResult {
    /// Every pair tested and nothing found.
    pub fn ok(&self) -> bool {
        self.findings.is_empty() && !self.interrupted && !self.deadline_passed
    }

    pub fn cell(&self, net: usize, from: usize, to: usize) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.net == net && c.from == from && c.to == to)
    }

    pub fn pair(&self, net: usize, from: usize, to: usize) -> Option<&PairResult> {
        self.pairs
            .iter()
            .find(|p| p.net == net && p.from == from && p.to == to)
    }
}

/// What a run will do and its deadline, known once the nodes are discovered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Ordered pairs over every network (each gets a path test, and rr and stream
    /// when asked).
    pub pairs: usize,
    /// Path tests that may wait on each other (a node in at most `--per-node` at
    /// once): the path phase takes at most this many pair deadlines.
    pub path_waves: usize,
    /// Rounds of disjoint pairs of each load test (rr, stream).
    pub load_rounds: usize,
    /// The whole run's deadline, from its start.
    pub deadline: Duration,
}
