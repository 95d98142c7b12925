//! What `lab status` and `lab serve` say about a cluster: networks (subnets and
//! switches), every node's addresses per network, and the faults.
use std::fmt::Write as _;
use std::net::{Ipv4Addr, Ipv6Addr};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cluster::topo::{v4, v6};
use crate::cluster::{Cluster, CLUSTER_MTU};
use crate::state::Lab;

/// The cluster part of `lab status --json` (`cluster`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClusterStatus {
    pub nodes: u8,
    pub nets: u8,
    /// The MTU of every NIC and switch port without a fault.
    pub mtu: u32,
    pub networks: Vec<NetworkStatus>,
    pub members: Vec<NodeStatus>,
    pub faults: Vec<FaultStatus>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NetworkStatus {
    /// 1-based network number, as `--fault` takes it.
    pub net: u8,
    /// The NIC name on every node (`net1`).
    pub ifname: String,
    /// The host whose bridge is this network's switch (`sw1`).
    pub switch: String,
    /// 198.19.K.0/24.
    pub v4_subnet: String,
    /// fd6d:7475:19:K::/64.
    pub v6_subnet: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeStatus {
    /// The node's name: nI.
    pub name: String,
    pub netns: String,
    pub addresses: Vec<NodeAddr>,
}

/// A node's address on one network, and its NIC's MTU as built.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeAddr {
    /// Network number, as `--fault` takes it.
    pub net: u8,
    /// The node's NIC on that network (netK).
    pub ifname: String,
    /// 198.19.K.I.
    pub v4: Ipv4Addr,
    /// fd6d:7475:19:K::I.
    pub v6: Ipv6Addr,
    /// The NIC's MTU as built (9000 unless a fault set it).
    pub mtu: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FaultStatus {
    /// The `--fault` value that rebuilds it (`nic-mtu=n3:1:1500`).
    pub spec: String,
    pub kind: super::FaultKind,
    /// The node's host name (`n3`).
    pub node: String,
    pub net: u8,
    pub mtu: Option<u32>,
    pub loss_pct: Option<f64>,
    /// The hosts the fault adds (a router), if any.
    pub router: Option<String>,
    pub effect: String,
}

impl Lab {
    /// Node `name`'s addresses per network (empty for a host that is not a node).
    pub fn node_addrs(&self, name: &str) -> Vec<NodeAddr> {
        let Some(c) = &self.cluster else {
            return Vec::new();
        };
        let Some(i) = (1..=c.nodes).find(|&i| Cluster::node(i) == name) else {
            return Vec::new();
        };
        (1..=c.nets)
            .map(|k| NodeAddr {
                net: k,
                ifname: Cluster::nic(k),
                v4: v4(k, i),
                v6: v6(k, i),
                mtu: c.nic_mtu(i, k),
            })
            .collect()
    }

    /// The cluster as built, or `None` for a lab of other scenarios.
    pub fn cluster_status(&self) -> Option<ClusterStatus> {
        let c = self.cluster.as_ref()?;
        let networks = (1..=c.nets)
            .map(|k| NetworkStatus {
                net: k,
                ifname: Cluster::nic(k),
                switch: Cluster::switch(k),
                v4_subnet: format!("{}/24", v4(k, 0)),
                v6_subnet: format!("{}/64", v6(k, 0)),
            })
            .collect();
        let members = c
            .node_names()
            .into_iter()
            .map(|n| NodeStatus {
                netns: self.netns(&n).unwrap_or_default(),
                addresses: self.node_addrs(&n),
                name: n,
            })
            .collect();
        let faults = c
            .faults
            .iter()
            .map(|f| FaultStatus {
                spec: f.to_string(),
                kind: f.kind(),
                node: Cluster::node(f.node()),
                net: f.net(),
                mtu: f.mtu(),
                loss_pct: match *f {
                    super::Fault::Loss { pct, .. } => Some(pct),
                    _ => None,
                },
                router: f.is_routed().then(|| Cluster::router(f.node(), f.net())),
                effect: f.effect(),
            })
            .collect();
        Some(ClusterStatus {
            nodes: c.nodes,
            nets: c.nets,
            mtu: CLUSTER_MTU,
            networks,
            members,
            faults,
        })
    }
}

impl ClusterStatus {
    /// Networks, then faults ("none" when there are none).
    pub fn render_text(&self) -> String {
        let mut s = format!(
            "cluster: {} nodes (n1..n{}), {} network(s), MTU {} unless a fault says otherwise\n",
            self.nodes, self.nodes, self.nets, self.mtu
        );
        for n in &self.networks {
            let _ = writeln!(
                s,
                "  net{}: NIC {} on every node, switch {}, {} and {} (node nI is .I / ::I)",
                n.net, n.ifname, n.switch, n.v4_subnet, n.v6_subnet
            );
        }
        if self.faults.is_empty() {
            s.push_str("faults: none\n");
        }
        for f in &self.faults {
            let _ = writeln!(s, "fault {}: {}", f.spec, f.effect);
        }
        s
    }
}
