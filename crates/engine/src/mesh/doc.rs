//! The typed parts of a mesh document that its model holds and the modules computing
//! them fill in: the cluvfy-style checks per network, each node's kernel counter
//! deltas, the jumbo vs standard comparison, and where a network came from. They sit
//! below `model` and those modules (`checks`, `kernel`, `jumbo`, `net`), which import
//! both, so no two of them import each other.

use std::net::IpAddr;

use mtuperf_proto::failed::Failed;
use mtuperf_proto::host::{IfaceCounters, SnmpCounters};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether a check passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    /// Not judged (its test was not asked, nothing was measured, or no limit applies).
    NotRun,
}

/// What one check found, with its numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum Check {
    /// Every measured direction carries the network's MTU.
    Mtu {
        expect: u32,
        carried: usize,
        measured: usize,
    },
    /// Every pair was reached (its tests ran; none failed, no node silent or unreachable).
    Reachability {
        reached: usize,
        failed: usize,
        planned: usize,
    },
    /// Every pair's block p99 under the limit (a pair with no block answered is over).
    BlockP99 {
        limit_ns: Option<u64>,
        worst_ns: Option<u64>,
        /// The worst pair (from, to); with `worst_ns` None, a pair with no block.
        worst: Option<(usize, usize)>,
        over: usize,
        measured: usize,
    },
    /// No block lost (unanswered within 500 ms, or never).
    LostBlocks {
        lost: u64,
        pairs: usize,
        measured: usize,
    },
    /// No IP reassembly failure on the network's nodes during the run.
    Reassembly {
        fails: u64,
        nodes: Vec<usize>,
        read: usize,
    },
    /// The nodes' settings alike (`--tests doctor`): the findings that differ.
    Settings { findings: Vec<usize> },
}

/// One check of one network.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetCheck {
    pub net: usize,
    pub status: CheckStatus,
    #[serde(flatten)]
    pub check: Check,
}

/// One interconnect NIC's counters over the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NicDelta {
    pub iface: String,
    pub delta: IfaceCounters,
}

/// One node's kernel counters over the run (deltas between the two reads).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NodeKernel {
    pub node: usize,
    /// IP, UDP and TCP counter deltas (None: a read failed or gave none).
    pub snmp: Option<SnmpCounters>,
    pub nics: Vec<NicDelta>,
    /// Time between the two reads.
    pub span_ms: u64,
    /// Why there are no deltas (a read failed; a refusal typed).
    pub error: Option<Failed>,
}

/// One figure over the node pairs compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Paired {
    /// Median over the pairs on the standard network, and on the jumbo one.
    pub standard: f64,
    pub jumbo: f64,
    /// The geometric mean of the pairs' ratios (jumbo / standard) less 1: -0.25 is a
    /// quarter lower on the jumbo network.
    pub rel: f64,
    /// Its 95% interval (Student t of the pairs' log ratios, mapped back); none
    /// below 3 pairs.
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// Two networks of different MTUs compared over the node pairs measured on both.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MtuComparison {
    /// The network of the smaller expected MTU, and of the larger (indexes).
    pub standard: usize,
    pub jumbo: usize,
    /// Ordered node pairs whose block test measured on both networks.
    pub pairs: usize,
    /// Of those, the pairs (from, to) that answered no block on one network or both:
    /// left out of the figures (a ratio to nothing), their lost blocks counted below.
    pub unanswered: Vec<(usize, usize)>,
    /// Lost blocks over the `pairs` on each network.
    pub lost_standard: u64,
    pub lost_jumbo: u64,
    /// Block latency p50 and p99 (ns) and blocks/s, over the pairs that answered
    /// blocks on both (None: no such pair).
    pub p50_ns: Option<Paired>,
    pub p99_ns: Option<Paired>,
    pub blocks_per_s: Option<Paired>,
}

/// Where a network comes from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NetSource {
    /// A subnet shared by two nodes (inside `--net`, when given).
    #[default]
    Shared,
    /// An `oifcfg getif` line marked `cluster_interconnect`.
    Oifcfg { iface: String, subnet: IpAddr },
    /// HAIP's link-local (169.254.0.0/16) subnet on the interconnect interface `iface`.
    Haip { iface: String },
}
