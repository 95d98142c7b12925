//! The RAC answer (checks, block grids, kernel counters, findings) and jumbo against
//! standard.

use super::*;

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
    let h = super::super::html(&d);
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
    let h = super::super::html(&d);
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
