//! `mtuperf lab`: test networks in network namespaces on one machine.
//!
//! A lab is one client host with one interface per scenario, one server host per
//! scenario, a router for `routed`, `blackhole` and `asym`, a bridge (L2 switch) for
//! `switchport` — or, for the `cluster` scenario ([`cluster`]), N node hosts on K
//! bridged networks with injected faults — joined by veth pairs created
//! directly inside the namespaces (nothing appears in the host's own namespace).
//! Addresses come from 198.18.0.0/15 (RFC 2544) and fd6d:7475::/48; see
//! [`scenario::Topology`]. Namespaces (kept in `/run/netns` as iproute2 keeps them),
//! links, addresses, routes, MTUs and offloads are made through netlink and ethtool
//! ioctls (`mtuperf_sys::{netns, rtnl, ethtool}`), agents and `exec` commands enter
//! their namespace themselves: no program is needed but `tc` for `rate` and `nft` for
//! `blackhole` and `loss_pct` (`verbose` echoes every step as the shell line that does
//! it by hand). State lives in `/run/mtuperf/lab/<name>/state.json`.
//!
//! `loss_pct` drops that share of UDP datagrams (whole datagrams: the input hook runs
//! after IP reassembly, so a fragmented datagram is never cut short by one lost
//! fragment) and of
//! ICMP echo requests/replies at the input of the client and of every server host, so
//! every one-way crossing of a lab path meets the loss once (a ping round trip twice).
//! TCP, ICMP errors and neighbour discovery are never dropped, so agent control
//! connections and PMTU discovery keep working.
mod build;
mod build_cluster;
pub mod cluster;
pub mod cluster_view;
mod cmd;
mod down;
pub mod env;
mod error;
pub mod forward;
mod guard;
mod key;
mod options;
mod rules;
pub mod scenario;
mod serve;
mod serve_report;
mod sshd;
mod state;
mod status;
#[cfg(test)]
mod tests;

pub use cluster::{Cluster, Fault, FaultKind};
pub use cmd::shell_line;
pub use env::check_environment;
pub use error::LabError;
pub use guard::{unique_name, LabGuard};
pub use options::{LabOptions, DEFAULT_NAME};
pub use scenario::{Iface, Link, Role, Route, Scenario, Topology};
pub use serve_report::{ServeReport, ServedAgent, SCHEMA as SERVE_SCHEMA};
pub use sshd::{SshdNode, SshdReport, SSHD};
pub use state::{Agent, Host, Lab, STATE_ROOT};
pub use status::{
    AgentStatus, HostStatus, IfaceStatus, LabStatus, Offloads, TargetStatus,
    SCHEMA as STATUS_SCHEMA,
};
