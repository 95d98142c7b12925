//! From the nodes' discoveries to the networks a mesh tests: subnets on which at
//! least two nodes have an address, inside `--net` when given; or, with `--oifcfg`,
//! exactly the subnets `oifcfg getif` marks `cluster_interconnect` (named by
//! interface, as Oracle does) and the HAIP link-local subnets on those interfaces.

use std::collections::BTreeMap;
use std::net::IpAddr;

use ipnet::IpNet;

pub use super::doc::NetSource;
use super::finding::{Finding, MeshFinding, NicAbsence};
use super::model::{MeshNetwork, MeshNode, NetExpect, NodeAddr};
use super::oifcfg::OifcfgEntry;

/// Which networks to test.
#[derive(Debug, Clone, Copy, Default)]
pub struct Select<'a> {
    /// Only networks inside these (empty: every shared subnet).
    pub nets: &'a [IpNet],
    /// `--oifcfg`: exactly these entries' interconnect subnets, and HAIP's.
    pub oifcfg: Option<&'a [OifcfgEntry]>,
}

/// Addresses that never carry a cluster interconnect's traffic between nodes (HAIP's
/// link-local addresses do, and are taken from the interconnect's interfaces only).
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

/// Node `n`'s interface `iface` MTU as discovered (0: unknown).
fn nic_mtu(node: &MeshNode, iface: &str) -> u32 {
    node.discovery
        .as_ref()
        .and_then(|d| d.facts.ifaces.iter().find(|i| i.info.name == iface))
        .map_or(0, |i| i.info.mtu)
}

type Groups = BTreeMap<(usize, IpNet), (NetSource, Vec<NodeAddr>)>;

/// Adds `member` to the network `key` (a node's first address on a network is the
/// one tested from).
fn add(by_net: &mut Groups, key: (usize, IpNet), source: NetSource, member: NodeAddr) {
    let (_, members) = by_net.entry(key).or_insert_with(|| (source, Vec::new()));
    if !members.iter().any(|m| m.node == member.node) {
        members.push(member);
    }
}

fn member(node: &MeshNode, n: usize, a: &mtuperf_proto::msg::mesh::IfaceAddr) -> NodeAddr {
    NodeAddr {
        node: n,
        addr: a.addr,
        iface: a.iface.clone(),
        mtu: nic_mtu(node, &a.iface),
    }
}

/// Subnets shared by two nodes, inside `filter` when it is not empty.
fn shared(nodes: &[MeshNode], filter: &[IpNet], by_net: &mut Groups) {
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
            add(by_net, (0, net), NetSource::Shared, member(node, n, a));
        }
    }
}

/// The interconnect subnets of `entries` (grouped in the entries' order), then the
/// HAIP link-local subnets on the interfaces that carry them.
fn interconnect(nodes: &[MeshNode], entries: &[OifcfgEntry], by_net: &mut Groups) {
    let mut haip_ifaces: Vec<(usize, String)> = Vec::new();
    for (ei, e) in entries.iter().enumerate().filter(|(_, e)| e.interconnect()) {
        for (n, node) in nodes.iter().enumerate() {
            let Some(d) = &node.discovery else { continue };
            if !e.applies_to(&node.label, node.hostname.as_deref()) {
                continue;
            }
            for a in d.addrs.iter().filter(|a| e.matches_iface(&a.iface)) {
                let Ok(net) = IpNet::new(a.addr, a.prefix) else {
                    continue;
                };
                if net.network() != e.subnet || !usable(a.addr) {
                    continue;
                }
                let source = NetSource::Oifcfg {
                    iface: e.iface.clone(),
                    subnet: e.subnet,
                };
                add(by_net, (ei + 1, net.trunc()), source, member(node, n, a));
                haip_ifaces.push((n, a.iface.clone()));
            }
        }
    }
    let haip_key = entries.len() + 1;
    for (n, node) in nodes.iter().enumerate() {
        let Some(d) = &node.discovery else { continue };
        for a in &d.addrs {
            let IpAddr::V4(v4) = a.addr else { continue };
            if !v4.is_link_local() || !haip_ifaces.contains(&(n, a.iface.clone())) {
                continue;
            }
            let Ok(net) = IpNet::new(a.addr, a.prefix) else {
                continue;
            };
            let source = NetSource::Haip {
                iface: a.iface.clone(),
            };
            add(by_net, (haip_key, net.trunc()), source, member(node, n, a));
        }
    }
}

