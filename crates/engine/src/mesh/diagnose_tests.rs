//! The diagnosis on synthetic matrices: each fault the mesh must name, alone and
//! together, and the cells it must (and must not) flag.

use std::net::IpAddr;

use mtuperf_proto::msg::mesh::{DirSummary, PathSummary, StopKind};

use super::cells::diagnose as diagnose_all;
use super::finding::{Finding, FindingKind, MeshFinding};
use super::model::{
    Cell, CellVerdict, MeshNetwork, MeshNode, MeshTests, NodeAddr, PairError, PairResult,
    TestFailure,
};
use super::net::net_name;
use crate::diagnosis::{Diagnosis, Fault, FaultClass, Location};

fn diagnose(
    nodes: &[MeshNode],
    nets: &[MeshNetwork],
    pairs: &[PairResult],
) -> (Vec<Cell>, Vec<MeshFinding>) {
    diagnose_all(nodes, nets, pairs, &[])
}

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
        source: crate::mesh::NetSource::default(),
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
        rtt_us: None,
        wait_us: None,
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
                    first_router: None,
                    vanish_after: None,
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

/// The cells whose verdict is not ok, as (net, from, to, verdict).
fn flagged(cells: &[Cell]) -> Vec<(usize, usize, usize, CellVerdict)> {
    cells
        .iter()
        .filter(|c| c.verdict != CellVerdict::Ok)
        .map(|c| (c.net, c.from, c.to, c.verdict))
        .collect()
}

fn involving(
    net: usize,
    n: usize,
    node: usize,
    verdict: CellVerdict,
) -> Vec<(usize, usize, usize, CellVerdict)> {
    let mut v = Vec::new();
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            if a == node || b == node {
                v.push((net, a, b, verdict));
            }
        }
    }
    v
}

fn kinds(f: &[MeshFinding]) -> Vec<FindingKind> {
    f.iter().map(MeshFinding::kind).collect()
}

/// Where a location is, in words a test can compare: "node 3", "segment 1-3",
/// "router 10.9.9.9", "network".
fn place(at: &Location) -> String {
    let host = |a: &std::net::IpAddr| a.to_string().rsplit('.').next().unwrap().to_string();
    match at {
        Location::Node { addr } => format!("node {}", host(addr)),
        Location::Segment { a, b } => format!("segment {}-{}", host(a), host(b)),
        Location::Router { addr } => {
            format!("router {}", addr.map_or("?".into(), |a| a.to_string()))
        }
        Location::Network { .. } => "network".into(),
    }
}

/// Each path finding's class and place (node numbers are the addresses' last byte,
/// the node index + 1), in order.
fn faults(f: &[MeshFinding]) -> Vec<(FaultClass, String)> {
    f.iter()
        .filter_map(MeshFinding::diagnosis)
        .map(|d| (d.class(), place(&d.at)))
        .collect()
}

fn diag(f: &MeshFinding) -> &Diagnosis {
    f.diagnosis().unwrap()
}

/// (from, to, mtu, stop) of a finding's evidence.
fn dirs(f: &MeshFinding) -> Vec<(usize, usize, u32, StopKind)> {
    f.directions
        .iter()
        .map(|d| (d.from, d.to, d.mtu, d.stop))
        .collect()
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
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::NicMtu, "node 2".into())]
    );
    let f = &findings[0];
    assert_eq!((f.net, f.node), (Some(0), Some(1)));
    assert_eq!(
        diag(f),
        &Diagnosis {
            fault: Fault::NicMtu {
                iface: Some("eth1".into()),
                nic_mtu: 1500,
            },
            at: Location::Node {
                addr: "10.1.0.2".parse().unwrap()
            },
            mtu: 1500,
            expect: 9000,
        }
    );
    // Its 8 directions, with what stopped each: its own sends at its NIC, sends
    // toward it silently.
    let d = dirs(f);
    assert_eq!(d.len(), 8);
    assert!(d.contains(&(1, 0, 1500, StopKind::Top)), "{d:?}");
    assert!(d.contains(&(0, 1, 1500, StopKind::Silent)), "{d:?}");
    assert_eq!(flagged(&cells), involving(0, 5, 1, CellVerdict::NicMtu));
}

