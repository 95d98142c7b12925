//! `--tests doctor`: the nodes' settings compared with each other, as cluvfy does:
//! the interface MTU and offloads on each network, rp_filter, and the sysctls doctor
//! reads (reassembly, socket buffers). A value held by a strict majority of the
//! nodes is the norm; a node with another value is the odd one out.

use std::collections::BTreeMap;

use mtuperf_proto::msg::doctor::IfaceFacts;

use super::finding::{Finding, MeshFinding, Offload, Setting};
use super::model::{MeshNetwork, MeshNode};

/// The majority value of `values` (node, value) if a strict majority holds one, and
/// the nodes that differ from it.
fn odd_ones(values: &[(usize, String)]) -> Option<(String, Vec<(usize, String)>)> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, v) in values {
        *counts.entry(v.as_str()).or_default() += 1;
    }
    let (norm, n) = counts.into_iter().max_by_key(|&(_, c)| c)?;
    if n * 2 <= values.len() || n == values.len() {
        return None;
    }
    let odd = values.iter().filter(|(_, v)| v != norm).cloned().collect();
    Some((norm.to_string(), odd))
}

fn iface<'a>(nodes: &'a [MeshNode], node: usize, name: &str) -> Option<&'a IfaceFacts> {
    nodes
        .get(node)?
        .discovery
        .as_ref()?
        .facts
        .ifaces
        .iter()
        .find(|i| i.info.name == name)
}

fn on_off(v: Option<bool>) -> String {
    v.map_or("unknown", |b| if b { "on" } else { "off" }).into()
}

/// One finding per node whose value of a setting differs from a strict majority's.
/// `setting(node)` names the setting as that node has it (its interface).
fn push(
    out: &mut Vec<MeshFinding>,
    net: Option<usize>,
    values: &[(usize, String)],
    setting: &dyn Fn(usize) -> Setting,
) {
    let Some((norm, odd)) = odd_ones(values) else {
        return;
    };
    for (node, value) in odd {
        out.push(MeshFinding::new(
            net,
            Some(node),
            Finding::Setting {
                setting: setting(node),
                value,
                norm: norm.clone(),
                holders: values.len() - 1,
                of: values.len(),
            },
        ));
    }
}

/// How an interface fact is read.
type Read = fn(&IfaceFacts) -> Option<bool>;

/// The offloads compared, and how each is read.
const OFFLOADS: [(Offload, Read); 4] = [
    (Offload::Tso, |i| i.info.offloads.tso),
    (Offload::Gso, |i| i.info.offloads.gso),
    (Offload::Gro, |i| i.info.offloads.gro),
    (Offload::Lro, |i| i.info.offloads.lro),
];

/// Per network: the NIC MTU (when `nic_mtu`), the offloads and rp_filter of each
/// member's interface.
fn per_network(
    nodes: &[MeshNode],
    ni: usize,
    net: &MeshNetwork,
    nic_mtu: bool,
    out: &mut Vec<MeshFinding>,
) {
    let per = |f: &dyn Fn(&IfaceFacts) -> String| -> Vec<(usize, String)> {
        net.members
            .iter()
            .filter_map(|m| Some((m.node, f(iface(nodes, m.node, &m.iface)?))))
            .collect()
    };
    let ifname = |n: usize| {
        net.members
            .iter()
            .find(|m| m.node == n)
            .map_or_else(String::new, |m| m.iface.clone())
    };
    if nic_mtu {
        let values = per(&|i| i.info.mtu.to_string());
        push(out, Some(ni), &values, &|n| Setting::NicMtu {
            iface: ifname(n),
        });
    }
    for (offload, get) in OFFLOADS {
        let values = per(&|i| on_off(get(i)));
        push(out, Some(ni), &values, &|n| Setting::Offload {
            iface: ifname(n),
            offload,
        });
    }
    let values = per(&|i| {
        i.rp_filter
            .map_or_else(|| "unknown".into(), |v| v.to_string())
    });
    push(out, Some(ni), &values, &|n| Setting::RpFilter {
        iface: ifname(n),
    });
}

