//! The mesh's words on synthetic results: the findings as the docs show them, the
//! hostile node's disagreement, grouped failures, a silent node, an interrupted run,
//! and escaped peer text.

use std::net::IpAddr;

use mtuperf_engine::mesh::{
    diagnose, MeshNetwork, MeshNode, MeshResult, MeshTests, NodeAddr, NodeError, NotMeasured,
    PairError, PairResult, Silence, SilentNode, TestFailure, TestSkipped,
};
use mtuperf_engine::mesh::{Finding, MeshFinding};
use mtuperf_engine::ssh::{Cause, Failure, Step};
use mtuperf_proto::msg::mesh::{DirSummary, PathSummary, RrSummary, StopKind};
use mtuperf_proto::msg::rr::{RrCounts, RrProto};
use mtuperf_proto::msg::Refusal;

use super::{text, Document};

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

fn network(k: u8, n: usize, nic: &dyn Fn(usize) -> u32) -> MeshNetwork {
    MeshNetwork {
        source: mtuperf_engine::mesh::NetSource::default(),
        name: ["A", "B"][usize::from(k)].into(),
        cidr: format!("10.{}.0.0/24", k + 1).parse().unwrap(),
        expect: 9000,
        members: (0..n)
            .map(|i| NodeAddr {
                node: i,
                addr: IpAddr::from([10, k + 1, 0, i as u8 + 1]),
                iface: format!("eth{}", k + 1),
                mtu: nic(i),
            })
            .collect(),
    }
}

fn dir(mtu: u32, stop: StopKind) -> DirSummary {
    DirSummary {
        largest_ok: mtu,
        mtu,
        stop,
        icmp_from: None,
        probes: 20,
        lost: 0,
        rtt_us: None,
        wait_us: None,
    }
}

/// Every ordered pair of net `k`; `f(from, to)` what the asked node `from` reports
/// of (forward, reverse).
fn pairs(
    k: usize,
    n: usize,
    f: &dyn Fn(usize, usize) -> (DirSummary, DirSummary),
) -> Vec<PairResult> {
    let mut out = Vec::new();
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            let (forward, reverse) = f(a, b);
            let mut p = PairResult::new(k, a, b);
            p.path = Some(PathSummary {
                forward,
                reverse,
                local_mtu: 9000,
                peer_mtu: Some(9000),
                same_segment: true,
                first_router: None,
                vanish_after: None,
                elapsed_ms: 1,
            });
            out.push(p);
        }
    }
    out
}

fn doc(
    nodes: Vec<MeshNode>,
    networks: Vec<MeshNetwork>,
    pairs: Vec<PairResult>,
    silent: &[SilentNode],
) -> Document {
    let (cells, findings) = diagnose(&nodes, &networks, &pairs, silent);
    Document::new(MeshResult {
        started_unix_ms: 0,
        elapsed_ms: 3_200,
        deadline_ms: 125_000,
        tests: vec![MeshTests::Path],
        expect: None,
        expect_nets: Vec::new(),
        nodes,
        networks,
        pairs,
        cells,
        findings,
        block: None,
        kernel: Vec::new(),
        checks: Vec::new(),
        jumbo: Vec::new(),
        interrupted: false,
        deadline_passed: false,
    })
}

fn good() -> (DirSummary, DirSummary) {
    (dir(9000, StopKind::Top), dir(9000, StopKind::Top))
}

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
                    detail: format!(
                        "address fd6d::{} is not allowed by the agent's --allow list",
                        x.from + 1
                    ),
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
    d.headline = super::headline(&d.result);
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
        detail: "closed\nfake log line".into(),
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

