//! The diagnosis on synthetic matrices: each fault the mesh must name, alone and
//! together, and the cells it must (and must not) flag.

use std::net::IpAddr;

use mtuperf_proto::msg::mesh::{DirSummary, PathSummary, StopKind};

use super::cells::diagnose;
use super::diagnose::{FindingKind, MeshFinding};
use super::model::{Cell, MeshNetwork, MeshNode, NodeAddr, PairResult};
use super::net::net_name;

fn nodes(n: usize) -> Vec<MeshNode> {
    (0..n)
        .map(|i| MeshNode {
            label: format!("n{}", i + 1),
            agent: format!("10.0.0.{}:7878", i + 1),
            hostname: None,
            error: None,
            max_sessions: None,
            discovery: None,
        })
        .collect()
}

fn network(i: usize, nics: &[u32], expect: u32) -> MeshNetwork {
    MeshNetwork {
        name: net_name(i),
        cidr: format!("10.{}.0.0/24", i + 1).parse().unwrap(),
        expect,
        members: nics
            .iter()
            .enumerate()
            .map(|(n, &mtu)| NodeAddr {
                node: n,
                addr: format!("10.{}.0.{}", i + 1, n + 1)
                    .parse::<IpAddr>()
                    .unwrap(),
                iface: format!("eth{}", i + 1),
                mtu,
            })
            .collect(),
    }
}

fn dir(mtu: u32, stop: StopKind) -> DirSummary {
    DirSummary {
        largest_ok: mtu,
        mtu,
        stop,
        icmp_from: (stop == StopKind::Icmp).then(|| "10.9.9.9".into()),
        probes: 20,
        lost: 0,
    }
}

/// Every ordered pair of `net` tested; `f(from, to)` says what that direction carries.
fn pairs(net: usize, n: usize, f: &dyn Fn(usize, usize) -> (u32, StopKind)) -> Vec<PairResult> {
    let mut out = Vec::new();
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            let (fm, fs) = f(a, b);
            let (rm, rs) = f(b, a);
            out.push(PairResult {
                net,
                from: a,
                to: b,
                path: Some(PathSummary {
                    forward: dir(fm, fs),
                    reverse: dir(rm, rs),
                    local_mtu: 9000,
                    peer_mtu: Some(9000),
                    same_segment: true,
                    verdict: String::new(),
                    verdict_text: String::new(),
                    elapsed_ms: 1,
                }),
                ..PairResult::default()
            });
        }
    }
    out
}

