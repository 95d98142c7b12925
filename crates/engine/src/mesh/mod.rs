//! `mesh`: verify a whole cluster. Every node's agent is asked what its interfaces
//! are (discovery); addresses are grouped into networks (subnets shared by at least
//! two nodes); the run's deadline is planned; every ordered pair of nodes on each
//! network is tested by a third-party test (the orchestrator asks agent A to test
//! toward agent B's address, from A's own address on that network) while the nodes'
//! health is watched; the measurements are weighed (impossible or contradicted ones
//! are refused as evidence) and the matrix is read as a whole to name the culprit (a
//! node's NIC, a node's switch port, a whole network, an asymmetric route). Every
//! outcome is typed; the report words it.

pub mod agent;
pub mod answer;
mod cells;
pub mod checks;
pub mod diagnose;
pub mod discover;
pub mod doc;
pub mod doctor;
pub mod evidence;
pub mod finding;
mod health;
pub mod jumbo;
pub mod kernel;
pub mod model;
pub mod net;
pub mod oifcfg;
pub mod orchestrate;
pub mod outcome;
mod pair;
pub mod plan;
pub mod schedule;
mod third_party;

#[cfg(test)]
mod diagnose_tests;

pub use answer::{answer, Answer, NetMtu, Unanswered};
pub use cells::{diagnose, verdict_of, SilentNode, EXAMPLES};
pub use checks::{Check, CheckStatus, NetCheck, DEFAULT_MAX_BLOCK_P99};
pub use finding::{
    Claim, Contradiction, Finding, FindingKind, Implausible, KernelCounter, MeshFinding,
    NicAbsence, NodeError, Offload, Seen, Setting, Silence,
};
pub use health::{LIVENESS_AFTER, PROBE_EVERY, PROBE_WAIT};
pub use jumbo::{MtuComparison, Paired};
pub use kernel::{NicDelta, NodeKernel};
pub use model::{
    BlockTest, Cell, CellVerdict, DirCell, Doubt, MeshConfig, MeshNetwork, MeshNode, MeshResult,
    MeshTests, NetExpect, NodeAddr, NotMeasured, PairError, PairResult, Plan, TestFailure,
    TestFailureAt, TestSkipped, LOST_BLOCK_AFTER,
};
pub use net::NetSource;
pub use oifcfg::{OifcfgEntry, OifcfgError, OifcfgRole};
pub use orchestrate::{run, MeshObserver, QuietMesh};
