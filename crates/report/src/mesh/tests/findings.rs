//! The findings as the docs show them, the plain answer, the hostile node's
//! disagreement, grouped failures, a silent node, an interrupted run, escaped peer text.

use super::*;

#[test]
fn a_low_nic_and_a_switch_port_read_as_the_docs_show() {
    let nic = |a: usize, b: usize| {
        let s = |x: usize, y: usize| match (x, y) {
            (1, _) => dir(1500, StopKind::Top),
            (_, 1) => dir(1500, StopKind::Silent),
            _ => dir(9000, StopKind::Top),
        };
        (s(a, b), s(b, a))
    };
    let port = |a: usize, b: usize| {
        if a == 3 || b == 3 {
            (dir(1500, StopKind::Silent), dir(1500, StopKind::Silent))
        } else {
            good()
        }
    };
    let mut p = pairs(0, 5, &nic);
    p.extend(pairs(1, 5, &port));
    let nets = vec![
        network(0, 5, &|i| if i == 1 { 1500 } else { 9000 }),
        network(1, 5, &|_| 9000),
    ];
    let t = text(&doc(nodes(5), nets, p, &[]));
    for want in [
        "NOT ready: the NIC of node n2 on net A is at 1500 (expected 9000): ip link set dev eth1 mtu 9000 on node n2, and make it persistent in its network configuration (and 1 more finding below)\n",
        "mesh: 5 nodes, 2 networks, 40 pairs: 2 findings",
        "NIC eth1 of node n2 on net A (10.1.0.0/24) is at MTU 1500, below the network's 9000: paths through it carry 1500",
        "evidence: 8 directions: n1→n2 1500 silent,",
        "(4 at the sender's NIC, 4 silent)",
        "next: ip link set dev eth1 mtu 9000 on node n2, and make it persistent",
        "every path through node n4 on net B (10.2.0.0/24) stops above 1500 in both directions, silently, while its NIC says 9000: its switch port (or a bond, VLAN or bridge in front of it) is at 1500",
        "and 2 more (8 silent)",
        "next: set the switch port in front of node n4 (and any bond, VLAN or bridge on the way) to MTU 9000 or more",
        "NIC 1500|1500",
        "PORT 1500|1500",
        "24 of 40 directions measured carry 9000",
        "3.2 s of a 2m 5s deadline",
    ] {
        assert!(t.contains(want), "{want:?} not in:\n{t}");
    }
}

/// The plain answer comes first: ready, with what every network carries.
#[test]
fn a_clean_mesh_answers_ready_first() {
    let nets = vec![network(0, 3, &|_| 9000), network(1, 3, &|_| 9000)];
    let mut p = pairs(0, 3, &|_, _| good());
    p.extend(pairs(1, 3, &|_, _| good()));
    let d = doc(nodes(3), nets, p, &[]);
    let t = text(&d);
    assert!(
        t.starts_with("Interconnect ready: every path on net A and net B carries 9000 both ways\n"),
        "{t}"
    );
    let v = serde_json::to_value(&d).unwrap();
    assert_eq!(v["answer"]["answer"], "ready", "{v:#}");
    assert_eq!(
        v["answer"]["nets"][1],
        serde_json::json!({"net": 1, "mtu": 9000})
    );
}

/// Issue 29: one node dropping inbound frames above 1500 is one finding that says
/// so, and the answer names it; its peers are not blamed.
#[test]
fn an_inbound_drop_is_one_finding_at_its_node() {
    let inbound = |a: usize, b: usize| {
        let s = |_: usize, y: usize| {
            if y == 2 {
                dir(1500, StopKind::Silent)
            } else {
                dir(9000, StopKind::Top)
            }
        };
        (s(a, b), s(b, a))
    };
    let d = doc(
        nodes(4),
        vec![network(0, 4, &|_| 9000)],
        pairs(0, 4, &inbound),
        &[],
    );
    let t = text(&d);
    assert!(
        t.starts_with("NOT ready: frames into node n3 on net A above 1500 are dropped (expected 9000): set the switch port in front of node n3 to MTU 9000 or more"),
        "{t}"
    );
    assert!(t.contains("findings (1):"), "{t}");
    assert!(
        t.contains("1. every path into node n3 on net A (10.1.0.0/24) stops at 1500 silently while every path out of it carries 9000: its switch port's egress, or a filter on node n3, drops inbound frames above 1500 (its NIC says 9000)"),
        "{t}"
    );
    assert_eq!(
        t.matches("IN 1500|9000").count() + t.matches("IN 9000|1500").count(),
        6,
        "{t}"
    );
}

