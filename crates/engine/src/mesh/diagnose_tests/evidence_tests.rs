//! Measurements that contradict each other: a node that contradicts every peer is
//! named and left out of the diagnosis; two nodes that disagree get no verdict.

use super::*;

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
        Some(crate::mesh::model::Doubt::Disputed)
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