/// What a node whose NIC is at `nic` does to the directions through it: its own
/// sends stop at its NIC, sends toward it vanish above it.
fn nic_fault(node: usize, nic: u32) -> impl Fn(usize, usize) -> (u32, StopKind) {
    move |a, b| {
        if a == node {
            (nic, StopKind::Top)
        } else if b == node {
            (nic, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    }
}

fn port_fault(node: usize, port: u32) -> impl Fn(usize, usize) -> (u32, StopKind) {
    move |a, b| {
        if a == node || b == node {
            (port, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    }
}

/// The cells whose verdict is not "ok", as (net, from, to, verdict).
fn flagged(cells: &[Cell]) -> Vec<(usize, usize, usize, String)> {
    cells
        .iter()
        .filter(|c| c.verdict != "ok")
        .map(|c| (c.net, c.from, c.to, c.verdict.clone()))
        .collect()
}

fn involving(
    net: usize,
    n: usize,
    node: usize,
    verdict: &str,
) -> Vec<(usize, usize, usize, String)> {
    let mut v = Vec::new();
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            if a == node || b == node {
                v.push((net, a, b, verdict.to_string()));
            }
        }
    }
    v
}

fn kinds(f: &[MeshFinding]) -> Vec<FindingKind> {
    f.iter().map(|x| x.kind).collect()
}

#[test]
fn a_clean_mesh_has_no_finding_and_every_cell_ok() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = pairs(0, 4, &|_, _| (9000, StopKind::Top));
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(cells.len(), 12);
    assert!(flagged(&cells).is_empty());
    assert!(cells
        .iter()
        .all(|c| c.forward.as_ref().unwrap().ok && c.reverse.as_ref().unwrap().ok));
}

#[test]
fn a_low_nic_is_named_with_its_pairs_only() {
    let nets = [network(0, &[9000, 1500, 9000, 9000, 9000], 9000)];
    let p = pairs(0, 5, &nic_fault(1, 1500));
    let (cells, findings) = diagnose(&nodes(5), &nets, &p);
    assert_eq!(kinds(&findings), vec![FindingKind::NicMtu]);
    let f = &findings[0];
    assert_eq!(f.node, Some(1));
    assert_eq!(f.net, Some(0));
    assert!(
        f.summary
            .contains("node n2's NIC eth1 on net A (10.1.0.0/24) is MTU 1500"),
        "{}",
        f.summary
    );
    assert!(
        f.summary.contains("MTU 1500, the others 9000"),
        "{}",
        f.summary
    );
    assert!(
        f.evidence.contains("8 of its 8 directions"),
        "{}",
        f.evidence
    );
    assert!(f.evidence.contains("silent") && f.evidence.contains("at the sender's NIC"));
    assert!(
        f.next.contains("ip link set dev eth1 mtu 9000"),
        "{}",
        f.next
    );
    assert_eq!(flagged(&cells), involving(0, 5, 1, "nic_mtu"));
}

#[test]
fn a_silent_node_with_a_good_nic_is_its_switch_port() {
    let nets = [network(0, &[9000; 5], 9000)];
    let p = pairs(0, 5, &port_fault(3, 1500));
    let (cells, findings) = diagnose(&nodes(5), &nets, &p);
    assert_eq!(kinds(&findings), vec![FindingKind::SwitchPort]);
    let f = &findings[0];
    assert_eq!(f.node, Some(3));
    assert!(f.summary.starts_with("node n4 on net A (10.1.0.0/24): every path through it stops above 1500 in both directions, silently, while its NIC (eth1) says 9000"), "{}", f.summary);
    assert!(f.summary.contains("switch port"));
    assert!(f.evidence.contains("8 silent"), "{}", f.evidence);
    assert_eq!(flagged(&cells), involving(0, 5, 3, "switch_port"));
}

#[test]
fn two_faults_on_two_networks_are_named_apart() {
    let nets = [
        network(0, &[9000, 1500, 9000, 9000, 9000], 9000),
        network(1, &[9000; 5], 9000),
    ];
    let mut p = pairs(0, 5, &nic_fault(1, 1500));
    p.extend(pairs(1, 5, &port_fault(3, 1500)));
    let (cells, findings) = diagnose(&nodes(5), &nets, &p);
    assert_eq!(
        kinds(&findings),
        vec![FindingKind::NicMtu, FindingKind::SwitchPort]
    );
    assert_eq!((findings[0].node, findings[0].net), (Some(1), Some(0)));
    assert_eq!((findings[1].node, findings[1].net), (Some(3), Some(1)));
    let mut want = involving(0, 5, 1, "nic_mtu");
    want.extend(involving(1, 5, 3, "switch_port"));
    assert_eq!(flagged(&cells), want);
}

#[test]
fn a_low_nic_and_a_bad_port_on_one_network_both_show() {
    let nets = [network(0, &[9000, 1500, 9000, 9000, 9000, 9000], 9000)];
    let nic = nic_fault(1, 1500);
    let port = port_fault(4, 1500);
    let p = pairs(0, 6, &|a, b| {
        let (x, s) = nic(a, b);
        let (y, t) = port(a, b);
        if x <= y {
            (x, s)
        } else {
            (y, t)
        }
    });
    let (_, findings) = diagnose(&nodes(6), &nets, &p);
    assert_eq!(
        kinds(&findings),
        vec![FindingKind::NicMtu, FindingKind::SwitchPort]
    );
    assert_eq!(findings[1].node, Some(4));
}

#[test]
fn every_pair_limited_is_the_network_not_a_node() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = pairs(0, 4, &|_, _| (1500, StopKind::Silent));
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(kinds(&findings), vec![FindingKind::Network]);
    assert!(findings[0]
        .summary
        .contains("all pairs on net A (10.1.0.0/24) limited to 1500"));
    assert!(findings[0]
        .summary
        .contains("the switch or the network, not one node"));
    assert!(
        findings[0].evidence.contains("12 silent"),
        "{}",
        findings[0].evidence
    );
    assert_eq!(flagged(&cells).len(), 12);
    assert!(cells.iter().all(|c| c.verdict == "network"));
}