#[test]
fn a_silent_node_with_a_good_nic_is_its_switch_port() {
    let nets = [network(0, &[9000; 5], 9000)];
    let p = pairs(0, 5, &port_fault(3, 1500));
    let (cells, findings) = diagnose(&nodes(5), &nets, &p);
    // One finding for the node, not one per pair (each pair alone sees its segment).
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::SwitchPort, "node 4".into())]
    );
    let f = &findings[0];
    assert_eq!(f.node, Some(3));
    assert_eq!(diag(f).fault, Fault::SwitchPort { nic_mtu: 9000 });
    assert_eq!((diag(f).mtu, diag(f).expect), (1500, 9000));
    assert_eq!(f.directions.len(), 8);
    assert!(f.directions.iter().all(|d| d.stop == StopKind::Silent));
    assert_eq!(flagged(&cells), involving(0, 5, 3, CellVerdict::SwitchPort));
}

/// Issue 29: a node that drops inbound frames above 1500 while its NIC says 9000
/// was three "asymmetric" findings (one per peer); it is one, at that node.
#[test]
fn every_path_into_a_node_stopping_silently_is_one_inbound_finding() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = pairs(0, 4, &|_, b| {
        if b == 2 {
            (1500, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    });
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::InboundDrop, "node 3".into())]
    );
    assert_eq!(findings[0].node, Some(2));
    assert_eq!(
        diag(&findings[0]).fault,
        Fault::InboundDrop { nic_mtu: 9000 }
    );
    let d = dirs(&findings[0]);
    assert_eq!(d.len(), 3);
    assert!(d.iter().all(|x| x.1 == 2 && x.2 == 1500), "{d:?}");
    assert_eq!(
        flagged(&cells),
        involving(0, 4, 2, CellVerdict::InboundDrop)
    );
    // The mirror image: every path out of a node.
    let p = pairs(0, 4, &|a, _| {
        if a == 2 {
            (1500, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    });
    let (_, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::OutboundDrop, "node 3".into())]
    );
    assert_eq!(findings[0].directions.len(), 3);
}

/// A one-way drop no node's every direction explains stays what its pair saw: the
/// drop on their segment in that direction (one end's outbound side or the other's
/// inbound side), never pinned on either end. With the same drop on every path out
/// of node 3 but a two-node mesh, too: one pair cannot tell the ends apart.
#[test]
fn a_one_way_drop_no_node_explains_stays_on_its_segment() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = pairs(0, 4, &|a, b| {
        if (a, b) == (2, 0) {
            (1500, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    });
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::OneWayDrop, "segment 1-3".into())]
    );
    assert_eq!(
        diag(&findings[0]).fault,
        Fault::OneWayDrop {
            from: "10.1.0.3".parse().unwrap(),
            to: "10.1.0.1".parse().unwrap(),
            nic_mtu: 9000,
        }
    );
    assert_eq!(findings[0].node, None, "no node is blamed");
    assert_eq!(
        flagged(&cells),
        vec![
            (0, 0, 2, CellVerdict::OneWayDrop),
            (0, 2, 0, CellVerdict::OneWayDrop)
        ]
    );
    let two = [network(0, &[9000; 2], 9000)];
    let p = pairs(0, 2, &|a, _| {
        if a == 1 {
            (1500, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    });
    let (_, findings) = diagnose(&nodes(2), &two, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::OneWayDrop, "segment 1-2".into())]
    );
}