/// The name of a network: oifcfg's interface ("eth1"), "eth1 HAIP", else a letter.
fn name(i: usize, source: &NetSource) -> String {
    match source {
        NetSource::Shared => net_name(i),
        NetSource::Oifcfg { iface, .. } => iface.clone(),
        NetSource::Haip { iface } => format!("{iface} HAIP"),
    }
}

/// The MTU network `cidr` must carry: the first of `per` (`--expect CIDR=MTU`) whose
/// CIDR holds it, else `all` (`--expect MTU`), else `largest`, its largest NIC MTU.
pub fn expected(cidr: &IpNet, all: Option<u32>, per: &[NetExpect], largest: u32) -> u32 {
    per.iter()
        .find(|e| e.net.contains(cidr))
        .map(|e| e.mtu)
        .or(all)
        .unwrap_or(largest)
}

/// The networks to test, in order (`--oifcfg`: its lines', then HAIP's; else address
/// order), each with at least two nodes and its expected MTU ([`expected`]).
pub fn networks(
    nodes: &[MeshNode],
    select: &Select<'_>,
    expect: Option<u32>,
    per: &[NetExpect],
) -> Vec<MeshNetwork> {
    let mut by_net = Groups::new();
    match select.oifcfg {
        Some(entries) => interconnect(nodes, entries, &mut by_net),
        None => shared(nodes, select.nets, &mut by_net),
    }
    by_net
        .into_iter()
        .filter(|(_, (_, m))| m.len() >= 2)
        .enumerate()
        .map(|(i, ((_, cidr), (source, members)))| MeshNetwork {
            name: name(i, &source),
            cidr,
            expect: expected(
                &cidr,
                expect,
                per,
                members.iter().map(|m| m.mtu).max().unwrap_or(0),
            ),
            members,
            source,
        })
        .collect()
}

