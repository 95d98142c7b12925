//! The whole mesh's diagnosis: unreachable nodes and failed tests as findings, each
//! network's diagnosis ([`diagnose_net`]), and the matrix cells with the finding that
//! explains each failing direction.

use std::collections::BTreeMap;

use super::diagnose::{diagnose_net, observations, FindingKind, MeshFinding};
use super::model::{Cell, DirCell, MeshNetwork, MeshNode, PairResult};

fn dir_cell(o: &mtuperf_proto::msg::mesh::DirSummary, e: u32, finding: Option<usize>) -> DirCell {
    DirCell {
        mtu: o.mtu,
        stop: o.stop,
        ok: o.mtu >= e,
        finding: if o.mtu >= e { None } else { finding },
    }
}

/// The matrix and the findings of a mesh: unreachable nodes, failed tests, then each
/// network's diagnosis.
pub fn diagnose(
    nodes: &[MeshNode],
    networks: &[MeshNetwork],
    pairs: &[PairResult],
) -> (Vec<Cell>, Vec<MeshFinding>) {
    let label = |n: usize| {
        nodes
            .get(n)
            .map_or_else(|| n.to_string(), |x| x.label.clone())
    };
    let mut findings = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(err) = &n.error {
            findings.push(MeshFinding {
                kind: FindingKind::Unreachable,
                net: None,
                node: Some(i),
                directions: Vec::new(),
                summary: format!("node {}: its agent at {} could not be asked: {err}", n.label, n.agent),
                evidence: "discovery failed; no pair with this node was tested".into(),
                next: format!(
                    "start a keyed agent on {} (mtuperf serve --key-file ...) and check the orchestrator can reach {}",
                    n.label, n.agent
                ),
            });
        }
    }
    let mut cells = Vec::new();
    for (ni, net) in networks.iter().enumerate() {
        let failed: Vec<&PairResult> = pairs
            .iter()
            .filter(|p| p.net == ni && p.error.is_some())
            .collect();
        let mut failed_idx: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for p in failed {
            failed_idx.insert((p.from, p.to), findings.len());
            findings.push(MeshFinding {
                kind: FindingKind::TestFailed,
                net: Some(ni),
                node: None,
                directions: vec![(p.from, p.to)],
                summary: format!(
                    "{} → {} on net {}: the test failed: {}",
                    label(p.from),
                    label(p.to),
                    net.name,
                    p.error.as_deref().unwrap_or("")
                ),
                evidence: format!(
                    "the orchestrator asked {}'s agent; it answered with an error or not in time",
                    label(p.from)
                ),
                next: format!(
                    "mtuperf path from {} toward {}'s address on net {}",
                    label(p.from),
                    label(p.to),
                    net.name
                ),
            });
        }
        let obs = observations(ni, pairs);
        let explained = diagnose_net(ni, net, nodes, &obs, &mut findings);
        for p in pairs.iter().filter(|p| p.net == ni) {
            let forward = p.path.as_ref().map(|s| {
                dir_cell(
                    &s.forward,
                    net.expect,
                    explained.get(&(p.from, p.to)).copied(),
                )
            });
            let reverse = p.path.as_ref().map(|s| {
                dir_cell(
                    &s.reverse,
                    net.expect,
                    explained.get(&(p.to, p.from)).copied(),
                )
            });
            let verdict = if p.path.is_none() && failed_idx.contains_key(&(p.from, p.to)) {
                "error".to_string()
            } else {
                [&forward, &reverse]
                    .into_iter()
                    .flatten()
                    .find_map(|d| d.finding)
                    .and_then(|f| findings.get(f))
                    .map_or_else(
                        || {
                            if [&forward, &reverse].into_iter().flatten().all(|d| d.ok) {
                                "ok".to_string()
                            } else {
                                "limited".to_string()
                            }
                        },
                        |f| kind_name(f.kind).to_string(),
                    )
            };
            cells.push(Cell {
                net: ni,
                from: p.from,
                to: p.to,
                verdict,
                forward,
                reverse,
            });
        }
    }
    (cells, findings)
}

pub fn kind_name(k: FindingKind) -> &'static str {
    match k {
        FindingKind::NicMtu => "nic_mtu",
        FindingKind::SwitchPort => "switch_port",
        FindingKind::NodeRoute => "node_route",
        FindingKind::Network => "network",
        FindingKind::Asymmetric => "asymmetric",
        FindingKind::Limited => "limited",
        FindingKind::TestFailed => "error",
        FindingKind::Unreachable => "unreachable",
        FindingKind::Setting => "setting",
    }
}
