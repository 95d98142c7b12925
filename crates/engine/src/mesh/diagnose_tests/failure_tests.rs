//! Tests that failed and nodes that could not be reached: findings of their own,
//! grouped by cause, never a fault of the paths.

use super::*;

#[test]
fn a_failed_test_and_an_unreachable_node_are_findings() {
    let mut ns = nodes(3);
    ns[2].error = Some(NodeError::Discovery {
        error: mtuperf_proto::failed::Failed::error("cannot connect"),
    });
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
                    why: mtuperf_proto::msg::PeerAuth::Refused {
                        refusal: Box::new(Refusal::NotAllowed {
                            peer: format!("fd00::{}", x.from + 1),
                        }),
                    },
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
        vec![(Some(0), 1, 1), (Some(1), 12, crate::mesh::EXAMPLES)]
    );
    assert_eq!(
        cells
            .iter()
            .filter(|c| c.verdict == CellVerdict::Error)
            .count(),
        13
    );
}