/// `--oifcfg`: every node without an up interface holding an address in an
/// interconnect subnet. Oracle then treats that subnet as unusable cluster-wide.
pub fn absent(nodes: &[MeshNode], entries: &[OifcfgEntry]) -> Vec<MeshFinding> {
    let mut out = Vec::new();
    for e in entries.iter().filter(|e| e.interconnect()) {
        for (n, node) in nodes.iter().enumerate() {
            let Some(d) = &node.discovery else { continue };
            if !e.applies_to(&node.label, node.hostname.as_deref()) {
                continue;
            }
            let holds = d.addrs.iter().any(|a| {
                e.matches_iface(&a.iface)
                    && IpNet::new(a.addr, a.prefix).is_ok_and(|x| x.network() == e.subnet)
            });
            if holds {
                continue;
            }
            let why = if d.down.iter().any(|i| e.matches_iface(i)) {
                NicAbsence::Down
            } else if d.facts.ifaces.iter().any(|i| e.matches_iface(&i.info.name)) {
                NicAbsence::NoAddress
            } else {
                NicAbsence::Missing
            };
            out.push(MeshFinding::new(
                None,
                Some(n),
                Finding::InterconnectAbsent {
                    iface: e.iface.clone(),
                    subnet: e.subnet,
                    why,
                },
            ));
        }
    }
    out
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
                down: Vec::new(),
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
        let nets = networks(&three(), &Select::default(), None, &[]);
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
        let select = Select {
            nets: &filter,
            oifcfg: None,
        };
        let nets = networks(&three(), &select, Some(1500), &[]);
        assert_eq!(nets.len(), 1);
        assert_eq!(nets[0].cidr.to_string(), "10.2.0.0/24");
        assert_eq!(nets[0].expect, 1500);
    }

    /// Three RAC nodes: a public eth0, interconnects eth1 and eth2 each with a HAIP
    /// address; n3's eth2 down.
    fn rac() -> Vec<MeshNode> {
        let mut v = Vec::new();
        for i in 1..=3u8 {
            let mut a = vec![
                ("eth0", format!("10.0.0.{i}"), 24, 1500),
                ("eth1", format!("192.168.10.{i}"), 24, 9000),
                ("eth1", format!("169.254.10.{i}"), 17, 9000),
            ];
            if i < 3 {
                a.push(("eth2", format!("192.168.11.{i}"), 24, 9000));
                a.push(("eth2", format!("169.254.130.{i}"), 17, 9000));
            }
            let a: Vec<(&str, &str, u8, u32)> = a
                .iter()
                .map(|(n, x, p, m)| (*n, x.as_str(), *p, *m))
                .collect();
            let mut n = node(&format!("n{i}"), &a);
            if i == 3 {
                n.discovery.as_mut().unwrap().down = vec!["eth2".into()];
            }
            v.push(n);
        }
        v
    }

    #[test]
    fn oifcfg_selects_the_interconnect_subnets_by_interface_and_their_haip_subnets() {
        let entries = crate::mesh::oifcfg::parse(
            "eth0  10.0.0.0  global  public\n\
             eth1  192.168.10.0  global  cluster_interconnect\n\
             eth2  192.168.11.0  global  cluster_interconnect,asm\n",
        )
        .unwrap();
        let nodes = rac();
        let select = Select {
            nets: &[],
            oifcfg: Some(&entries),
        };
        let nets = networks(&nodes, &select, None, &[]);
        let got: Vec<(String, String, usize)> = nets
            .iter()
            .map(|n| (n.name.clone(), n.cidr.to_string(), n.members.len()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("eth1".into(), "192.168.10.0/24".into(), 3),
                ("eth2".into(), "192.168.11.0/24".into(), 2),
                ("eth1 HAIP".into(), "169.254.0.0/17".into(), 3),
                ("eth2 HAIP".into(), "169.254.128.0/17".into(), 2),
            ]
        );
        assert_eq!(
            nets[0].source,
            NetSource::Oifcfg {
                iface: "eth1".into(),
                subnet: "192.168.10.0".parse().unwrap()
            }
        );
        assert_eq!(
            nets[2].source,
            NetSource::Haip {
                iface: "eth1".into()
            }
        );
        // The public network is not tested; n3's eth2 is down: one finding, by name.
        let f = absent(&nodes, &entries);
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].node, Some(2));
        assert_eq!(
            f[0].what,
            Finding::InterconnectAbsent {
                iface: "eth2".into(),
                subnet: "192.168.11.0".parse().unwrap(),
                why: NicAbsence::Down
            }
        );
        // Without --oifcfg, HAIP's link-local addresses are never a network.
        let all = networks(&nodes, &Select::default(), None, &[]);
        assert!(all
            .iter()
            .all(|n| !n.cidr.to_string().starts_with("169.254")));
    }

    #[test]
    fn names_go_past_z() {
        assert_eq!(net_name(0), "A");
        assert_eq!(net_name(25), "Z");
        assert_eq!(net_name(26), "AA");
        assert_eq!(net_name(27), "AB");
    }

    /// `--expect`: the first CIDR=MTU holding the network, else the MTU for all, else
    /// its largest NIC MTU; a CIDR inside the network does not hold it.
    #[test]
    fn each_network_gets_its_expected_mtu() {
        let per = [
            NetExpect {
                net: "198.19.100.0/24".parse().unwrap(),
                mtu: 1500,
            },
            NetExpect {
                net: "198.19.0.0/16".parse().unwrap(),
                mtu: 9000,
            },
            NetExpect {
                net: "10.1.0.0/25".parse().unwrap(),
                mtu: 4000,
            },
        ];
        for (cidr, all, want) in [
            ("198.19.100.0/24", None, 1500),
            ("198.19.1.0/24", Some(1500), 9000),
            ("10.1.0.0/24", None, 7000),
            ("10.1.0.0/24", Some(8000), 8000),
            ("172.16.0.0/24", None, 7000),
        ] {
            let net: IpNet = cidr.parse().unwrap();
            assert_eq!(expected(&net, all, &per, 7000), want, "{cidr} {all:?}");
        }
    }
}