/// `nic_mtu`: compare the NIC MTUs too (not needed when the path test ran: its
/// diagnosis names a node whose NIC MTU is low, with the pairs it breaks).
pub fn compare(nodes: &[MeshNode], networks: &[MeshNetwork], nic_mtu: bool) -> Vec<MeshFinding> {
    let mut out = Vec::new();
    for (ni, net) in networks.iter().enumerate() {
        per_network(nodes, ni, net, nic_mtu, &mut out);
    }
    let mut keys: Vec<&String> = nodes
        .iter()
        .filter_map(|n| n.discovery.as_ref())
        .flat_map(|d| d.facts.sysctls.keys())
        .collect();
    keys.sort();
    keys.dedup();
    for key in keys {
        let values: Vec<(usize, String)> = nodes
            .iter()
            .enumerate()
            .filter_map(|(i, n)| Some((i, n.discovery.as_ref()?.facts.sysctls.get(key)?.clone())))
            .collect();
        push(&mut out, None, &values, &|_| Setting::Sysctl {
            key: key.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use mtuperf_proto::host::{IfaceInfo, Offloads};
    use mtuperf_proto::msg::doctor::HostFacts;
    use mtuperf_proto::msg::mesh::Discovery;

    use super::super::model::NodeAddr;
    use super::*;

    /// A node whose net1 NIC has `mtu` and `gro`, with one sysctl.
    fn node(i: usize, mtu: u32, gro: bool, rmem: &str) -> MeshNode {
        MeshNode {
            label: format!("n{}", i + 1),
            agent: String::new(),
            hostname: None,
            error: None,
            max_sessions: None,
            discovery: Some(Discovery {
                down: Vec::new(),
                facts: HostFacts {
                    ifaces: vec![IfaceFacts {
                        info: IfaceInfo {
                            name: "net1".into(),
                            mtu,
                            offloads: Offloads {
                                gro: Some(gro),
                                ..Offloads::default()
                            },
                            ..IfaceInfo::default()
                        },
                        up: true,
                        pause: None,
                        counters: None,
                        counters_delta: None,
                        rp_filter: Some(0),
                        steering: None,
                    }],
                    sysctls: BTreeMap::from([("net.core.rmem_max".to_string(), rmem.to_string())]),
                    ..HostFacts::default()
                },
                addrs: Vec::new(),
            }),
        }
    }

    #[test]
    fn settings_are_compared_across_nodes_and_the_odd_one_named() {
        let nodes = vec![
            node(0, 9000, true, "4194304"),
            node(1, 1500, true, "4194304"),
            node(2, 9000, false, "4194304"),
            node(3, 9000, true, "212992"),
        ];
        let net = MeshNetwork {
            source: crate::mesh::NetSource::default(),
            name: "A".into(),
            cidr: "10.1.0.0/24".parse().unwrap(),
            expect: 9000,
            members: (0..4)
                .map(|n| NodeAddr {
                    node: n,
                    addr: format!("10.1.0.{}", n + 1).parse().unwrap(),
                    iface: "net1".into(),
                    mtu: 9000,
                })
                .collect(),
        };
        let f = compare(&nodes, std::slice::from_ref(&net), true);
        let setting = |s: Setting, value: &str, norm: &str| Finding::Setting {
            setting: s,
            value: value.into(),
            norm: norm.into(),
            holders: 3,
            of: 4,
        };
        let got: Vec<(Option<usize>, Option<usize>, &Finding)> =
            f.iter().map(|x| (x.net, x.node, &x.what)).collect();
        assert_eq!(
            got,
            vec![
                (
                    Some(0),
                    Some(1),
                    &setting(
                        Setting::NicMtu {
                            iface: "net1".into()
                        },
                        "1500",
                        "9000"
                    )
                ),
                (
                    Some(0),
                    Some(2),
                    &setting(
                        Setting::Offload {
                            iface: "net1".into(),
                            offload: Offload::Gro
                        },
                        "off",
                        "on"
                    )
                ),
                (
                    None,
                    Some(3),
                    &setting(
                        Setting::Sysctl {
                            key: "net.core.rmem_max".into()
                        },
                        "212992",
                        "4194304"
                    )
                ),
            ]
        );
        // With the path test run, its diagnosis names NIC MTUs: not repeated here.
        let f = compare(&nodes, &[net], false);
        assert!(f.iter().all(|x| !matches!(
            &x.what,
            Finding::Setting {
                setting: Setting::NicMtu { .. },
                ..
            }
        )));
    }

    #[test]
    fn the_odd_one_out_needs_a_strict_majority() {
        let v = |xs: &[&str]| -> Vec<(usize, String)> {
            xs.iter()
                .enumerate()
                .map(|(i, s)| (i, (*s).to_string()))
                .collect()
        };
        let (norm, odd) = odd_ones(&v(&["9000", "9000", "1500", "9000"])).unwrap();
        assert_eq!(norm, "9000");
        assert_eq!(odd, vec![(2, "1500".to_string())]);
        // Two against two: no norm; all alike: nothing odd.
        assert!(odd_ones(&v(&["a", "a", "b", "b"])).is_none());
        assert!(odd_ones(&v(&["a", "a", "a"])).is_none());
    }
}
