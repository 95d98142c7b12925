//! Reading the matrix as a whole: which node, NIC, switch port or network explains
//! the failing directions. Per network, in this order (each failing direction is
//! explained by the first finding that claims it):
//!
//! 1. a node whose NIC MTU is below the network's expected MTU, its directions failing;
//! 2. every direction failing: the network (switch, VLAN) when no NIC explains it;
//! 3. a node whose every direction, both ways, fails while its NIC says the expected
//!    MTU and other pairs pass: the L2 device in front of it (its switch port);
//! 4. a pair with one direction passing and the other failing: asymmetric;
//! 5. anything left: that pair's path is limited.
//!
//! Each finding names its evidence (directions, sizes, ICMP or silent) and a next step.
//! The matrix cells and the mesh-wide findings are built in `cells`.

use std::collections::BTreeMap;

use mtuperf_proto::msg::mesh::StopKind;

pub use super::model::{FindingKind, MeshFinding};
use super::model::{MeshNetwork, MeshNode, PairResult};

/// What was seen of one direction (from, to) on one network, over every test that
/// measured it (the forward search of from → to, the reverse search of to → from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obs {
    pub mtu: u32,
    pub stop: StopKind,
    pub icmp_from: Option<String>,
}

/// Every observed direction of one network, keyed by (from node, to node).
pub fn observations(net: usize, pairs: &[PairResult]) -> BTreeMap<(usize, usize), Obs> {
    let mut out: BTreeMap<(usize, usize), Obs> = BTreeMap::new();
    let mut add = |k: (usize, usize), d: &mtuperf_proto::msg::mesh::DirSummary| {
        let o = Obs {
            mtu: d.mtu,
            stop: d.stop,
            icmp_from: d.icmp_from.clone(),
        };
        match out.get(&k) {
            Some(old) if old.mtu <= o.mtu => {}
            _ => {
                out.insert(k, o);
            }
        }
    };
    for p in pairs.iter().filter(|p| p.net == net) {
        if let Some(s) = &p.path {
            add((p.from, p.to), &s.forward);
            add((p.to, p.from), &s.reverse);
        }
    }
    out
}

fn how(stop: StopKind) -> &'static str {
    match stop {
        StopKind::Top => "at the sender's NIC",
        StopKind::Icmp => "ICMP frag-needed",
        StopKind::Local => "refused by the sender",
        StopKind::Silent => "silent",
    }
}

/// "n1→n2 1500 silent, n2→n1 1500 at the sender's NIC, ... and 12 more".
fn list(
    dirs: &[(usize, usize)],
    obs: &BTreeMap<(usize, usize), Obs>,
    label: &dyn Fn(usize) -> String,
) -> String {
    const SHOWN: usize = 6;
    let mut parts: Vec<String> = dirs
        .iter()
        .take(SHOWN)
        .filter_map(|d| {
            let o = obs.get(d)?;
            Some(format!(
                "{}→{} {} {}",
                label(d.0),
                label(d.1),
                o.mtu,
                how(o.stop)
            ))
        })
        .collect();
    if dirs.len() > SHOWN {
        parts.push(format!("and {} more", dirs.len() - SHOWN));
    }
    parts.join(", ")
}

/// "4 silent, 2 ICMP (from 10.0.0.254)".
fn stops(dirs: &[(usize, usize)], obs: &BTreeMap<(usize, usize), Obs>) -> String {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut icmp_from = None;
    for o in dirs.iter().filter_map(|d| obs.get(d)) {
        let name = match o.stop {
            StopKind::Top | StopKind::Local => "at the sender's NIC",
            StopKind::Icmp => "ICMP",
            StopKind::Silent => "silent",
        };
        *counts.entry(name).or_default() += 1;
        if icmp_from.is_none() {
            icmp_from.clone_from(&o.icmp_from);
        }
    }
    let mut s: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    if let (Some(from), Some(last)) = (icmp_from, s.iter_mut().find(|x| x.ends_with("ICMP"))) {
        *last = format!("{last} (from {from})");
    }
    s.join(", ")
}

