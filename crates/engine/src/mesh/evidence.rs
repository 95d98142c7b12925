//! Which measurements the diagnosis may believe. Every direction `from` → `to` of a
//! network is measured twice: by `from` (the forward search of its test toward `to`)
//! and by `to` (the reverse search of its test toward `from`). Before the matrix is
//! read:
//!
//! 1. a measurement no path between the two ends can carry (above the smaller NIC
//!    MTU the two nodes reported at discovery, or above an IP packet's 65,535 bytes)
//!    is refused, and named per node (`implausible`);
//! 2. two measurements of one direction that differ by more than the link-layer
//!    slack contradict each other. A node whose measurements contradict every peer
//!    it can be compared with (at least two), while those peers agree among
//!    themselves, is named (`disputed` with the node) and all its measurements are
//!    left out; a contradiction no node explains (two nodes alone, say) leaves both
//!    sides out and is named for the pair;
//! 3. the diagnosis reads the rest: for each direction, the smaller of the
//!    measurements that agree.
//!
//! Nothing a node says about others can then relabel their cells: a doubted
//! measurement shows as disputed in its own cell only.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use mtuperf_proto::msg::mesh::{DirSummary, StopKind};

use super::finding::{Claim, Contradiction, Finding, Implausible, MeshFinding};
use super::model::{Doubt, MeshNetwork, PairResult};
use crate::diagnosis::pair::Hop;
use crate::path::LINK_SLACK;

/// The largest IP packet (the IPv4 total length and the IPv6 payload length are
/// 16-bit fields; jumbograms never cross an interconnect).
pub const MAX_IP_PACKET: u32 = 65_535;

/// What was seen of one direction (from, to) on one network, from the measurements
/// that agree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Obs {
    pub mtu: u32,
    pub stop: StopKind,
    pub icmp_from: Option<String>,
    /// The last hop that still answered the larger packets (the sender's TTL-limited
    /// probes), when they vanish past it.
    pub vanish_after: Option<Hop>,
}

/// Measurements left out: keyed by (measuring node, from, to), with why and the
/// finding that says so.
pub type Doubted = BTreeMap<(usize, usize, usize), (Doubt, usize)>;

/// What the diagnosis of one network may use.
#[derive(Debug, Default)]
pub struct Evidence {
    pub obs: BTreeMap<(usize, usize), Obs>,
    pub doubted: Doubted,
    /// The first router node `from`'s packets toward `to` reach, as `from` saw it.
    pub first_router: BTreeMap<(usize, usize), IpAddr>,
}

/// One node's measurement of one direction.
#[derive(Debug, Clone, Copy)]
struct Measured<'a> {
    by: usize,
    from: usize,
    to: usize,
    d: &'a DirSummary,
    /// The measuring node's located vanishing hop (forward measurements only).
    located: Option<Hop>,
    /// The measuring node's first router toward its peer.
    first_router: Option<IpAddr>,
}

impl Measured<'_> {
    fn claim(&self) -> Claim {
        Claim {
            by: self.by,
            mtu: self.d.mtu,
            stop: self.d.stop,
        }
    }
}

fn measurements(ni: usize, pairs: &[PairResult]) -> Vec<Measured<'_>> {
    let mut out = Vec::new();
    for p in pairs.iter().filter(|p| p.net == ni) {
        if let Some(s) = &p.path {
            let first_router = s.first_router.as_deref().and_then(addr);
            out.push(Measured {
                by: p.from,
                from: p.from,
                to: p.to,
                d: &s.forward,
                located: s.vanish_after.as_ref().map(|h| Hop {
                    ttl: h.ttl,
                    addr: h.addr.as_deref().and_then(addr),
                }),
                first_router,
            });
            out.push(Measured {
                by: p.from,
                from: p.to,
                to: p.from,
                d: &s.reverse,
                located: None,
                first_router,
            });
        }
    }
    out
}

/// The smaller NIC MTU of a direction's two ends, when either reported one.
fn limit(net: &MeshNetwork, from: usize, to: usize) -> Option<u32> {
    match (net.nic_mtu(from), net.nic_mtu(to)) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn impossible(net: &MeshNetwork, m: &Measured<'_>) -> Option<Implausible> {
    let l = limit(net, m.from, m.to).unwrap_or(MAX_IP_PACKET);
    let bad = m.d.mtu > l || m.d.largest_ok > l.saturating_add(LINK_SLACK).min(MAX_IP_PACKET);
    bad.then_some(Implausible {
        by: m.by,
        from: m.from,
        to: m.to,
        mtu: m.d.mtu,
        largest_ok: m.d.largest_ok,
        limit: l,
    })
}

/// Weighs the measurements of network `ni`: pushes a finding for each node whose
/// measurements are refused and returns what the diagnosis may use.
pub fn weigh(
    ni: usize,
    net: &MeshNetwork,
    pairs: &[PairResult],
    findings: &mut Vec<MeshFinding>,
) -> Evidence {
    let all = measurements(ni, pairs);
    let mut ev = Evidence::default();
    let plausible = refuse_impossible(ni, net, &all, &mut ev, findings);
    refuse_contradicted(ni, net, &plausible, &mut ev, findings);
    // What is left agrees: the smaller value of each direction, and where the
    // sender's own probes saw its larger packets vanish.
    for m in plausible
        .iter()
        .filter(|m| !ev.doubted.contains_key(&(m.by, m.from, m.to)))
    {
        let mut o = Obs {
            mtu: m.d.mtu,
            stop: m.d.stop,
            icmp_from: m.d.icmp_from.clone(),
            vanish_after: m.located,
        };
        match ev.obs.get_mut(&(m.from, m.to)) {
            Some(old) if old.mtu <= o.mtu => {
                old.vanish_after = old.vanish_after.or(o.vanish_after);
            }
            Some(old) => {
                o.vanish_after = o.vanish_after.or(old.vanish_after);
                *old = o;
            }
            None => {
                ev.obs.insert((m.from, m.to), o);
            }
        }
        if let Some(r) = m.first_router.filter(|_| m.by == m.from) {
            ev.first_router.insert((m.from, m.to), r);
        }
    }
    ev
}

fn addr(s: &str) -> Option<IpAddr> {
    s.parse().ok()
}

/// Step 1: values no path can carry, named per measuring node; returns the others.
fn refuse_impossible<'a>(
    ni: usize,
    net: &MeshNetwork,
    all: &[Measured<'a>],
    ev: &mut Evidence,
    findings: &mut Vec<MeshFinding>,
) -> Vec<Measured<'a>> {
    let mut refused: BTreeMap<usize, Vec<Implausible>> = BTreeMap::new();
    let mut plausible = Vec::new();
    for m in all {
        match impossible(net, m) {
            Some(i) => refused.entry(m.by).or_default().push(i),
            None => plausible.push(*m),
        }
    }
    for (by, claims) in refused {
        let idx = findings.len();
        for c in &claims {
            ev.doubted
                .insert((by, c.from, c.to), (Doubt::Implausible, idx));
        }
        findings.push(MeshFinding::new(
            Some(ni),
            Some(by),
            Finding::Implausible { claims },
        ));
    }
    plausible
}

