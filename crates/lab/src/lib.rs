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
pub mod cluster;
mod cmd;
mod down;
pub mod env;
mod error;
mod key;
pub mod scenario;
mod serve;
mod serve_report;
mod state;
mod status;
#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU32, Ordering};

pub use cluster::{Cluster, Fault};
pub use env::check_environment;
pub use error::LabError;
pub use scenario::{Iface, Link, Role, Route, Scenario, Topology};
pub use serve_report::{ServeReport, ServedAgent};
pub use state::{Agent, Host, Lab, STATE_ROOT};
pub use status::{AgentStatus, HostStatus, IfaceStatus, LabStatus, Offloads, TargetStatus};

/// The lab used when no `--name` is given.
pub const DEFAULT_NAME: &str = "default";

/// What `Lab::up` builds.
#[derive(Debug, Clone, PartialEq)]
pub struct LabOptions {
    /// Lab name: letters, digits, `-` and `_`, at most 32 characters.
    pub name: String,
    /// Scenarios to build; empty means all of them.
    pub scenarios: Vec<Scenario>,
    /// `false` turns TSO/GSO/GRO off on every lab interface.
    pub offload: bool,
    /// Shape every link to this rate (bit/s) on both ends' egress (tc tbf).
    pub rate: Option<u64>,
    /// Drop this percentage of UDP datagrams and ICMP echoes (see the crate docs).
    pub loss_pct: Option<f64>,
    /// Build the `cluster` scenario instead of `scenarios`.
    pub cluster: Option<Cluster>,
    /// Print every command as a shell line on stderr.
    pub verbose: bool,
}

impl Default for LabOptions {
    fn default() -> Self {
        LabOptions {
            name: DEFAULT_NAME.into(),
            scenarios: Scenario::ALL.to_vec(),
            offload: true,
            rate: None,
            loss_pct: None,
            cluster: None,
            verbose: false,
        }
    }
}

impl LabOptions {
    /// A cluster lab named `name` (scenario `cluster` alone, offloads on).
    pub fn cluster(name: &str, cluster: Cluster) -> LabOptions {
        LabOptions {
            name: name.into(),
            scenarios: vec![Scenario::Cluster],
            cluster: Some(cluster),
            ..LabOptions::default()
        }
    }
}

/// A lab name unique to this process and call ("t<pid>-<counter>"), for tests that
/// run in parallel.
pub fn unique_name() -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    format!(
        "t{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// For tests: a lab removed on drop, even when the test panics.
#[derive(Debug)]
pub struct LabGuard(pub Lab);

impl LabGuard {
    /// Builds a lab from `opts` under a [`unique_name`] (the name in `opts` is ignored).
    pub fn up(mut opts: LabOptions) -> Result<LabGuard, LabError> {
        opts.name = unique_name();
        Lab::up(&opts).map(LabGuard)
    }
}

impl std::ops::Deref for LabGuard {
    type Target = Lab;
    fn deref(&self) -> &Lab {
        &self.0
    }
}

impl std::ops::DerefMut for LabGuard {
    fn deref_mut(&mut self) -> &mut Lab {
        &mut self.0
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        let _ = Lab::down(&self.0.name, false);
    }
}
