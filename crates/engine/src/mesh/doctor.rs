//! `--tests doctor`: the nodes' settings compared with each other, as cluvfy does:
//! the interface MTU and offloads on each network, rp_filter, and the sysctls doctor
//! reads (reassembly, socket buffers). A value held by a strict majority of the
//! nodes is the norm; a node with another value is the odd one out.

use std::collections::BTreeMap;

use mtuperf_proto::msg::doctor::IfaceFacts;

use super::diagnose::{FindingKind, MeshFinding};
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

/// `nic_mtu`: compare the NIC MTUs too (not needed when the path test ran: its
/// diagnosis names a node whose NIC MTU is low, with the pairs it breaks).
pub fn compare(nodes: &[MeshNode], networks: &[MeshNetwork], nic_mtu: bool) -> Vec<MeshFinding> {
    let label = |n: usize| {
        nodes
            .get(n)
            .map_or_else(|| n.to_string(), |x| x.label.clone())
    };
    let mut out = Vec::new();
    let mut push = |net: Option<usize>,
                    what: String,
                    values: Vec<(usize, String)>,
                    next: &dyn Fn(usize, &str) -> String| {
        let Some((norm, odd)) = odd_ones(&values) else {
            return;
        };
        for (node, v) in odd {
            out.push(MeshFinding {
                kind: FindingKind::Setting,
                net,
                node: Some(node),
                directions: Vec::new(),
                summary: format!("node {}: {what} is {v}, the others {norm}", label(node)),
                evidence: format!("{} of {} nodes have {norm}", values.len() - 1, values.len()),
                next: next(node, &norm),
            });
        }
    };
    for (ni, net) in networks.iter().enumerate() {
        let on = format!("net {} ({})", net.name, net.cidr);
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
            push(
                Some(ni),
                format!("the NIC MTU on {on}"),
                per(&|i| i.info.mtu.to_string()),
                &|n, norm| format!("on {}: ip link set dev {} mtu {norm}", label(n), ifname(n)),
            );
        }
        for (name, get) in [
            (
                "tso",
                (|i: &IfaceFacts| i.info.offloads.tso) as fn(&IfaceFacts) -> Option<bool>,
            ),
            ("gso", |i| i.info.offloads.gso),
            ("gro", |i| i.info.offloads.gro),
            ("lro", |i| i.info.offloads.lro),
        ] {
            push(
                Some(ni),
                format!("{name} offload on {on}"),
                per(&|i| on_off(get(i))),
                &|n, norm| format!("on {}: ethtool -K {} {name} {norm}", label(n), ifname(n)),
            );
        }
        push(
            Some(ni),
            format!("rp_filter on {on}"),
            per(&|i| {
                i.rp_filter
                    .map_or_else(|| "unknown".into(), |v| v.to_string())
            }),
            &|n, norm| {
                format!(
                    "on {}: sysctl -w net.ipv4.conf.{}.rp_filter={norm}",
                    label(n),
                    ifname(n)
                )
            },
        );
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
        push(None, format!("sysctl {key}"), values, &|n, norm| {
            format!(
                "on {}: sysctl -w {key}=\"{norm}\" (and in /etc/sysctl.d)",
                label(n)
            )
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
        let got: Vec<(Option<usize>, &str)> =
            f.iter().map(|x| (x.node, x.summary.as_str())).collect();
        assert_eq!(
            got,
            vec![
                (
                    Some(1),
                    "node n2: the NIC MTU on net A (10.1.0.0/24) is 1500, the others 9000"
                ),
                (
                    Some(2),
                    "node n3: gro offload on net A (10.1.0.0/24) is off, the others on"
                ),
                (
                    Some(3),
                    "node n4: sysctl net.core.rmem_max is 212992, the others 4194304"
                ),
            ]
        );
        assert!(f.iter().all(|x| x.kind == FindingKind::Setting));
        assert_eq!(f[1].next, "on n3: ethtool -K net1 gro on");
        // With the path test run, its diagnosis names NIC MTUs: not repeated here.
        let f = compare(&nodes, &[net], false);
        assert!(f.iter().all(|x| !x.summary.contains("NIC MTU")));
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