/// A router in front of node 1 drops its frag-needed: every pair with node 1 is one
/// black hole finding at that router, located by the senders' TTL-limited probes or
/// by node 1's own first router.
#[test]
fn a_node_behind_a_black_hole_is_that_router_not_its_nic() {
    use crate::diagnosis::pair::Hop;
    let r: std::net::IpAddr = "10.1.0.101".parse().unwrap();
    let nets = [network(0, &[9000, 1500, 9000, 9000], 9000)];
    let mut p = pairs(0, 4, &nic_fault(1, 1500));
    for x in &mut p {
        let s = x.path.as_mut().unwrap();
        if x.to == 1 {
            s.vanish_after = Some(mtuperf_proto::msg::mesh::HopSummary {
                ttl: 1,
                addr: Some(r.to_string()),
            });
        }
        if x.from == 1 || x.to == 1 {
            s.first_router = Some(r.to_string());
        }
    }
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::BlackHole, format!("router {r}"))]
    );
    assert_eq!(findings[0].node, Some(1));
    assert_eq!(diag(&findings[0]).fault, Fault::BlackHole { hop: Some(1) });
    assert_eq!(findings[0].directions.len(), 6);
    assert_eq!(flagged(&cells), involving(0, 4, 1, CellVerdict::BlackHole));
    let _ = Hop { ttl: 1, addr: None };
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
        faults(&findings),
        vec![
            (FaultClass::NicMtu, "node 2".into()),
            (FaultClass::SwitchPort, "node 4".into())
        ]
    );
    assert_eq!((findings[0].node, findings[0].net), (Some(1), Some(0)));
    assert_eq!((findings[1].node, findings[1].net), (Some(3), Some(1)));
    let mut want = involving(0, 5, 1, CellVerdict::NicMtu);
    want.extend(involving(1, 5, 3, CellVerdict::SwitchPort));
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
        faults(&findings),
        vec![
            (FaultClass::NicMtu, "node 2".into()),
            (FaultClass::SwitchPort, "node 5".into())
        ]
    );
    assert_eq!(findings[1].node, Some(4));
}

#[test]
fn every_pair_limited_is_the_network_not_a_node() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = pairs(0, 4, &|_, _| (1500, StopKind::Silent));
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::SwitchPort, "network".into())]
    );
    assert_eq!(
        (diag(&findings[0]).mtu, diag(&findings[0]).expect),
        (1500, 9000)
    );
    assert_eq!(findings[0].directions.len(), 12);
    assert_eq!(flagged(&cells).len(), 12);
    assert!(cells.iter().all(|c| c.verdict == CellVerdict::Network));
    // Two nodes alone: their segment, as `path` between them names it.
    let nets = [network(0, &[9000; 2], 9000)];
    let p = pairs(0, 2, &|_, _| (1500, StopKind::Silent));
    let (_, findings) = diagnose(&nodes(2), &nets, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::SwitchPort, "segment 1-2".into())]
    );
}

#[test]
fn a_two_node_network_with_one_low_nic_blames_the_nic() {
    let nets = [network(0, &[9000, 1500], 9000)];
    let p = pairs(0, 2, &nic_fault(1, 1500));
    let (_, findings) = diagnose(&nodes(2), &nets, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::NicMtu, "node 2".into())]
    );
}

#[test]
fn one_direction_limited_by_a_router_is_that_router() {
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
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::RouterMtu, "router 10.9.9.9".into())]
    );
    assert_eq!(findings[0].node, None);
    assert_eq!(
        findings[0].directions[0].icmp_from.as_deref(),
        Some("10.9.9.9")
    );
    assert_eq!(
        flagged(&cells),
        vec![
            (0, 0, 2, CellVerdict::RouterMtu),
            (0, 2, 0, CellVerdict::RouterMtu)
        ]
    );
}

#[test]
fn one_pair_short_both_ways_is_that_pairs_segment() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = pairs(0, 4, &|a, b| {
        if (a.min(b), a.max(b)) == (1, 3) {
            (4470, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    });
    let (_, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::SwitchPort, "segment 2-4".into())]
    );
    assert_eq!(diag(&findings[0]).mtu, 4470);
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
    assert_eq!(
        faults(&findings),
        vec![(FaultClass::RouterMtu, "router 10.9.9.9".into())]
    );
    assert_eq!(findings[0].node, Some(0));
}