#[test]
fn a_two_node_network_with_one_low_nic_blames_the_nic() {
    let nets = [network(0, &[9000, 1500], 9000)];
    let p = pairs(0, 2, &nic_fault(1, 1500));
    let (_, findings) = diagnose(&nodes(2), &nets, &p);
    assert_eq!(kinds(&findings), vec![FindingKind::NicMtu]);
}

#[test]
fn one_direction_short_is_asymmetric() {
    let nets = [network(0, &[9000; 4], 9000)];
    // n1 → n3 only 1500 (ICMP from a router on the return route); n3 → n1 carries 9000.
    let p = pairs(0, 4, &|a, b| {
        if (a, b) == (0, 2) {
            (1500, StopKind::Icmp)
        } else {
            (9000, StopKind::Top)
        }
    });
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(kinds(&findings), vec![FindingKind::Asymmetric]);
    assert_eq!(
        findings[0].summary,
        "asymmetric on net A (10.1.0.0/24): n3 → n1 carries 9000, n1 → n3 only 1500"
    );
    assert!(
        findings[0].evidence.contains("ICMP (from 10.9.9.9)"),
        "{}",
        findings[0].evidence
    );
    assert_eq!(
        flagged(&cells),
        vec![
            (0, 0, 2, "asymmetric".into()),
            (0, 2, 0, "asymmetric".into())
        ]
    );
}

#[test]
fn one_pair_short_both_ways_is_that_pair() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = pairs(0, 4, &|a, b| {
        if (a.min(b), a.max(b)) == (1, 3) {
            (4470, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    });
    let (_, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(kinds(&findings), vec![FindingKind::Limited]);
    assert!(findings[0].summary.starts_with("n2 ↔ n4 on net A"));
    assert!(findings[0].summary.contains("only 4470"));
}

#[test]
fn a_node_behind_an_icmp_router_is_a_route_not_a_port() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = pairs(0, 4, &|a, b| {
        if a == 0 || b == 0 {
            (1500, StopKind::Icmp)
        } else {
            (9000, StopKind::Top)
        }
    });
    let (_, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(kinds(&findings), vec![FindingKind::NodeRoute]);
    assert!(findings[0].summary.contains("frag-needed"));
}

#[test]
fn a_failed_test_and_an_unreachable_node_are_findings() {
    let mut ns = nodes(3);
    ns[2].error = Some("cannot connect".into());
    let nets = [network(0, &[9000, 9000], 9000)];
    let mut p = pairs(0, 2, &|_, _| (9000, StopKind::Top));
    p[1].path = None;
    p[1].error = Some("timed out after 30 s".into());
    let (cells, findings) = diagnose(&ns, &nets, &p);
    assert_eq!(
        kinds(&findings),
        vec![FindingKind::Unreachable, FindingKind::TestFailed]
    );
    assert!(findings[0].summary.contains("node n3"));
    assert!(findings[1]
        .summary
        .contains("n2 → n1 on net A: the test failed: timed out"));
    assert_eq!(flagged(&cells), vec![(0, 1, 0, "error".into())]);
}

#[test]
fn a_given_expect_above_every_nic_flags_the_network() {
    let nets = [network(0, &[1500; 3], 9000)];
    let p = pairs(0, 3, &|_, _| (1500, StopKind::Top));
    let (_, findings) = diagnose(&nodes(3), &nets, &p);
    // Every NIC is below what was asked: each is named (the expected MTU is 9000).
    assert_eq!(kinds(&findings), vec![FindingKind::NicMtu; 3]);
    assert!(findings[0].summary.contains("the expected MTU is 9000"));
}
