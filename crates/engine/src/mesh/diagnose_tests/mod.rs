//! The diagnosis on synthetic matrices: each fault the mesh must name, alone and
//! together, and the cells it must (and must not) flag (`fault_tests`); failed tests
//! and unreachable nodes (`failure_tests`); measurements that contradict each other
//! (`evidence_tests`). Here: the matrices they are built from.

mod evidence_tests;
mod failure_tests;
mod fault_tests;

use std::net::IpAddr;

use mtuperf_proto::msg::mesh::{DirSummary, PathSummary, StopKind};

use super::cells::diagnose as diagnose_all;
use super::finding::{Finding, FindingKind, MeshFinding, NodeError};
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
