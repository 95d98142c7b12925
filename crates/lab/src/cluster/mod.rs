//! The `cluster` scenario: N node namespaces (`n1`..`nN`), each with one NIC per
//! private network (`net1`..`netK`), every network one Linux bridge (the "switch",
//! host `sw1`..`swK`) with one port per node (port `nI` in front of node I), MTU
//! 9000 everywhere, plus injected faults (see [`Fault`]).
//!
//! Addressing (inside the lab's 198.18.0.0/15, apart from the other scenarios'
//! 198.18.0.0/16): node I on network K is `198.19.K.I/24` and `fd6d:7475:19:K::I/64`
//! (the IPv6 digits read as the IPv4 ones). A router placed by a `routed` or
//! `blackhole` fault in front of node I on network K has `198.19.K.(100+I)` on the
//! switch side and reaches the node over its own segment by proxy ARP / proxy NDP,
//! so the node keeps its address in the network's subnet.
mod fault;
pub(crate) mod tools;
pub(crate) mod topo;

use serde::{Deserialize, Serialize};

pub use fault::{Fault, FaultKind};

use crate::error::LabError;

/// Node count allowed by `--nodes`.
pub const NODES: std::ops::RangeInclusive<u8> = 2..=64;
/// Network count allowed by `--nets`.
pub const NETS: std::ops::RangeInclusive<u8> = 1..=4;
/// The MTU of every NIC and switch port unless a fault says otherwise.
pub const CLUSTER_MTU: u32 = 9000;

/// What `lab up --scenario cluster` builds: sizes and faults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub nodes: u8,
    pub nets: u8,
    pub faults: Vec<Fault>,
    /// HAIP-style link-local addresses (169.254.0.0/18 per network) on the private NICs.
    pub haip: bool,
    /// A public network at 1500 (`pub0` on every node, switch `swpub`, 198.19.100.0/24).
    pub public: bool,
}

impl Cluster {
    /// Checks the sizes and every fault against them (and against each other).
    pub fn new(nodes: u32, nets: u32, faults: Vec<Fault>) -> Result<Cluster, LabError> {
        let in_range = |n: u32, r: &std::ops::RangeInclusive<u8>| {
            u8::try_from(n).ok().filter(|n| r.contains(n))
        };
        let Some(nodes) = in_range(nodes, &NODES) else {
            return Err(LabError::BadFlag {
                flag: "--nodes",
                value: nodes.to_string(),
                allowed: "2 to 64".into(),
                hint: "a cluster lab has at least 2 and at most 64 node namespaces".into(),
            });
        };
        let Some(nets) = in_range(nets, &NETS) else {
            return Err(LabError::BadFlag {
                flag: "--nets",
                value: nets.to_string(),
                allowed: "1 to 4".into(),
                hint: "one bridge per private network, as RAC's HAIP uses up to four".into(),
            });
        };
        let c = Cluster {
            nodes,
            nets,
            faults: Vec::new(),
            haip: false,
            public: false,
        };
        let mut placed: Vec<&Fault> = Vec::new();
        for f in &faults {
            f.check(&c, &placed)?;
            placed.push(f);
        }
        Ok(Cluster { faults, ..c })
    }

    /// The public network's NIC on every node, its switch, its "network number" in the
    /// addresses (198.19.100.I) and its MTU.
    pub const PUBLIC_NIC: &'static str = "pub0";
    pub const PUBLIC_SWITCH: &'static str = "swpub";
    pub const PUBLIC_NET: u8 = 100;
    pub const PUBLIC_MTU: u32 = 1500;

    /// With HAIP addresses on the private NICs and a public network at 1500.
    #[must_use]
    pub fn with(self, haip: bool, public: bool) -> Cluster {
        Cluster {
            haip,
            public,
            ..self
        }
    }

    /// The host name of node `i` (1-based).
    pub fn node(i: u8) -> String {
        format!("n{i}")
    }

    /// The switch host of network `k` (1-based).
    pub fn switch(k: u8) -> String {
        format!("sw{k}")
    }

    /// The router host a `routed`/`blackhole` fault puts in front of node `i` on `k`.
    pub fn router(i: u8, k: u8) -> String {
        format!("n{i}-net{k}-rt")
    }

    /// A node's NIC on network `k`.
    pub fn nic(k: u8) -> String {
        format!("net{k}")
    }

    /// The switch port (in `swK`) in front of node `i`.
    pub fn port(i: u8) -> String {
        format!("n{i}")
    }

    /// Node names, in order.
    pub fn node_names(&self) -> Vec<String> {
        (1..=self.nodes).map(Cluster::node).collect()
    }

    /// Every host name a cluster lab of any size could have: `lab down` looks for
    /// them when an interrupted build left no state.
    pub fn all_host_names() -> Vec<String> {
        let mut v: Vec<String> = (1..=*NODES.end()).map(Cluster::node).collect();
        v.extend((1..=*NETS.end()).map(Cluster::switch));
        v.push(Cluster::PUBLIC_SWITCH.into());
        for i in 1..=*NODES.end() {
            v.extend((1..=*NETS.end()).map(|k| Cluster::router(i, k)));
        }
        v
    }

    /// The fault of kind routed/blackhole in front of node `i` on network `k`.
    pub(crate) fn router_fault(&self, i: u8, k: u8) -> Option<&Fault> {
        self.faults
            .iter()
            .find(|f| f.is_routed() && f.node() == i && f.net() == k)
    }
}

/// Parses `--nodes`/`--nets`/`--fault` values (the CLI's strings) into a [`Cluster`].
pub fn parse(nodes: u32, nets: u32, faults: &[String]) -> Result<Cluster, LabError> {
    let faults = faults
        .iter()
        .map(|f| f.parse::<Fault>())
        .collect::<Result<Vec<_>, _>>()?;
    Cluster::new(nodes, nets, faults)
}

#[cfg(test)]
mod tests;