/// Step 2: contradictions, and whom they point at. A node that contradicts every
/// peer loses all its measurements; a contradiction no node explains loses both.
fn refuse_contradicted(
    ni: usize,
    net: &MeshNetwork,
    plausible: &[Measured<'_>],
    ev: &mut Evidence,
    findings: &mut Vec<MeshFinding>,
) {
    let contra = contradictions(plausible);
    let outliers = outliers(plausible, &contra, net.members.len());
    for &v in &outliers {
        let idx = findings.len();
        let theirs: Vec<Contradiction> = contra
            .iter()
            .filter(|(m, o)| m.by == v || o.by == v)
            .map(|(m, o)| contradiction(m, o))
            .collect();
        for m in plausible.iter().filter(|m| m.by == v) {
            ev.doubted.insert((v, m.from, m.to), (Doubt::Disputed, idx));
        }
        findings.push(MeshFinding::new(
            Some(ni),
            Some(v),
            Finding::Disputed {
                contradictions: theirs,
            },
        ));
    }
    let unexplained: Vec<_> = contra
        .iter()
        .filter(|(m, o)| !outliers.contains(&m.by) && !outliers.contains(&o.by))
        .collect();
    if unexplained.is_empty() {
        return;
    }
    let idx = findings.len();
    for (m, o) in &unexplained {
        for x in [m, o] {
            ev.doubted
                .insert((x.by, x.from, x.to), (Doubt::Disputed, idx));
        }
    }
    findings.push(MeshFinding::new(
        Some(ni),
        None,
        Finding::Disputed {
            contradictions: unexplained
                .iter()
                .map(|(m, o)| contradiction(m, o))
                .collect(),
        },
    ));
}

fn contradiction(m: &Measured<'_>, o: &Measured<'_>) -> Contradiction {
    Contradiction {
        from: m.from,
        to: m.to,
        claims: vec![m.claim(), o.claim()],
    }
}

/// Pairs of measurements of one direction, by two nodes, that differ by more than
/// the link-layer slack (the first by the direction's sender).
fn contradictions<'a>(ms: &[Measured<'a>]) -> Vec<(Measured<'a>, Measured<'a>)> {
    let mut by_dir: BTreeMap<(usize, usize), Vec<Measured<'a>>> = BTreeMap::new();
    for m in ms {
        by_dir.entry((m.from, m.to)).or_default().push(*m);
    }
    let mut out = Vec::new();
    for list in by_dir.values() {
        for (i, a) in list.iter().enumerate() {
            for b in list.iter().skip(i + 1) {
                if a.by != b.by && a.d.mtu.abs_diff(b.d.mtu) > LINK_SLACK {
                    let (x, y) = if a.by == a.from { (a, b) } else { (b, a) };
                    out.push((*x, *y));
                }
            }
        }
    }
    out
}

/// Nodes whose measurements contradict every peer they can be compared with (at
/// least two peers); none when that would be half the network's members or more
/// (then nobody's word is the majority's).
fn outliers(
    ms: &[Measured<'_>],
    contra: &[(Measured<'_>, Measured<'_>)],
    members: usize,
) -> BTreeSet<usize> {
    // Peers each node shares a measured direction with, and those it contradicts.
    let mut compared: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut by_dir: BTreeMap<(usize, usize), BTreeSet<usize>> = BTreeMap::new();
    for m in ms {
        by_dir.entry((m.from, m.to)).or_default().insert(m.by);
    }
    for who in by_dir.values() {
        for &a in who {
            for &b in who.iter().filter(|&&b| b != a) {
                compared.entry(a).or_default().insert(b);
            }
        }
    }
    let mut against: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for (m, o) in contra {
        against.entry(m.by).or_default().insert(o.by);
        against.entry(o.by).or_default().insert(m.by);
    }
    let out: BTreeSet<usize> = against
        .iter()
        .filter(|(v, peers)| peers.len() >= 2 && compared.get(v) == Some(peers))
        .map(|(v, _)| *v)
        .collect();
    if out.len() * 2 >= members {
        return BTreeSet::new();
    }
    out
}
