//! From the nodes' discoveries to the networks a mesh tests: subnets on which at
//! least two nodes have an address (`oifcfg getif` lists the same for RAC).

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::IpNet;

use super::model::{MeshNetwork, MeshNode, NodeAddr};

/// Addresses that never carry a cluster interconnect's traffic between nodes.
fn usable(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !v4.is_loopback() && !v4.is_link_local(),
        IpAddr::V6(v6) => !v6.is_loopback() && (v6.segments()[0] & 0xffc0) != 0xfe80,
    }
}

/// "A".."Z", then "AA", "AB", ...
pub fn net_name(i: usize) -> String {
    let letter = |n: usize| char::from(b'A' + (n % 26) as u8);
    if i < 26 {
        letter(i).to_string()
    } else {
        format!("{}{}", letter(i / 26 - 1), letter(i))
    }
}

/// The networks shared by at least two nodes, inside `filter` when it is not empty,
/// in address order, each with its expected MTU (`expect`, else its largest
/// interface MTU). A node with two addresses on one network is tested from the first.
pub fn networks(nodes: &[MeshNode], filter: &[IpNet], expect: Option<u32>) -> Vec<MeshNetwork> {
    let mut by_net: BTreeMap<IpNet, Vec<NodeAddr>> = BTreeMap::new();
    for (n, node) in nodes.iter().enumerate() {
        let Some(d) = &node.discovery else { continue };
        for a in d.addrs.iter().filter(|a| usable(a.addr)) {
            let Ok(net) = IpNet::new(a.addr, a.prefix) else {
                continue;
            };
            let net = net.trunc();
            if !filter.is_empty() && !filter.iter().any(|f| f.contains(&net)) {
                continue;
            }
            let members = by_net.entry(net).or_default();
            if members.iter().any(|m| m.node == n) {
                continue;
            }
            let mtu = d
                .facts
                .ifaces
                .iter()
                .find(|i| i.info.name == a.iface)
                .map_or(0, |i| i.info.mtu);
            members.push(NodeAddr {
                node: n,
                addr: a.addr,
                iface: a.iface.clone(),
                mtu,
            });
        }
    }
    by_net
        .into_iter()
        .filter(|(_, m)| m.len() >= 2)
        .enumerate()
        .map(|(i, (cidr, members))| MeshNetwork {
            name: net_name(i),
            cidr,
            expect: expect.unwrap_or_else(|| members.iter().map(|m| m.mtu).max().unwrap_or(0)),
            members,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use mtuperf_proto::host::IfaceInfo;
    use mtuperf_proto::msg::doctor::{HostFacts, IfaceFacts};
    use mtuperf_proto::msg::mesh::{Discovery, IfaceAddr};

    use super::*;

    fn node(label: &str, addrs: &[(&str, &str, u8, u32)]) -> MeshNode {
        let ifaces = addrs
            .iter()
            .map(|(name, _, _, mtu)| IfaceFacts {
                info: IfaceInfo {
                    name: (*name).into(),
                    mtu: *mtu,
                    ..IfaceInfo::default()
                },
                up: true,
                pause: None,
                counters: None,
                counters_delta: None,
                rp_filter: None,
                steering: None,
            })
            .collect();
        MeshNode {
            label: label.into(),
            agent: String::new(),
            hostname: None,
            error: None,
            max_sessions: None,
            discovery: Some(Discovery {
                facts: HostFacts {
                    ifaces,
                    ..HostFacts::default()
                },
                addrs: addrs
                    .iter()
                    .map(|(iface, a, p, _)| IfaceAddr {
                        iface: (*iface).into(),
                        addr: a.parse().unwrap(),
                        prefix: *p,
                    })
                    .collect(),
            }),
        }
    }

    fn three() -> Vec<MeshNode> {
        vec![
            node(
                "n1",
                &[
                    ("eth1", "10.1.0.1", 24, 9000),
                    ("eth2", "10.2.0.1", 24, 9000),
                    ("eth0", "192.0.2.1", 24, 1500),
                ],
            ),
            node(
                "n2",
                &[
                    ("eth1", "10.1.0.2", 24, 1500),
                    ("eth2", "10.2.0.2", 24, 9000),
                    ("eth0", "192.0.2.77", 28, 1500),
                ],
            ),
            node(
                "n3",
                &[
                    ("eth1", "10.1.0.3", 24, 9000),
                    ("lo", "127.0.0.1", 8, 65536),
                    ("fe", "fe80::1", 64, 1500),
                ],
            ),
        ]
    }

    #[test]
    fn subnets_shared_by_two_nodes_become_networks_named_in_order() {
        let nets = networks(&three(), &[], None);
        let got: Vec<(String, String, usize, u32)> = nets
            .iter()
            .map(|n| {
                (
                    n.name.clone(),
                    n.cidr.to_string(),
                    n.members.len(),
                    n.expect,
                )
            })
            .collect();
        // 192.0.2.0/24 and 192.0.2.64/28 differ: neither is shared; loopback and
        // link-local never count.
        assert_eq!(
            got,
            vec![
                ("A".into(), "10.1.0.0/24".into(), 3, 9000),
                ("B".into(), "10.2.0.0/24".into(), 2, 9000),
            ]
        );
        assert_eq!(nets[0].members[1].mtu, 1500);
    }

    #[test]
    fn the_net_filter_and_expect_apply() {
        let filter = ["10.2.0.0/16".parse().unwrap()];
        let nets = networks(&three(), &filter, Some(1500));
        assert_eq!(nets.len(), 1);
        assert_eq!(nets[0].cidr.to_string(), "10.2.0.0/24");
        assert_eq!(nets[0].expect, 1500);
    }

    #[test]
    fn names_go_past_z() {
        assert_eq!(net_name(0), "A");
        assert_eq!(net_name(25), "Z");
        assert_eq!(net_name(26), "AA");
        assert_eq!(net_name(27), "AB");
    }
}
