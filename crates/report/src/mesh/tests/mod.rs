//! The mesh's words on synthetic results, by concern: the findings and the plain
//! answer (`findings`), the RAC block test and jumbo against standard (`rac`), and
//! what a stored document holds and how an old one is refused (`stored`). The
//! synthetic results are built here.

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

mod findings;
mod rac;
mod stored;

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
