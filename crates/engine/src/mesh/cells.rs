//! The whole mesh's diagnosis: unreachable and silent nodes, failed tests grouped by
//! cause, each network's evidence weighed ([`super::evidence`]) and diagnosed
//! ([`diagnose_net`]), and the matrix cells with the finding behind each failing or
//! doubted direction.

use std::collections::BTreeMap;
use std::mem::Discriminant;

use mtuperf_proto::msg::mesh::DirSummary;
use mtuperf_proto::msg::Refusal;

use super::diagnose::{diagnose_net, Explained};
use super::evidence::{weigh, Doubted};
use super::finding::{Finding, MeshFinding, Silence};
use super::model::{
    Cell, CellVerdict, DirCell, MeshNetwork, MeshNode, MeshTests, NotMeasured, PairError,
    PairResult, TestFailureAt,
};
use crate::diagnosis::{FaultClass, Location};

/// How many failed tests a `tests_failed` finding lists.
pub const EXAMPLES: usize = 3;

/// A node that went silent during the run, as the orchestrator saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SilentNode {
    pub node: usize,
    pub silence: Silence,
    pub at_ms: u64,
    pub waited_ms: u64,
}

/// The matrix and the findings of a mesh: unreachable and silent nodes, failed tests
/// grouped by cause, then each network's diagnosis.
pub fn diagnose(
    nodes: &[MeshNode],
    networks: &[MeshNetwork],
    pairs: &[PairResult],
    silent: &[SilentNode],
) -> (Vec<Cell>, Vec<MeshFinding>) {
    let mut findings = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(err) = &n.error {
            findings.push(MeshFinding::new(
                None,
                Some(i),
                Finding::Unreachable {
                    agent: n.agent.clone(),
                    error: err.clone(),
                },
            ));
        }
    }
    for s in silent {
        findings.push(silent_finding(s, pairs));
    }
    let failed_at = failures(pairs, &mut findings);
    let mut cells = Vec::new();
    for (ni, net) in networks.iter().enumerate() {
        let ev = weigh(ni, net, pairs, &mut findings);
        let explained = diagnose_net(ni, net, &ev, &mut findings);
        let at = Judge {
            expect: net.expect,
            explained: &explained,
            doubted: &ev.doubted,
            findings: &findings,
        };
        for p in pairs.iter().filter(|p| p.net == ni) {
            cells.push(at.cell(p, failed_at.contains_key(&(p.net, p.from, p.to))));
        }
    }
    (cells, findings)
}

fn silent_finding(s: &SilentNode, pairs: &[PairResult]) -> MeshFinding {
    let not_measured = pairs
        .iter()
        .flat_map(|p| &p.not_measured)
        .filter(|x| x.why == NotMeasured::NodeSilent { node: s.node })
        .count();
    MeshFinding::new(
        None,
        Some(s.node),
        Finding::NodeSilent {
            silence: s.silence,
            at_ms: s.at_ms,
            waited_ms: s.waited_ms,
            not_measured,
        },
    )
}

/// What failed tests are grouped by: the error's variant, and a refusal's reason.
fn cause(e: &PairError) -> (Discriminant<PairError>, Option<Discriminant<Refusal>>) {
    let refusal = match e {
        PairError::Refused { refusal, .. } | PairError::PeerRefused { refusal, .. } => {
            Some(std::mem::discriminant(refusal))
        }
        _ => None,
    };
    (std::mem::discriminant(e), refusal)
}

/// One `tests_failed` finding per cause, with the count and the first examples;
/// returns, per failed pair (net, from, to), its finding.
fn failures(
    pairs: &[PairResult],
    findings: &mut Vec<MeshFinding>,
) -> BTreeMap<(usize, usize, usize), usize> {
    let mut groups: Vec<(_, Vec<TestFailureAt>)> = Vec::new();
    for p in pairs {
        for f in &p.failed {
            let at = TestFailureAt {
                net: p.net,
                from: p.from,
                to: p.to,
                failure: f.clone(),
            };
            let key = cause(&f.error);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, list)) => list.push(at),
                None => groups.push((key, vec![at])),
            }
        }
    }
    let mut at = BTreeMap::new();
    for (_, list) in groups {
        let idx = findings.len();
        for x in &list {
            at.insert((x.net, x.from, x.to), idx);
        }
        let one_net = list
            .iter()
            .all(|x| Some(x.net) == list.first().map(|f| f.net));
        findings.push(MeshFinding::new(
            list.first().filter(|_| one_net).map(|x| x.net),
            None,
            Finding::TestsFailed {
                count: list.len(),
                examples: list.into_iter().take(EXAMPLES).collect(),
            },
        ));
    }
    at
}

