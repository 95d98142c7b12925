//! What a stored mesh document holds (typed causes and failures, never sentences) and
//! how a document of an older version is refused.

use super::*;

#[test]
fn a_mesh_1_or_5_document_is_refused_by_name() {
    let old = r#"{"schema":"mtuperf.mesh/1","run_id":1,"findings":[{"kind":"test_failed","summary":"x","evidence":"y","next":"z"}]}"#;
    let e = super::super::decode(old).unwrap_err().to_string();
    assert!(
        e.contains("schema mtuperf.mesh/1 is not read by this version, which reads mtuperf.mesh/7"),
        "{e}"
    );
    let e = super::super::decode(r#"{"schema":"mtuperf.mesh/5"}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("which reads mtuperf.mesh/7; run the mesh again"),
        "{e}"
    );
    let d = doc(
        nodes(2),
        vec![network(0, 2, &|_| 9000)],
        pairs(0, 2, &|_, _| good()),
        &[],
    );
    let back = super::super::decode(&serde_json::to_string(&d).unwrap()).unwrap();
    assert_eq!(back.result.findings, d.result.findings);
    assert_eq!(back.result.cells, d.result.cells);
}

/// A node `mesh --ssh` could not start is stored with its typed failure (the step and
/// the cause, the node's words as evidence), never the sentence, and read back whole;
/// the text words it from the type, flags included.
#[test]
fn an_ssh_failure_is_stored_typed_and_worded_when_read() {
    let mut ns = nodes(4);
    let failed = |i: usize, failure: Failure| MeshNode {
        label: format!("n{}", i + 1),
        agent: format!("ssh n{}", i + 1),
        hostname: None,
        error: Some(NodeError::Ssh { failure }),
        max_sessions: None,
        discovery: None,
    };
    ns[2] = failed(
        2,
        Failure::new(
            Step::Connect,
            Cause::said("ssh: connect to host 198.19.1.3 port 22: Connection refused"),
        ),
    );
    ns[3] = failed(
        3,
        Failure::new(
            Step::Plan,
            Cause::NoSharedNetwork {
                nets: vec!["198.19.0.0/16".parse().unwrap()],
            },
        ),
    );
    let d = doc(
        ns,
        vec![network(0, 2, &|_| 9000)],
        pairs(0, 2, &|_, _| good()),
        &[],
    );
    let json = serde_json::to_string(&d).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let error = &v["nodes"][3]["error"];
    assert_eq!(error["kind"], "ssh", "{error}");
    assert_eq!(error["failure"]["step"], "plan", "{error}");
    assert_eq!(
        error["failure"]["cause"]["kind"], "no_shared_network",
        "{error}"
    );
    assert_eq!(
        error["failure"]["cause"]["nets"][0], "198.19.0.0/16",
        "{error}"
    );
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["node"] == 2)
        .unwrap();
    assert_eq!(f["kind"], "unreachable");
    assert_eq!(f["error"]["failure"]["cause"]["kind"], "said");
    // The sentences are the report's, not the document's.
    assert!(
        !json.contains("--net") && !json.contains("no address"),
        "{json}"
    );
    let back = super::super::decode(&json).unwrap();
    assert_eq!(back.result.findings, d.result.findings);
    let errors: Vec<_> = back.result.nodes.iter().map(|n| n.error.clone()).collect();
    let want: Vec<_> = d.result.nodes.iter().map(|n| n.error.clone()).collect();
    assert_eq!(errors, want);
    let t = text(&back);
    for line in [
        "node n3: ssh: connect to host 198.19.1.3 port 22: Connection refused",
        "its agent could not be started over SSH (step: ssh)",
        "ssh -o BatchMode=yes n3 true",
        "node n4: addresses: no address on a network inside --net 198.19.0.0/16 shared with another node",
        "(step: addresses)",
    ] {
        assert!(t.contains(line), "{line}\n{t}");
    }
}

/// A load test cut short is stored with its typed causes and worded as the asked
/// agent's client would have worded them.
#[test]
fn a_cut_load_test_reads_its_typed_causes() {
    use mtuperf_proto::interrupt::{Interrupt, Span, Stalled};
    let mut p = pairs(0, 2, &|_, _| good());
    let Some(x) = p.first_mut() else {
        panic!("no pair")
    };
    x.failed.push(TestFailure {
        test: MeshTests::Rr,
        error: PairError::Cut {
            causes: vec![
                Interrupt::Stalled {
                    what: Stalled::Blocks,
                    spans: vec![Span {
                        from_ns: 1_000_000_000,
                        to_ns: 3_000_000_000,
                    }],
                },
                Interrupt::Requester {
                    error: "timed out".into(),
                },
            ],
        },
        elapsed_ms: 4,
    });
    let d = doc(nodes(2), vec![network(0, 2, &|_| 9000)], p, &[]);
    let t = text(&d);
    assert!(t.contains("the load test ended early"), "{t}");
    assert!(
        t.contains("ended early: stalled: no block came back from the agent from 1.0 s to 3.0 s; this end: timed out"),
        "{t}"
    );
    // Stored typed, read back to the same words.
    let back: Document = serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
    assert_eq!(text(&back), t);
}