#[test]
fn a_hostile_node_is_named_as_disagreeing_never_as_a_router() {
    let liar = |a: usize, b: usize| {
        if a == 2 {
            (dir(9000, StopKind::Top), dir(576, StopKind::Icmp))
        } else {
            let _ = b;
            good()
        }
    };
    let t = text(&doc(
        nodes(4),
        vec![network(0, 4, &|_| 9000)],
        pairs(0, 4, &liar),
        &[],
    ));
    assert!(
        t.contains("results about node n3 on net A (10.1.0.0/24) disagree: its measurements contradict every peer's"),
        "{t}"
    );
    assert!(
        t.contains(
            "n3 reports n1→n3 576 (ICMP frag-needed), n1 reports 9000 (at the sender's NIC)"
        ) || t.contains(
            "n1 reports n1→n3 9000 (at the sender's NIC), n3 reports 576 (ICMP frag-needed)"
        ),
        "{t}"
    );
    assert!(!t.contains("router"), "{t}");
    assert_eq!(t.matches("DISP 9000|576").count(), 3, "{t}");
    assert_eq!(t.matches("ok 9000").count(), 9, "{t}");
    assert!(t.contains("3 cells disputed"), "{t}");
}

#[test]
fn failures_of_one_cause_read_as_one_finding_with_examples() {
    let mut p = pairs(0, 4, &|_, _| good());
    for mut x in pairs(1, 4, &|_, _| good()) {
        x.path = None;
        x.failed.push(TestFailure {
            test: MeshTests::Path,
            error: PairError::Refused {
                node: x.from,
                refusal: Refusal::PeerNotAuthenticated {
                    peer: format!("[fd6d::{}]:7878", x.to + 1),
                    why: mtuperf_proto::msg::PeerAuth::Refused {
                        refusal: Box::new(Refusal::NotAllowed {
                            peer: format!("fd6d::{}", x.from + 1),
                        }),
                    },
                },
            },
            elapsed_ms: 4,
        });
        p.push(x);
    }
    let nets = vec![network(0, 4, &|_| 9000), network(1, 4, &|_| 9000)];
    let t = text(&doc(nodes(4), nets, p, &[]));
    assert!(t.contains("findings (1):"), "{t}");
    assert!(
        t.contains("1. 12 tests failed on net B (10.2.0.0/24): the peer's agent refused the sender (its --allow list, or another key)"),
        "{t}"
    );
    assert!(t.contains("evidence: e.g. path n1 → n2 on net B: n1's agent: the peer [fd6d::2]:7878 did not authenticate, so no test traffic was sent to it: address fd6d::1 is not allowed by the agent's --allow list;"), "{t}");
    assert!(t.contains("; and 9 more"), "{t}");
    assert!(t.contains("leave these networks out with --net"), "{t}");
    assert_eq!(t.matches("is not allowed").count(), 3, "{t}");
}

#[test]
fn a_silent_node_and_an_interrupted_run_are_said_once() {
    let mut p = pairs(0, 3, &|_, _| good());
    for x in p.iter_mut().filter(|x| x.from == 2 || x.to == 2) {
        x.path = None;
        x.not_measured.push(TestSkipped {
            test: MeshTests::Path,
            why: NotMeasured::NodeSilent { node: 2 },
        });
    }
    let silent = [SilentNode {
        node: 2,
        silence: Silence::NoAnswer,
        at_ms: 7_400,
        waited_ms: 4_003,
    }];
    let t = text(&doc(
        nodes(3),
        vec![network(0, 3, &|_| 9000)],
        p.clone(),
        &silent,
    ));
    assert!(
        t.contains("node n3 went silent 7.4 s into the run: its agent stopped answering"),
        "{t}"
    );
    assert!(t.contains("4 pair tests with it not measured"), "{t}");
    assert!(
        t.contains("NM: 4 pairs not measured (n3 went silent: 4)"),
        "{t}"
    );
    // Interrupted: no finding from the pairs it cut, one line saying so.
    for x in &mut p {
        x.not_measured = vec![TestSkipped {
            test: MeshTests::Path,
            why: NotMeasured::Interrupted,
        }];
    }
    let mut d = doc(nodes(3), vec![network(0, 3, &|_| 9000)], p, &[]);
    d.result.interrupted = true;
    d.headline = super::super::headline(&d.result);
    let t = text(&d);
    // The headline's tag, and the one line that says what was measured.
    assert_eq!(t.matches("interrupted").count(), 2, "{t}");
    assert!(!t.contains("NM:"), "{t}");
    assert!(
        t.contains("mesh: 3 nodes, 1 networks, 6 pairs (interrupted)"),
        "{t}"
    );
    assert!(
        t.contains("interrupted after 3.2 s: measured path 2 of 6 pairs; 6 pair tests not measured (no finding is drawn from them)"),
        "{t}"
    );
    assert!(t.contains("no findings"), "{t}");
}

#[test]
fn peer_text_is_escaped() {
    let mut ns = nodes(3);
    ns[1].label = "n2\u{1b}[31m".into();
    ns[2].error = Some(NodeError::Discovery {
        error: mtuperf_proto::failed::Failed::error("closed\nfake log line"),
    });
    let t = text(&doc(
        ns,
        vec![network(0, 2, &|_| 9000)],
        pairs(0, 2, &|_, _| good()),
        &[],
    ));
    assert!(!t.contains('\u{1b}') && t.contains("n2\\x1b[31m"), "{t}");
    assert!(t.contains("closed\\nfake log line"), "{t}");
}