/// What a network's cells are judged by.
struct Judge<'a> {
    expect: u32,
    explained: &'a Explained,
    doubted: &'a Doubted,
    findings: &'a [MeshFinding],
}

impl Judge<'_> {
    /// Direction `from` → `to` as `by` measured it.
    fn dir(&self, by: usize, from: usize, to: usize, d: &DirSummary) -> DirCell {
        if let Some(&(doubt, finding)) = self.doubted.get(&(by, from, to)) {
            return DirCell {
                mtu: d.mtu,
                stop: d.stop,
                ok: false,
                finding: Some(finding),
                doubt: Some(doubt),
            };
        }
        let ok = d.mtu >= self.expect;
        DirCell {
            mtu: d.mtu,
            stop: d.stop,
            ok,
            finding: if ok {
                None
            } else {
                self.explained.get(&(from, to)).copied()
            },
            doubt: None,
        }
    }

    fn cell(&self, p: &PairResult, failed: bool) -> Cell {
        let forward = p
            .path
            .as_ref()
            .map(|s| self.dir(p.from, p.from, p.to, &s.forward));
        let reverse = p
            .path
            .as_ref()
            .map(|s| self.dir(p.from, p.to, p.from, &s.reverse));
        let dirs = [&forward, &reverse];
        let verdict = if p.path.is_none() && p.not_measured(MeshTests::Path).is_some() {
            CellVerdict::NotMeasured
        } else if p.path.is_none() && failed {
            CellVerdict::Error
        } else if dirs.iter().copied().flatten().any(|d| d.doubt.is_some()) {
            CellVerdict::Disputed
        } else {
            let finding = dirs
                .iter()
                .copied()
                .flatten()
                .find_map(|d| d.finding)
                .and_then(|f| self.findings.get(f));
            match finding {
                Some(f) => verdict_of(f),
                None if dirs.iter().copied().flatten().all(|d| d.ok) => CellVerdict::Ok,
                None => CellVerdict::Limited,
            }
        };
        Cell {
            net: p.net,
            from: p.from,
            to: p.to,
            verdict,
            forward,
            reverse,
        }
    }
}

/// The cell verdict of a direction explained by finding `f`.
pub fn verdict_of(f: &MeshFinding) -> CellVerdict {
    match &f.what {
        Finding::Fault { diagnosis: d } => match (d.class(), &d.at) {
            (_, Location::Network { .. }) => CellVerdict::Network,
            (FaultClass::NicMtu, _) => CellVerdict::NicMtu,
            (FaultClass::RouteMtu, _) => CellVerdict::RouteMtu,
            (FaultClass::SwitchPort, _) => CellVerdict::SwitchPort,
            (FaultClass::OneWayDrop, _) => CellVerdict::OneWayDrop,
            (FaultClass::InboundDrop, _) => CellVerdict::InboundDrop,
            (FaultClass::OutboundDrop, _) => CellVerdict::OutboundDrop,
            (FaultClass::SilentDrop, _) => CellVerdict::SilentDrop,
            (FaultClass::BlackHole, _) => CellVerdict::BlackHole,
            (FaultClass::RouterMtu, _) => CellVerdict::RouterMtu,
        },
        Finding::Disputed { .. } | Finding::Implausible { .. } => CellVerdict::Disputed,
        Finding::TestsFailed { .. }
        | Finding::Unreachable { .. }
        | Finding::NodeSilent { .. }
        | Finding::Setting { .. }
        | Finding::InterconnectAbsent { .. }
        | Finding::Kernel { .. }
        | Finding::CheckFailed { .. } => CellVerdict::Limited,
    }
}
