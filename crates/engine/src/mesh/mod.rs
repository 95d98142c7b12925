//! `mesh`: verify a whole cluster. Every node's agent is asked what its interfaces
//! are (discovery); addresses are grouped into networks (subnets shared by at least
//! two nodes); every ordered pair of nodes on each network is tested by a third-party
//! test (the orchestrator asks agent A to test toward agent B's address, from A's own
//! address on that network); the matrix is then read as a whole to name the culprit
//! (a node's NIC, a node's switch port, a whole network, an asymmetric route).

pub mod agent;
mod cells;
pub mod diagnose;
pub mod discover;
pub mod doctor;
pub mod model;
pub mod net;
pub mod orchestrate;
pub mod schedule;
mod third_party;

#[cfg(test)]
mod diagnose_tests;

pub use cells::{diagnose, kind_name};
pub use model::{
    Cell, DirCell, MeshConfig, MeshNetwork, MeshNode, MeshResult, MeshTests, NodeAddr, PairResult,
};
pub use orchestrate::{run, MeshObserver, QuietMesh};
