//! A mesh's findings, typed: what is wrong (its class, with the numbers) and where
//! (the network, the node, the directions it explains). The report words them.

use mtuperf_proto::msg::mesh::StopKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::outcome::TestFailureAt;
use crate::diagnosis::Diagnosis;
use crate::node_failure::Failure;
use mtuperf_proto::failed::Failed;

/// Why a node could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NodeError {
    /// Its agent could not be asked for its interfaces: the client's error (a
    /// refusal typed).
    Discovery { error: Failed },
    /// `mesh --ssh`: its agent could not be started over SSH (the step and the cause).
    Ssh { failure: Failure },
}

/// One direction as the diagnosis read it: a finding's evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Seen {
    pub from: usize,
    pub to: usize,
    pub mtu: u32,
    pub stop: StopKind,
    /// Who answered frag-needed, for `icmp`.
    pub icmp_from: Option<String>,
}

/// What node `by` measured of a direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Claim {
    pub by: usize,
    pub mtu: u32,
    pub stop: StopKind,
}

/// Two nodes' measurements of the direction `from` → `to` that disagree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Contradiction {
    pub from: usize,
    pub to: usize,
    pub claims: Vec<Claim>,
}

/// A measurement no path can carry: node `by` said `from` → `to` carries `mtu`
/// (largest packet `largest_ok`) where the smaller NIC MTU of the two ends is `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Implausible {
    pub by: usize,
    pub from: usize,
    pub to: usize,
    pub mtu: u32,
    pub largest_ok: u32,
    pub limit: u32,
}

/// How a node went silent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Silence {
    /// Its agent stopped answering (no welcome to a new connection).
    NoAnswer,
    /// Its agent answered but returned no result within the pair's deadline.
    NoResult,
}

/// An interface offload `--tests doctor` compares.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Offload {
    Tso,
    Gso,
    Gro,
    Lro,
}

/// A setting `--tests doctor` compares across nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum Setting {
    /// The MTU of the node's interface on the network.
    NicMtu {
        iface: String,
    },
    Offload {
        iface: String,
        offload: Offload,
    },
    RpFilter {
        iface: String,
    },
    Sysctl {
        key: String,
    },
}

/// Why a node has no address in an interconnect subnet of `--oifcfg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NicAbsence {
    /// The interface exists but is down.
    Down,
    /// The interface is up but holds no address in the subnet.
    NoAddress,
    /// No interface of that name.
    Missing,
}

/// A kernel counter the mesh reads on every node before and after its tests.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum KernelCounter {
    /// Ip ReasmFails: datagrams whose fragments could not be reassembled.
    ReasmFails,
    /// Ip ReasmTimeout: reassemblies abandoned after `ipfrag_time`.
    ReasmTimeout,
    /// Udp RcvbufErrors: datagrams dropped for a full socket receive buffer.
    UdpRcvbufErrors,
    /// Udp InErrors: datagrams not delivered (receive buffer, checksum, ...).
    UdpInErrors,
    /// An interconnect NIC's rx_errors / tx_errors.
    NicErrors,
    /// An interconnect NIC's rx_dropped + tx_dropped, above 0.1% of its frames.
    NicDrops,
}

