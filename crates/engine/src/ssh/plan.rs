//! Which addresses each node's agent listens on, whom it serves, and the address the
//! coordinator reaches it on.
//!
//! - `mesh`: the interconnect addresses: every node's address on each network shared
//!   by at least two of the nodes (as `mesh` finds networks), inside `--net` when given
//!   (the hook `--oifcfg` fills too: a list of networks);
//! - one peer (`path`, `rr`, `stream`, `doctor --peer`): with `--bind`, the node's
//!   address in that address's subnet; else its address on the one network it shares
//!   with this host (several: the user chooses with `--bind`), else the address its SSH
//!   connection arrived on.
//!
//! Every agent allows only the coordinator's own addresses and the other nodes'
//! listening addresses (a third-party test connects from one node's agent to another).

use std::net::IpAddr;

use ipnet::IpNet;
use mtuperf_proto::msg::doctor::HostFacts;
use mtuperf_proto::msg::mesh::{Discovery, IfaceAddr};

use super::failure::{Cause, SharedNet};
use super::wire::Hello;
use crate::mesh::{net, MeshNode, OifcfgEntry};

/// How the nodes' listening addresses are chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Every address on a network shared by two nodes, within these (empty: all);
    /// with `oifcfg`, the addresses on its interconnect subnets and HAIP's.
    Mesh {
        nets: Vec<IpNet>,
        oifcfg: Option<Vec<OifcfgEntry>>,
    },
    /// One node tested from this host, on the network holding `local` when given.
    /// `asked_only` (doctor: the agent is only asked for its facts): with several
    /// networks shared, the address SSH arrived on rather than an error.
    Peer {
        local: Option<IpAddr>,
        asked_only: bool,
    },
}

fn mesh_node(label: &str, discovery: Discovery) -> MeshNode {
    MeshNode {
        label: label.to_string(),
        agent: String::new(),
        hostname: None,
        error: None,
        max_sessions: None,
        discovery: Some(discovery),
    }
}

/// This host as a node: its addresses only.
fn me(own: &[IfaceAddr]) -> MeshNode {
    mesh_node(
        "this host",
        Discovery {
            facts: HostFacts::default(),
            addrs: own.to_vec(),
            down: Vec::new(),
        },
    )
}

/// Each node's addresses to listen on (in the nodes' order), or why it has none.
pub fn binds(
    plan: &Plan,
    hellos: &[Option<(&str, &Hello)>],
    own: &[IfaceAddr],
) -> Vec<Result<Vec<IpAddr>, Cause>> {
    match plan {
        Plan::Mesh { nets, oifcfg } => mesh_binds(nets, oifcfg.as_deref(), hellos),
        Plan::Peer { local, asked_only } => hellos
            .iter()
            .map(|h| {
                h.map_or_else(
                    || Err(Cause::NotGreeted),
                    |(l, h)| peer_bind(*local, *asked_only, l, h, own),
                )
            })
            .collect(),
    }
}

fn mesh_binds(
    nets: &[IpNet],
    oifcfg: Option<&[OifcfgEntry]>,
    hellos: &[Option<(&str, &Hello)>],
) -> Vec<Result<Vec<IpAddr>, Cause>> {
    let nodes: Vec<MeshNode> = hellos
        .iter()
        .map(|h| match h {
            Some((label, h)) => mesh_node(label, h.discovery.clone()),
            None => mesh_node(
                "",
                Discovery {
                    facts: HostFacts::default(),
                    addrs: Vec::new(),
                    down: Vec::new(),
                },
            ),
        })
        .collect();
    let networks = net::networks(&nodes, &net::Select { nets, oifcfg }, None, &[]);
    (0..nodes.len())
        .map(|i| {
            let mine: Vec<IpAddr> = networks
                .iter()
                .flat_map(|n| n.members.iter().filter(|m| m.node == i).map(|m| m.addr))
                .collect();
            if hellos.get(i).is_none_or(Option::is_none) {
                Err(Cause::NotGreeted)
            } else if mine.is_empty() && oifcfg.is_some() {
                Err(Cause::NoOifcfgInterconnect)
            } else if mine.is_empty() {
                Err(Cause::NoSharedNetwork {
                    nets: nets.to_vec(),
                })
            } else {
                Ok(mine)
            }
        })
        .collect()
}