/// The most common MTU among `dirs` (the size a fault limits paths to).
fn typical(dirs: &[(usize, usize)], obs: &BTreeMap<(usize, usize), Obs>) -> u32 {
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    for o in dirs.iter().filter_map(|d| obs.get(d)) {
        *counts.entry(o.mtu).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(m, c)| (c, std::cmp::Reverse(m)))
        .map_or(0, |(m, _)| m)
}

/// Diagnoses one network; pushes its findings and returns, per failing direction,
/// the index of the finding that explains it.
#[allow(clippy::too_many_lines)]
pub fn diagnose_net(
    ni: usize,
    net: &MeshNetwork,
    nodes: &[MeshNode],
    obs: &BTreeMap<(usize, usize), Obs>,
    findings: &mut Vec<MeshFinding>,
) -> BTreeMap<(usize, usize), usize> {
    let label = |n: usize| {
        nodes
            .get(n)
            .map_or_else(|| n.to_string(), |x| x.label.clone())
    };
    let e = net.expect;
    let on = format!("net {} ({})", net.name, net.cidr);
    let bad: Vec<(usize, usize)> = obs
        .iter()
        .filter(|(_, o)| o.mtu < e)
        .map(|(k, _)| *k)
        .collect();
    let mut explained: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    if bad.is_empty() {
        return explained;
    }
    let involving = |n: usize| -> Vec<(usize, usize)> {
        obs.keys()
            .filter(|k| k.0 == n || k.1 == n)
            .copied()
            .collect()
    };
    let claim =
        |dirs: &[(usize, usize)], idx: usize, explained: &mut BTreeMap<(usize, usize), usize>| {
            for d in dirs {
                explained.entry(*d).or_insert(idx);
            }
        };
    let max_nic = net.members.iter().map(|m| m.mtu).max().unwrap_or(0);
    // 1. NICs below the expected MTU.
    for m in net.members.iter().filter(|m| m.mtu < e) {
        let dirs: Vec<(usize, usize)> = involving(m.node)
            .into_iter()
            .filter(|d| bad.contains(d))
            .collect();
        if dirs.is_empty() {
            continue;
        }
        let others = if max_nic > m.mtu {
            format!("the others {max_nic}")
        } else {
            format!("the expected MTU is {e}")
        };
        let idx = findings.len();
        findings.push(MeshFinding {
            kind: FindingKind::NicMtu,
            net: Some(ni),
            node: Some(m.node),
            summary: format!(
                "node {}'s NIC {} on {on} is MTU {}, {others}",
                label(m.node),
                m.iface,
                m.mtu
            ),
            evidence: format!(
                "{} of its {} directions carry less than {e}: {} ({})",
                dirs.len(),
                involving(m.node).len(),
                list(&dirs, obs, &label),
                stops(&dirs, obs)
            ),
            next: format!(
                "on {}: ip link set dev {} mtu {e}, and make it persistent in the network configuration",
                label(m.node),
                m.iface
            ),
            directions: dirs.clone(),
        });
        claim(&dirs, idx, &mut explained);
    }
    let rest: Vec<(usize, usize)> = bad
        .iter()
        .filter(|d| !explained.contains_key(d))
        .copied()
        .collect();
    // 2. The whole network: every direction between nodes whose NICs are fine fails.
    let fine_nic = |n: usize| net.members.iter().any(|m| m.node == n && m.mtu >= e);
    let between_fine: Vec<(usize, usize)> = obs
        .keys()
        .filter(|d| fine_nic(d.0) && fine_nic(d.1))
        .copied()
        .collect();
    if !between_fine.is_empty() && between_fine.iter().all(|d| bad.contains(d)) {
        let m = typical(&between_fine, obs);
        let idx = findings.len();
        findings.push(MeshFinding {
            kind: FindingKind::Network,
            net: Some(ni),
            node: None,
            summary: format!(
                "all pairs on {on} limited to {m} while the NICs say {e}: the switch or the network, not one node"
            ),
            evidence: format!("{} directions: {} ({})", between_fine.len(), list(&between_fine, obs, &label), stops(&between_fine, obs)),
            next: format!(
                "check the MTU of the switch (or VLAN, or any L2/L3 device) carrying {on}; every node's NIC is at {e}"
            ),
            directions: between_fine.clone(),
        });
        claim(&between_fine, idx, &mut explained);
        return explained;
    }
    // 3. A node whose every direction fails (both ways) while other pairs pass.
    if net.members.len() >= 3 {
        for m in net.members.iter().filter(|m| m.mtu >= e) {
            let all = involving(m.node);
            if all.is_empty() || !all.iter().all(|d| bad.contains(d)) {
                continue;
            }
            let out = all.iter().any(|d| d.0 == m.node);
            let inn = all.iter().any(|d| d.1 == m.node);
            if !(out && inn) {
                continue;
            }
            let dirs: Vec<(usize, usize)> = all
                .into_iter()
                .filter(|d| rest.contains(d) || explained.contains_key(d))
                .collect();
            let silent = dirs
                .iter()
                .filter_map(|d| obs.get(d))
                .all(|o| o.stop != StopKind::Icmp);
            let lim = typical(&dirs, obs);
            let idx = findings.len();
            let (kind, summary, next) = if silent {
                (
                    FindingKind::SwitchPort,
                    format!(
                        "node {} on {on}: every path through it stops above {lim} in both directions, silently, while its NIC ({}) says {} — its switch port (or an L2 device in front of it) is at {lim}",
                        label(m.node), m.iface, m.mtu
                    ),
                    format!(
                        "check the MTU of the switch port (and any bond, VLAN or bridge) in front of {}'s {} on {on}",
                        label(m.node), m.iface
                    ),
                )
            } else {
                (
                    FindingKind::NodeRoute,
                    format!(
                        "node {} on {on}: every path through it is limited to {lim} by a router answering frag-needed, while its NIC says {}",
                        label(m.node), m.mtu
                    ),
                    format!("mtuperf path --hops from {} toward another node on {on}, then check that router's MTU", label(m.node)),
                )
            };
            findings.push(MeshFinding {
                kind,
                net: Some(ni),
                node: Some(m.node),
                summary,
                evidence: format!(
                    "all {} directions through it carry less than {e}: {} ({}); pairs without it pass",
                    dirs.len(),
                    list(&dirs, obs, &label),
                    stops(&dirs, obs)
                ),
                next,
                directions: dirs.clone(),
            });
            claim(&dirs, idx, &mut explained);
        }
    }
    // 4 and 5: what is left, pair by pair.
    let left: Vec<(usize, usize)> = bad
        .iter()
        .filter(|d| !explained.contains_key(d))
        .copied()
        .collect();
    let mut done: Vec<(usize, usize)> = Vec::new();
    for &(a, b) in &left {
        let key = (a.min(b), a.max(b));
        if done.contains(&key) {
            continue;
        }
        done.push(key);
        let back = obs.get(&(b, a));
        let here = obs.get(&(a, b)).map_or(0, |o| o.mtu);
        let idx = findings.len();
        match back {
            Some(o) if o.mtu >= e => {
                findings.push(MeshFinding {
                    kind: FindingKind::Asymmetric,
                    net: Some(ni),
                    node: None,
                    summary: format!(
                        "asymmetric on {on}: {} → {} carries {}, {} → {} only {here}",
                        label(b), label(a), o.mtu, label(a), label(b)
                    ),
                    evidence: format!("{} ({})", list(&[(a, b)], obs, &label), stops(&[(a, b)], obs)),
                    next: format!(
                        "mtuperf path --hops from {} toward {}: the two directions take different routes (a routed return path) or devices",
                        label(a), label(b)
                    ),
                    directions: vec![(a, b)],
                });
                explained.insert((a, b), idx);
            }
            _ => {
                let dirs: Vec<(usize, usize)> = [(a, b), (b, a)]
                    .into_iter()
                    .filter(|d| left.contains(d))
                    .collect();
                findings.push(MeshFinding {
                    kind: FindingKind::Limited,
                    net: Some(ni),
                    node: None,
                    summary: format!(
                        "{} ↔ {} on {on}: the path carries only {}, the expected MTU is {e}",
                        label(a),
                        label(b),
                        typical(&dirs, obs)
                    ),
                    evidence: format!("{} ({})", list(&dirs, obs, &label), stops(&dirs, obs)),
                    next: format!("mtuperf path --hops from {} toward {}", label(a), label(b)),
                    directions: dirs.clone(),
                });
                claim(&dirs, idx, &mut explained);
            }
        }
    }
    explained
}
