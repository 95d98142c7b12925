//! A [`Cluster`] as a [`Topology`]: hosts, veth links, addresses and MTUs (faults that
//! set an MTU are data here; the rest is done by `build.rs`).
use std::net::{Ipv4Addr, Ipv6Addr};

use super::{Cluster, Fault, CLUSTER_MTU};
use crate::scenario::{Iface, Link, Role, Scenario, Topology};

/// Node `i`'s IPv4 address on network `k`: 198.19.K.I.
pub fn v4(k: u8, i: u8) -> Ipv4Addr {
    Ipv4Addr::new(198, 19, k, i)
}

/// fd6d:7475:19:K::I, the digits of K and I read as hex (as the other scenarios do).
pub fn v6(k: u8, i: u8) -> Ipv6Addr {
    let digits = |n: u8| u16::from_str_radix(&n.to_string(), 16).unwrap_or(0);
    Ipv6Addr::new(0xfd6d, 0x7475, 0x19, digits(k), 0, 0, 0, digits(i))
}

/// The switch-side address of the router in front of node `i` (198.19.K.(100+I)).
pub fn router_host_part(i: u8) -> u8 {
    100 + i
}

fn iface(host: &str, name: &str, mtu: u32, k: u8, i: u8, full: bool) -> Iface {
    Iface {
        host: host.into(),
        name: name.into(),
        mtu,
        v4: v4(k, i),
        v4_prefix: if full { 24 } else { 32 },
        v6: v6(k, i),
        v6_prefix: if full { 64 } else { 128 },
    }
}

impl Cluster {
    fn mtu_of(&self, i: u8, k: u8, pick: fn(&Fault) -> Option<u32>) -> u32 {
        self.faults
            .iter()
            .filter(|f| f.node() == i && f.net() == k)
            .find_map(pick)
            .unwrap_or(CLUSTER_MTU)
    }

    /// The MTU of node `i`'s NIC on `k`.
    pub fn nic_mtu(&self, i: u8, k: u8) -> u32 {
        self.mtu_of(i, k, |f| match *f {
            Fault::NicMtu { mtu, .. }
            | Fault::Routed { mtu, .. }
            | Fault::Blackhole { mtu, .. } => Some(mtu),
            _ => None,
        })
    }

    /// The MTU of switch `k`'s port in front of node `i`.
    pub fn port_mtu(&self, i: u8, k: u8) -> u32 {
        self.mtu_of(i, k, |f| match *f {
            Fault::PortMtu { mtu, .. } => Some(mtu),
            _ => None,
        })
    }
}

impl Topology {
    /// Nodes, then switches, then routers; per network, per node: the node's NIC to
    /// its switch port, or the node's NIC to a router and the router to the port.
    pub fn cluster(c: &Cluster) -> Topology {
        let mut t = Topology::default();
        t.hosts
            .extend(c.node_names().into_iter().map(|n| (n, Role::Node)));
        t.hosts
            .extend((1..=c.nets).map(|k| (Cluster::switch(k), Role::Switch)));
        if c.public {
            let sw = Cluster::PUBLIC_SWITCH.to_string();
            let k = Cluster::PUBLIC_NET;
            t.hosts.push((sw.clone(), Role::Switch));
            for i in 1..=c.nodes {
                let m = Cluster::PUBLIC_MTU;
                t.links.push(Link {
                    scenario: Scenario::Cluster,
                    a: iface(&Cluster::node(i), Cluster::PUBLIC_NIC, m, k, i, true),
                    b: iface(&sw, &Cluster::port(i), m, k, 250, true),
                });
            }
        }
        for k in 1..=c.nets {
            let sw = Cluster::switch(k);
            for i in 1..=c.nodes {
                let node = Cluster::node(i);
                let nic = iface(&node, &Cluster::nic(k), c.nic_mtu(i, k), k, i, true);
                let port_mtu = c.port_mtu(i, k);
                let port = |host_part| iface(&sw, &Cluster::port(i), port_mtu, k, host_part, true);
                let link = |a, b| Link {
                    scenario: Scenario::Cluster,
                    a,
                    b,
                };
                if let Some(f) = c.router_fault(i, k) {
                    let rt = Cluster::router(i, k);
                    let r = router_host_part(i);
                    let seg = f.mtu().unwrap_or(CLUSTER_MTU);
                    t.hosts.push((rt.clone(), Role::Router));
                    // The router's node-side end carries its switch-side address as a
                    // host address (/32, /128): the node is reached by proxy ARP/NDP.
                    t.links
                        .push(link(nic, iface(&rt, "eth1", seg, k, r, false)));
                    t.links
                        .push(link(iface(&rt, "eth0", CLUSTER_MTU, k, r, true), port(250)));
                } else {
                    t.links.push(link(nic, port(250)));
                }
            }
        }
        t
    }
}