#[test]
fn a_failed_test_and_an_unreachable_node_are_findings() {
    let mut ns = nodes(3);
    ns[2].error = Some("cannot connect".into());
    let nets = [network(0, &[9000, 9000], 9000)];
    let mut p = pairs(0, 2, &|_, _| (9000, StopKind::Top));
    p[1].path = None;
    p[1].failed.push(TestFailure {
        test: MeshTests::Path,
        error: PairError::NoResult {
            node: 1,
            waited_ms: 30_012,
        },
        elapsed_ms: 30_020,
    });
    let (cells, findings) = diagnose(&ns, &nets, &p);
    assert_eq!(
        kinds(&findings),
        vec![FindingKind::Unreachable, FindingKind::TestsFailed]
    );
    assert_eq!(findings[0].node, Some(2));
    let Finding::TestsFailed { count, examples } = &findings[1].what else {
        panic!("{:?}", findings[1]);
    };
    assert_eq!(*count, 1);
    assert_eq!((examples[0].from, examples[0].to), (1, 0));
    assert_eq!(flagged(&cells), vec![(0, 1, 0, CellVerdict::Error)]);
}

#[test]
fn failures_of_one_cause_are_one_finding_with_the_count_and_examples() {
    use mtuperf_proto::msg::Refusal;
    let nets = [network(0, &[9000; 4], 9000), network(1, &[9000; 4], 9000)];
    let mut p = pairs(0, 4, &|_, _| (9000, StopKind::Top));
    // Every pair of the second network refused by its peer's --allow list, and one
    // pair of the first with another cause.
    let mut second = pairs(1, 4, &|_, _| (9000, StopKind::Top));
    for x in &mut second {
        x.path = None;
        x.failed.push(TestFailure {
            test: MeshTests::Path,
            error: PairError::Refused {
                node: x.from,
                refusal: Refusal::PeerNotAuthenticated {
                    peer: format!("[fd00::{}]:7878", x.to + 1),
                    detail: format!(
                        "address fd00::{} is not allowed by the agent's --allow list",
                        x.from + 1
                    ),
                },
            },
            elapsed_ms: 3,
        });
    }
    p.extend(second);
    p[0].path = None;
    p[0].failed.push(TestFailure {
        test: MeshTests::Path,
        error: PairError::Agent {
            node: 0,
            message: "probe socket: permission denied".into(),
        },
        elapsed_ms: 5,
    });
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    assert_eq!(
        kinds(&findings),
        vec![FindingKind::TestsFailed, FindingKind::TestsFailed]
    );
    let counts: Vec<(Option<usize>, usize, usize)> = findings
        .iter()
        .map(|f| match &f.what {
            Finding::TestsFailed { count, examples } => (f.net, *count, examples.len()),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(
        counts,
        vec![(Some(0), 1, 1), (Some(1), 12, super::EXAMPLES)]
    );
    assert_eq!(
        cells
            .iter()
            .filter(|c| c.verdict == CellVerdict::Error)
            .count(),
        13
    );
}

#[test]
fn a_given_expect_above_every_nic_flags_the_network() {
    let nets = [network(0, &[1500; 3], 9000)];
    let p = pairs(0, 3, &|_, _| (1500, StopKind::Top));
    let (_, findings) = diagnose(&nodes(3), &nets, &p);
    // Every NIC is below what was asked: each is named (the expected MTU is 9000).
    assert_eq!(
        faults(&findings),
        vec![
            (FaultClass::NicMtu, "node 1".into()),
            (FaultClass::NicMtu, "node 2".into()),
            (FaultClass::NicMtu, "node 3".into())
        ]
    );
    assert_eq!(diag(&findings[0]).expect, 9000);
}

/// What node `liar` says in its own tests: it sends 9000 but receives only 576,
/// refused by ICMP; everyone else measures 9000 everywhere.
fn liar_pairs(n: usize, liar: usize) -> Vec<PairResult> {
    let mut p = pairs(0, n, &|_, _| (9000, StopKind::Top));
    for x in p.iter_mut().filter(|x| x.from == liar) {
        let s = x.path.as_mut().unwrap();
        s.reverse = dir(576, StopKind::Icmp);
    }
    p
}

#[test]
fn a_node_contradicting_every_peer_is_named_and_left_out_of_the_diagnosis() {
    let nets = [network(0, &[9000; 4], 9000)];
    let p = liar_pairs(4, 2);
    let (cells, findings) = diagnose(&nodes(4), &nets, &p);
    // No confident verdict about n3's paths: one finding, that its results disagree.
    assert_eq!(
        kinds(&findings),
        vec![FindingKind::Disputed],
        "{findings:#?}"
    );
    let f = &findings[0];
    assert_eq!((f.net, f.node), (Some(0), Some(2)));
    let Finding::Disputed { contradictions } = &f.what else {
        unreachable!()
    };
    assert_eq!(contradictions.len(), 3);
    for c in contradictions {
        assert_eq!(c.to, 2, "{c:?}");
        let by: Vec<(usize, u32)> = c.claims.iter().map(|x| (x.by, x.mtu)).collect();
        assert_eq!(by, vec![(c.from, 9000), (2, 576)]);
    }
    // n3's own cells are disputed; the honest nodes' cells, toward n3 included,
    // keep what they measured: ok.
    assert_eq!(
        flagged(&cells),
        vec![
            (0, 2, 0, CellVerdict::Disputed),
            (0, 2, 1, CellVerdict::Disputed),
            (0, 2, 3, CellVerdict::Disputed)
        ]
    );
    let c = cells.iter().find(|c| (c.from, c.to) == (2, 0)).unwrap();
    assert_eq!(c.reverse.as_ref().unwrap().finding, Some(0));
    assert_eq!(
        c.reverse.as_ref().unwrap().doubt,
        Some(super::model::Doubt::Disputed)
    );
}

#[test]
fn two_nodes_that_disagree_are_named_as_a_pair_with_no_verdict() {
    let nets = [network(0, &[9000; 2], 9000)];
    let p = liar_pairs(2, 1);
    let (cells, findings) = diagnose(&nodes(2), &nets, &p);
    assert_eq!(kinds(&findings), vec![FindingKind::Disputed]);
    assert_eq!(findings[0].node, None);
    // Both measurements of the disputed direction are left out: both cells say so.
    assert!(cells.iter().all(|c| c.verdict == CellVerdict::Disputed));
}

#[test]
fn an_mtu_above_the_smaller_nic_of_its_ends_is_refused_as_evidence() {
    let nets = [network(0, &[9000, 9000, 1500], 9000)];
    // n3's NIC is 1500: the honest nodes see it; n3 itself claims 4294967295 and
    // 9000 both ways.
    let p = pairs(0, 3, &|a, b| {
        if a == 2 {
            (1500, StopKind::Top)
        } else if b == 2 {
            (1500, StopKind::Silent)
        } else {
            (9000, StopKind::Top)
        }
    });
    let mut p = p;
    for x in p.iter_mut().filter(|x| x.from == 2) {
        let s = x.path.as_mut().unwrap();
        s.forward = dir(u32::MAX, StopKind::Top);
        s.reverse = dir(9000, StopKind::Top);
    }
    let (_, findings) = diagnose(&nodes(3), &nets, &p);
    assert_eq!(
        kinds(&findings),
        vec![FindingKind::Implausible, FindingKind::Fault],
        "{findings:#?}"
    );
    assert_eq!(diag(&findings[1]).class(), FaultClass::NicMtu);
    let Finding::Implausible { claims } = &findings[0].what else {
        unreachable!()
    };
    assert_eq!(findings[0].node, Some(2));
    assert_eq!(claims.len(), 4);
    assert!(claims.iter().all(|c| c.limit == 1500 && c.by == 2));
    assert!(claims.iter().any(|c| c.mtu == u32::MAX));
    // The NIC finding rests on the honest measurements only.
    assert_eq!(findings[1].node, Some(2));
    assert!(findings[1].directions.iter().all(|d| d.mtu == 1500));
}