fn peer_bind(
    local: Option<IpAddr>,
    asked_only: bool,
    label: &str,
    h: &Hello,
    own: &[IfaceAddr],
) -> Result<Vec<IpAddr>, Cause> {
    let nodes = [me(own), mesh_node(label, h.discovery.clone())];
    let shared = net::networks(&nodes, &net::Select::default(), None, &[]);
    let on = |n: &crate::mesh::MeshNetwork| n.members.iter().find(|m| m.node == 1).map(|m| m.addr);
    if let Some(l) = local {
        // The node's address in the subnet of --bind (whatever kind it is).
        return h
            .addrs
            .iter()
            .find(|a| IpNet::new(a.addr, a.prefix).is_ok_and(|n| n.contains(&l)))
            .map(|a| vec![a.addr])
            .ok_or_else(|| Cause::NotOnBindNetwork {
                node: label.to_string(),
                bind: l,
            });
    }
    let no_network = || Cause::NoPeerNetwork {
        node: label.to_string(),
    };
    match shared.as_slice() {
        // A network shared has this node among its members, always.
        [one] => on(one).map(|a| vec![a]).ok_or_else(no_network),
        [] | [_, _, ..] if asked_only && h.ssh_server.is_some() => {
            Ok(h.ssh_server.into_iter().collect())
        }
        [] => h.ssh_server.map(|a| vec![a]).ok_or_else(no_network),
        many => Err(Cause::ManyNetworks {
            node: label.to_string(),
            networks: many
                .iter()
                .filter_map(|n| {
                    Some(SharedNet {
                        cidr: n.cidr,
                        addr: on(n)?,
                    })
                })
                .collect(),
        }),
    }
}

/// Where the coordinator reaches a node's agent: its address on a network this host
/// has an address in, else its first.
pub fn control(binds: &[IpAddr], own: &[IfaceAddr]) -> Option<IpAddr> {
    let near = |b: &IpAddr| {
        own.iter()
            .any(|a| IpNet::new(a.addr, a.prefix).is_ok_and(|n| n.contains(b)))
    };
    binds.iter().find(|b| near(b)).or(binds.first()).copied()
}