/// What a finding says, with its numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Finding {
    /// A fault of the paths, class and location as `path` names them (a node, a
    /// segment, a router, the network).
    Fault { diagnosis: Diagnosis },
    /// `count` tests failed for one cause; the first few as examples.
    TestsFailed {
        count: usize,
        examples: Vec<TestFailureAt>,
    },
    /// The node's agent could not be asked for its interfaces, or (`mesh --ssh`)
    /// could not be started: the node's error.
    Unreachable { agent: String, error: NodeError },
    /// The node went silent `at_ms` into the run, after the orchestrator waited
    /// `waited_ms` on it; `not_measured` pair tests with it were not measured.
    NodeSilent {
        silence: Silence,
        at_ms: u64,
        /// How long the orchestrator waited on it, ms.
        waited_ms: u64,
        not_measured: usize,
    },
    /// Measurements of the same directions disagree; with `node`, that node's
    /// contradict every peer's and are left out of the diagnosis; without, both
    /// sides of each contradiction are.
    Disputed { contradictions: Vec<Contradiction> },
    /// The node reported values no path can carry: refused as evidence.
    Implausible { claims: Vec<Implausible> },
    /// `--tests doctor`: the node's `setting` is `value` where `holders` of `of`
    /// nodes have `norm`.
    Setting {
        setting: Setting,
        value: String,
        norm: String,
        holders: usize,
        /// Nodes compared.
        of: usize,
    },
    /// `--oifcfg`: the node has no up interface `iface` with an address in the
    /// interconnect subnet `subnet`; Oracle then treats the subnet as unusable
    /// cluster-wide.
    InterconnectAbsent {
        iface: String,
        subnet: std::net::IpAddr,
        why: NicAbsence,
    },
    /// A block check of a network failed (block p99 over its limit, blocks lost):
    /// what RAC itself would suffer, whatever the cause the other findings name.
    CheckFailed {
        /// The check, as in `checks`, without its network and status.
        check: super::doc::Check,
    },
    /// A kernel counter of the node grew by `delta` during the run (`iface`: the
    /// interconnect NIC it was read on; `of`: that NIC's frames, for drops).
    Kernel {
        counter: KernelCounter,
        delta: u64,
        /// The interconnect NIC the counter was read on.
        iface: Option<String>,
        /// The NIC's frames over the run, for drops.
        of: Option<u64>,
    },
}

/// The class of a finding, without its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    Fault,
    TestsFailed,
    Unreachable,
    NodeSilent,
    Disputed,
    Implausible,
    Setting,
    InterconnectAbsent,
    Kernel,
    CheckFailed,
}

impl Finding {
    pub fn kind(&self) -> FindingKind {
        match self {
            Finding::Fault { .. } => FindingKind::Fault,
            Finding::TestsFailed { .. } => FindingKind::TestsFailed,
            Finding::Unreachable { .. } => FindingKind::Unreachable,
            Finding::NodeSilent { .. } => FindingKind::NodeSilent,
            Finding::Disputed { .. } => FindingKind::Disputed,
            Finding::Implausible { .. } => FindingKind::Implausible,
            Finding::Setting { .. } => FindingKind::Setting,
            Finding::InterconnectAbsent { .. } => FindingKind::InterconnectAbsent,
            Finding::Kernel { .. } => FindingKind::Kernel,
            Finding::CheckFailed { .. } => FindingKind::CheckFailed,
        }
    }
}

/// One finding: where (network, node, the failing directions it explains with what
/// was seen of each) and what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MeshFinding {
    pub net: Option<usize>,
    pub node: Option<usize>,
    /// The failing directions the finding explains, with what was seen of each.
    pub directions: Vec<Seen>,
    #[serde(flatten)]
    pub what: Finding,
}

impl MeshFinding {
    pub fn new(net: Option<usize>, node: Option<usize>, what: Finding) -> MeshFinding {
        MeshFinding {
            net,
            node,
            directions: Vec::new(),
            what,
        }
    }

    pub fn kind(&self) -> FindingKind {
        self.what.kind()
    }

    /// The path fault this finding names, if it names one.
    pub fn diagnosis(&self) -> Option<&Diagnosis> {
        match &self.what {
            Finding::Fault { diagnosis } => Some(diagnosis),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_is_stored_as_its_kind_its_numbers_and_where() {
        use crate::diagnosis::{Fault, Location};
        let f = MeshFinding {
            net: Some(1),
            node: Some(3),
            directions: vec![Seen {
                from: 3,
                to: 0,
                mtu: 1500,
                stop: StopKind::Silent,
                icmp_from: None,
            }],
            what: Finding::Fault {
                diagnosis: Diagnosis {
                    fault: Fault::SwitchPort { nic_mtu: 9000 },
                    at: Location::Node {
                        addr: "198.19.2.4".parse().unwrap(),
                    },
                    mtu: 1500,
                    expect: 9000,
                },
            },
        };
        let v = serde_json::to_value(&f).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "kind": "fault", "net": 1, "node": 3,
                "directions": [{"from": 3, "to": 0, "mtu": 1500, "stop": "silent", "icmp_from": null}],
                "diagnosis": {
                    "class": "switch_port", "nic_mtu": 9000,
                    "at": {"kind": "node", "addr": "198.19.2.4"},
                    "mtu": 1500, "expect": 9000
                }
            })
        );
        let back: MeshFinding = serde_json::from_value(v).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.kind(), FindingKind::Fault);
    }
}