#[test]
fn a_mesh_1_or_5_document_is_refused_by_name() {
    let old = r#"{"schema":"mtuperf.mesh/1","run_id":1,"findings":[{"kind":"test_failed","summary":"x","evidence":"y","next":"z"}]}"#;
    let e = super::decode(old).unwrap_err().to_string();
    assert!(
        e.contains("schema mtuperf.mesh/1 is not read by this version, which reads mtuperf.mesh/6"),
        "{e}"
    );
    let e = super::decode(r#"{"schema":"mtuperf.mesh/5"}"#)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("which reads mtuperf.mesh/6; run the mesh again"),
        "{e}"
    );
    let d = doc(
        nodes(2),
        vec![network(0, 2, &|_| 9000)],
        pairs(0, 2, &|_, _| good()),
        &[],
    );
    let back = super::decode(&serde_json::to_string(&d).unwrap()).unwrap();
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
    let back = super::decode(&json).unwrap();
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

fn rr(p50: Option<u64>, lost: u64, fragments: u64) -> RrSummary {
    RrSummary {
        proto: RrProto::Udp,
        block: 8192,
        request: 128,
        rate: None,
        timeout_ms: 500,
        counts: RrCounts {
            requests_sent: 1000 + lost,
            blocks: if p50.is_some() { 1000 } else { 0 },
            lost,
            ..RrCounts::default()
        },
        unanswered: 0,
        p50_ns: p50,
        p99_ns: p50.map(|x| x * 3),
        p999_ns: p50.map(|x| x * 4),
        max_ns: p50.map(|x| x * 5),
        wall_ns: 2_000_000_000,
        served: 1000,
        fragments: Some(fragments * 1000),
        interrupted_by: Vec::new(),
    }
}

/// Issue 30: the block test's grids (a short path marked, no block answered said as
/// none, never 0), the cluvfy-style checks, the kernel counters and the findings
/// they raise name the node and link doctor's checks; an interconnect NIC down
/// under --oifcfg is a finding.
#[test]
fn the_rac_answer_reads_as_checks_grids_kernel_and_findings() {
    use mtuperf_engine::mesh::checks::{checks, Inputs};
    use mtuperf_engine::mesh::{kernel, BlockTest, NicAbsence, NodeKernel};
    use mtuperf_proto::host::SnmpCounters;
    // n3's NIC at 1500: its pairs are short, and every block into n3 fails reassembly.
    let nic = |a: usize, b: usize| {
        let s = |x: usize, y: usize| match (x, y) {
            (2, _) => dir(1500, StopKind::Top),
            (_, 2) => dir(1500, StopKind::Silent),
            _ => dir(9000, StopKind::Top),
        };
        (s(a, b), s(b, a))
    };
    let mut p = pairs(0, 3, &nic);
    for x in &mut p {
        x.rr = Some(match (x.from, x.to) {
            (2, _) => rr(None, 4, 6),
            (_, 2) => rr(Some(150_000), 0, 0),
            _ => rr(Some(20_000), 0, 0),
        });
    }
    let nodes = nodes(3);
    let nets = vec![network(0, 3, &|i| if i == 2 { 1500 } else { 9000 })];
    let k = vec![NodeKernel {
        node: 2,
        snmp: Some(SnmpCounters {
            ip_reasm_fails: 1204,
            ip_reasm_reqds: 7224,
            ..SnmpCounters::default()
        }),
        nics: Vec::new(),
        span_ms: 9_100,
        error: None,
    }];
    let (cells, mut findings) = diagnose(&nodes, &nets, &p, &[]);
    findings.extend(kernel::findings(&k, &|_, _| Some(0), &|_, _| false));
    findings.push(MeshFinding::new(
        None,
        Some(1),
        Finding::InterconnectAbsent {
            iface: "eth2".into(),
            subnet: "10.2.0.0".parse().unwrap(),
            why: NicAbsence::Down,
        },
    ));
    let tests = vec![MeshTests::Path, MeshTests::Rr];
    let ch = checks(&Inputs {
        tests: &tests,
        networks: &nets,
        pairs: &p,
        cells: &cells,
        findings: &findings,
        kernel: &k,
        max_block_p99: None,
    });
    let d = Document::new(MeshResult {
        started_unix_ms: 0,
        elapsed_ms: 9_200,
        deadline_ms: 125_000,
        tests,
        expect: None,
        expect_nets: Vec::new(),
        nodes,
        networks: nets,
        pairs: p,
        cells,
        findings,
        block: Some(BlockTest::default()),
        kernel: k,
        checks: ch,
        jumbo: Vec::new(),
        interrupted: false,
        deadline_passed: false,
    });
    let h = super::html(&d);
    for want in [
        "<h2>Checks</h2>",
        "<tr><td>net A  10.1.0.0/24</td><td>lost blocks = 0</td><td style=\"color:#d55e00\"><b>FAILED</b></td><td>8 lost on 2 of 6 pairs (unanswered within 500 ms, or never)</td></tr>",
        "<td>reachability</td><td style=\"color:#009e73\"><b>PASSED</b></td>",
    ] {
        assert!(h.contains(want), "missing {want:?} in the HTML");
    }
    let t = text(&d);
    for want in [
        "rr: UDP 8 KiB blocks for 128 B requests, one in flight per pair; a block unanswered within 500 ms is lost",
        "checks (per network, as cluvfy prints them):",
        "net A  10.1.0.0/24  MTU 9000 both ways             FAILED   4 of 12 directions carry 9000",
        "net A  10.1.0.0/24  reachability                   PASSED   6 of 6 pairs reached",
        "net A  10.1.0.0/24  8 KiB block p99 under 1.00 ms  FAILED   2 of 6 pairs over; a pair answered no block",
        "lost blocks = 0                FAILED   8 lost on 2 of 6 pairs (unanswered within 500 ms, or never)",
        "reassembly failures = 0        FAILED   1,204 on n3 (whole-host counters, over the run)",
        "settings alike                 not run  add --tests doctor",
        "rr block latency p50/p99",
        "20/60",
        "none/none*",
        "500 0  500 0*",
        "0 4*",
        "150/450*",
        "*: 4 pairs whose path is short of 9000, measured all the same",
        "fragments per block: 0.0 to 6.0",
        "ReasmFails",
        "node n3: 1,204 IP reassembly failures during the run (net.ipv4.ipfrag_high_thresh ? on n3)",
        "Ip ReasmFails +1,204, ReasmTimeout +0, ReasmOKs +0 of ReasmReqds +7,224 fragments over 9.1 s of the run",
        "mtuperf doctor on n3 checks this (its reassembly check): sysctl -w net.ipv4.ipfrag_high_thresh=16777216",
        "node n2: its NIC eth2 is down: the cluster_interconnect subnet 10.2.0.0 is unusable cluster-wide",
    ] {
        assert!(t.contains(want), "{want:?} not in:\n{t}");
    }
    // No block answered is null in the JSON, never 0.
    let v = serde_json::to_value(&d).unwrap();
    let from_n3 = v["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["from"] == 2)
        .unwrap();
    assert!(from_n3["rr"]["p50_ns"].is_null(), "{from_n3:#}");
    assert_eq!(v["checks"][4]["check"], "reassembly");
    assert_eq!(v["checks"][4]["status"], "failed");
    assert_eq!(v["checks"][4]["nodes"], serde_json::json!([2]));
}

/// Issue 30, jumbo vs standard: a 9000 network and a 1500 one over the same three
/// nodes; n3 asking on 1500 gets no block. The text and the HTML say which networks,
/// how many node pairs, which were left out and why, the lost blocks on each, and
/// every figure's medians and change with its interval.
#[test]
fn jumbo_vs_standard_reads_as_medians_and_a_paired_change() {
    let mut public = network(1, 3, &|_| 1500);
    public.expect = 1500;
    let nets = vec![network(0, 3, &|_| 9000), public];
    let mut p = pairs(0, 3, &|_, _| good());
    p.extend(pairs(1, 3, &|_, _| {
        (dir(1500, StopKind::Top), dir(1500, StopKind::Top))
    }));
    // p50 on 9000 = 30 µs, 31 µs...; on 1500 = 48, 49, ... µs; n3 (2) asking on 1500: none.
    for (i, x) in p.iter_mut().enumerate() {
        let k = i as u64 % 6;
        x.rr = Some(match x.net {
            0 => rr(Some(30_000 + 1000 * k), 0, 0),
            _ if x.from == 2 => rr(None, 2, 0),
            _ => rr(Some(48_000 + 500 * k), 0, 6),
        });
    }
    let mut d = doc(nodes(3), nets, p, &[]);
    d.result.tests = vec![MeshTests::Path, MeshTests::Rr];
    d.result.jumbo = mtuperf_engine::mesh::jumbo::compare(&d.result.networks, &d.result.pairs);
    d.result.expect_nets = vec![mtuperf_engine::mesh::NetExpect {
        net: "10.2.0.0/16".parse().unwrap(),
        mtu: 1500,
    }];
    let t = text(&d);
    for want in [
        "tests path, rr; expect 1500 on 10.2.0.0/16, else the largest NIC MTU of each network; ",
        "\njumbo vs standard (the same node pairs' blocks on both networks: medians over the pairs, then the change with its 95% interval, paired by node pair):\n",
        "  net B (1500) → net A (9000): 6 node pairs; left out, no block answered on one network: n3 asking n1, n3 asking n2; lost blocks 4 → 0\n",
        "    block p50   48.8 µs → 31.5 µs  \u{2212}35% [\u{2212}38, \u{2212}33]\n",
        "    block p99  146.2 µs → 94.5 µs  \u{2212}35% [\u{2212}38, \u{2212}33]\n",
        "    blocks/s        500 → 500      +0% [+0, +0] not significant\n",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
    // The section sits between the networks' grids and the kernel counters.
    assert!(t.find("jumbo vs standard").unwrap() > t.find("net B  10.2.0.0/24").unwrap());
    let h = super::html(&d);
    for want in [
        "<h2>Jumbo vs standard</h2>",
        "<h3>net B (1500) → net A (9000)</h3>",
        "<tr><th>figure</th><th>net B (1500)</th><th>net A (9000)</th><th>change</th></tr>",
        "<tr><td>block p50</td><td>48.8 µs</td><td>31.5 µs</td>",
    ] {
        assert!(h.contains(want), "missing {want:?} in the HTML");
    }
    // One MTU everywhere: no section.
    let same = doc(
        nodes(2),
        vec![network(0, 2, &|_| 9000), network(1, 2, &|_| 9000)],
        pairs(0, 2, &|_, _| good()),
        &[],
    );
    assert!(!text(&same).contains("jumbo vs standard"));
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