/// The clients every agent allows: this host's addresses (loopback aside: the agents
/// listen on none) and every node's listening addresses, each as a host prefix.
pub fn allow(own: &[IfaceAddr], binds: &[Vec<IpAddr>]) -> Vec<IpNet> {
    let mut v: Vec<IpNet> = own
        .iter()
        .map(|a| a.addr)
        .filter(|a| !a.is_loopback())
        .chain(binds.iter().flatten().copied())
        .map(IpNet::from)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(addrs: &[(&str, &str, u8)], server: Option<&str>) -> Hello {
        Hello {
            version: "v".into(),
            discovery: Discovery {
                facts: HostFacts::default(),
                addrs: addrs
                    .iter()
                    .map(|(i, a, p)| IfaceAddr {
                        iface: (*i).into(),
                        addr: a.parse().unwrap(),
                        prefix: *p,
                    })
                    .collect(),
                down: Vec::new(),
            },
            ssh_server: server.map(|s| s.parse().unwrap()),
            ssh_client: None,
            addrs: addrs
                .iter()
                .map(|(i, a, p)| IfaceAddr {
                    iface: (*i).into(),
                    addr: a.parse().unwrap(),
                    prefix: *p,
                })
                .collect(),
        }
    }

    fn ips(v: &[&str]) -> Vec<IpAddr> {
        v.iter().map(|s| s.parse().unwrap()).collect()
    }

    #[test]
    fn mesh_binds_only_networks_shared_by_two_nodes() {
        let n1 = hello(
            &[
                ("pub", "10.0.0.1", 24),
                ("ic1", "192.168.1.1", 24),
                ("ic2", "192.168.2.1", 24),
            ],
            None,
        );
        let n2 = hello(
            &[
                ("pub", "10.0.0.2", 24),
                ("ic1", "192.168.1.2", 24),
                ("ic2", "192.168.2.2", 24),
                ("x", "172.16.0.2", 24),
            ],
            None,
        );
        let n3 = hello(&[("pub", "10.9.0.3", 24)], None);
        let hs = [
            Some(("n1", &n1)),
            Some(("n2", &n2)),
            Some(("n3", &n3)),
            None,
        ];
        let plan = Plan::Mesh {
            nets: vec!["192.168.0.0/16".parse().unwrap()],
            oifcfg: None,
        };
        let b = binds(&plan, &hs, &[]);
        assert_eq!(b[0], Ok(ips(&["192.168.1.1", "192.168.2.1"])));
        assert_eq!(b[1], Ok(ips(&["192.168.1.2", "192.168.2.2"])));
        assert_eq!(
            b[2],
            Err(Cause::NoSharedNetwork {
                nets: vec!["192.168.0.0/16".parse().unwrap()]
            })
        );
        assert_eq!(b[3], Err(Cause::NotGreeted));
        // Without --net the public network is shared too.
        let b = binds(
            &Plan::Mesh {
                nets: vec![],
                oifcfg: None,
            },
            &hs,
            &[],
        );
        assert_eq!(b[0], Ok(ips(&["10.0.0.1", "192.168.1.1", "192.168.2.1"])));
    }

    #[test]
    fn with_oifcfg_agents_bind_the_interconnect_and_its_haip_addresses_only() {
        let node = |i: u8| {
            hello(
                &[
                    ("pub", &format!("10.0.0.{i}"), 24),
                    ("ic1", &format!("192.168.1.{i}"), 24),
                    ("ic1", &format!("169.254.1.{i}"), 17),
                    ("ic2", &format!("192.168.2.{i}"), 24),
                    ("ic2", &format!("169.254.200.{i}"), 17),
                ],
                None,
            )
        };
        let (n1, n2, n3) = (node(1), node(2), hello(&[("pub", "10.0.0.3", 24)], None));
        let hs = [Some(("n1", &n1)), Some(("n2", &n2)), Some(("n3", &n3))];
        let oifcfg = crate::mesh::oifcfg::parse(
            "pub 10.0.0.0 global public\nic1 192.168.1.0 global cluster_interconnect\n",
        )
        .unwrap();
        let plan = Plan::Mesh {
            nets: vec![],
            oifcfg: Some(oifcfg),
        };
        let b = binds(&plan, &hs, &[]);
        // ic1's subnet and its HAIP address; neither the public network nor ic2.
        assert_eq!(b[0], Ok(ips(&["192.168.1.1", "169.254.1.1"])));
        assert_eq!(b[1], Ok(ips(&["192.168.1.2", "169.254.1.2"])));
        assert_eq!(b[2], Err(Cause::NoOifcfgInterconnect));
    }

    #[test]
    fn a_peer_binds_its_address_on_the_shared_network() {
        let own = hello(
            &[("ic1", "192.168.1.1", 24), ("ic2", "192.168.2.1", 24)],
            None,
        );
        let peer = |local: Option<&str>, asked_only: bool, h: &Hello| {
            let plan = Plan::Peer {
                local: local.map(|l| l.parse().unwrap()),
                asked_only,
            };
            binds(&plan, &[Some(("n2", h))], &own.discovery.addrs).remove(0)
        };
        let one = hello(
            &[("ic1", "192.168.1.2", 24), ("pub", "10.0.0.2", 24)],
            Some("10.0.0.2"),
        );
        assert_eq!(peer(None, false, &one), Ok(ips(&["192.168.1.2"])));
        let two = hello(
            &[("ic1", "192.168.1.2", 24), ("ic2", "192.168.2.2", 24)],
            Some("10.0.0.2"),
        );
        let shared = |cidr: &str, addr: &str| SharedNet {
            cidr: cidr.parse().unwrap(),
            addr: addr.parse().unwrap(),
        };
        assert_eq!(
            peer(None, false, &two),
            Err(Cause::ManyNetworks {
                node: "n2".into(),
                networks: vec![
                    shared("192.168.1.0/24", "192.168.1.2"),
                    shared("192.168.2.0/24", "192.168.2.2")
                ]
            })
        );
        assert_eq!(
            peer(Some("192.168.2.1"), false, &two),
            Ok(ips(&["192.168.2.2"]))
        );
        assert_eq!(
            peer(Some("172.16.0.1"), false, &two),
            Err(Cause::NotOnBindNetwork {
                node: "n2".into(),
                bind: "172.16.0.1".parse().unwrap()
            })
        );
        // Only asked (doctor): where SSH arrived rather than an error.
        assert_eq!(peer(None, true, &two), Ok(ips(&["10.0.0.2"])));
        // Nothing shared: where SSH arrived.
        let far = hello(&[("pub", "10.0.0.2", 24)], Some("10.0.0.2"));
        assert_eq!(peer(None, false, &far), Ok(ips(&["10.0.0.2"])));
        // Nothing shared and no SSH_CONNECTION: nowhere to listen.
        let lost = hello(&[("pub", "10.0.0.2", 24)], None);
        assert_eq!(
            peer(None, false, &lost),
            Err(Cause::NoPeerNetwork { node: "n2".into() })
        );
    }

    #[test]
    fn control_prefers_a_near_address_and_allow_lists_hosts() {
        let own = hello(&[("lo", "127.0.0.1", 8), ("ic2", "192.168.2.1", 24)], None)
            .discovery
            .addrs;
        assert_eq!(
            control(&ips(&["192.168.1.2", "192.168.2.2"]), &own),
            Some(ips(&["192.168.2.2"])[0])
        );
        assert_eq!(
            control(&ips(&["10.1.1.1"]), &own),
            Some(ips(&["10.1.1.1"])[0])
        );
        let a = allow(
            &own,
            &[ips(&["192.168.2.2"]), ips(&["192.168.2.3", "192.168.2.2"])],
        );
        let a: Vec<String> = a.iter().map(ToString::to_string).collect();
        assert_eq!(a, ["192.168.2.1/32", "192.168.2.2/32", "192.168.2.3/32"]);
    }
}
