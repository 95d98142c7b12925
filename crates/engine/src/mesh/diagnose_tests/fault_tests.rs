//! Each fault of the paths the mesh must name, alone and together, at its place:
//! a NIC, a switch port, an inbound drop, a segment, a router, the network.

use super::*;

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
