//! Reading a network's matrix as a whole. Every pair of nodes is diagnosed as `path`
//! diagnoses one ([`crate::diagnosis::pair::decide`], on the measurements that agree,
//! see `evidence`), so a pair's fault has the class and location `path` would name.
//! Then patterns over nodes absorb the per-pair faults:
//!
//! 1. a node whose NIC is below the expected MTU: one finding for all its pairs;
//! 2. every pair between nodes with good NICs stopped silently on its segment: the
//!    network (its switch or VLAN), not a node;
//! 3. a node every pair of which fails, at least two of them silently on their
//!    segment both ways: that node's switch port;
//! 4. a node every direction into which stops silently while every direction out of
//!    it carries (two of each or more): its inbound side, one finding, where each
//!    pair saw only a one-way drop on its segment; the mirror image: its outbound
//!    side;
//! 5. what is left, grouped by class and location: every pair behind one router one
//!    finding for that router; a one-way drop no node explains stays its pair's.
//!
//! Each finding carries its evidence: the directions it explains and what was seen
//! of each. The matrix cells and the mesh-wide findings are built in `cells`.

use std::collections::{BTreeMap, BTreeSet};

use mtuperf_proto::msg::mesh::StopKind;

pub use super::evidence::{Evidence, Obs};
pub use super::finding::{Finding, FindingKind, MeshFinding, Seen};
use super::model::MeshNetwork;
use crate::diagnosis::pair::{self, End, Pair, Way};
use crate::diagnosis::{Diagnosis, Fault, FaultClass, Location};

type Dir = (usize, usize);
type Observed = BTreeMap<Dir, Obs>;
/// Failing direction → the index of the finding that explains it.
pub type Explained = BTreeMap<Dir, usize>;

fn seen(dirs: &[Dir], obs: &Observed) -> Vec<Seen> {
    dirs.iter()
        .filter_map(|&(from, to)| {
            let o = obs.get(&(from, to))?;
            Some(Seen {
                from,
                to,
                mtu: o.mtu,
                stop: o.stop,
                icmp_from: o.icmp_from.clone(),
            })
        })
        .collect()
}

/// The most common MTU among `dirs` (the size a fault limits paths to).
fn typical(dirs: &[Dir], obs: &Observed) -> u32 {
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    for o in dirs.iter().filter_map(|d| obs.get(d)) {
        *counts.entry(o.mtu).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(m, c)| (c, std::cmp::Reverse(m)))
        .map_or(0, |(m, _)| m)
}

/// One pair's fault, with the failing directions it explains.
#[derive(Debug, Clone)]
struct PairFault {
    a: usize,
    b: usize,
    dirs: Vec<Dir>,
    d: Diagnosis,
}

impl PairFault {
    fn has(&self, n: usize) -> bool {
        self.a == n || self.b == n
    }

    fn on_segment(&self) -> bool {
        self.d.class() == FaultClass::SwitchPort && matches!(self.d.at, Location::Segment { .. })
    }
}

/// One network's diagnosis under way.
struct Net<'a> {
    network: &'a MeshNetwork,
    ev: &'a Evidence,
}

impl Net<'_> {
    fn end(&self, n: usize, toward: usize) -> Option<End> {
        let m = self.network.members.iter().find(|m| m.node == n)?;
        Some(End {
            addr: m.addr,
            nic_mtu: (m.mtu > 0).then_some(m.mtu),
            iface: Some(m.iface.clone()),
            first_router: self.ev.first_router.get(&(n, toward)).copied(),
        })
    }

    fn way(&self, d: Dir) -> Option<Way> {
        self.ev.obs.get(&d).map(|o| Way {
            mtu: o.mtu,
            stop: o.stop,
            icmp_from: o.icmp_from.as_deref().and_then(|s| s.parse().ok()),
            vanish_after: o.vanish_after,
        })
    }

    /// Every measured pair's faults, as `path` would name them.
    fn pairs(&self) -> Vec<PairFault> {
        let e = self.network.expect;
        let mut keys: Vec<Dir> = self
            .ev
            .obs
            .keys()
            .map(|&(x, y)| (x.min(y), x.max(y)))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut out = Vec::new();
        for (a, b) in keys {
            let (Some(ea), Some(eb)) = (self.end(a, b), self.end(b, a)) else {
                continue;
            };
            let p = Pair {
                a: ea,
                b: eb,
                ab: self.way((a, b)),
                ba: self.way((b, a)),
                expect: e,
            };
            let dirs: Vec<Dir> = [(a, b), (b, a)]
                .into_iter()
                .filter(|d| self.ev.obs.get(d).is_some_and(|o| o.mtu < e))
                .collect();
            for d in pair::decide(&p) {
                out.push(PairFault {
                    a,
                    b,
                    dirs: dirs.clone(),
                    d,
                });
            }
        }
        out
    }

    fn node_at(&self, addr: std::net::IpAddr) -> Option<usize> {
        self.network
            .members
            .iter()
            .find(|m| m.addr == addr)
            .map(|m| m.node)
    }

    fn nic_fine(&self, n: usize) -> bool {
        self.network
            .members
            .iter()
            .any(|m| m.node == n && m.mtu >= self.network.expect)
    }

    /// The pairs measured through node `n` (unordered, by the other end).
    fn peers(&self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .ev
            .obs
            .keys()
            .filter_map(|&(x, y)| {
                if x == n {
                    Some(y)
                } else if y == n {
                    Some(x)
                } else {
                    None
                }
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// 2. Every pair between good NICs on its segment: the network.
    fn whole(&self, faults: &mut [PairFault]) {
        let fine = |n: usize| self.nic_fine(n);
        let pairs: BTreeSet<Dir> = self
            .ev
            .obs
            .keys()
            .map(|&(x, y)| (x.min(y), x.max(y)))
            .filter(|&(x, y)| fine(x) && fine(y))
            .collect();
        let on_segment = |&(x, y): &Dir| {
            faults
                .iter()
                .any(|f| (f.a, f.b) == (x, y) && f.on_segment())
        };
        if self.network.members.len() < 3 || pairs.is_empty() || !pairs.iter().all(on_segment) {
            return;
        }
        for f in faults
            .iter_mut()
            .filter(|f| fine(f.a) && fine(f.b) && f.on_segment())
        {
            f.d.at = Location::Network {
                cidr: self.network.cidr,
            };
        }
    }

    /// 3. A node every pair of which fails, two or more on their segment both ways.
    fn ports(&self, faults: &mut [PairFault]) {
        if self.network.members.len() < 3 {
            return;
        }
        for m in &self.network.members {
            let n = m.node;
            let peers = self.peers(n);
            let all_fail = peers
                .iter()
                .all(|&p| faults.iter().any(|f| f.has(n) && f.has(p)));
            let segs = faults.iter().filter(|f| f.has(n) && f.on_segment()).count();
            if !self.nic_fine(n) || !all_fail || segs < 2 {
                continue;
            }
            for f in faults.iter_mut().filter(|f| f.has(n) && f.on_segment()) {
                f.d.at = Location::Node { addr: m.addr };
            }
        }
    }

    /// Rule 4: a node every direction into which (or out of which) stops silently
    /// while every direction the other way carries: the one-way drops its pairs saw
    /// on their segments are its inbound (outbound) side.
    fn one_way(&self, faults: &mut [PairFault]) {
        let e = self.network.expect;
        if self.network.members.len() < 3 {
            return;
        }
        for m in self
            .network
            .members
            .iter()
            .filter(|m| self.nic_fine(m.node))
        {
            let dirs = |into: bool| -> Vec<&Obs> {
                let ours = |d: &Dir| if into { d.1 == m.node } else { d.0 == m.node };
                self.ev
                    .obs
                    .iter()
                    .filter(|(d, _)| ours(d))
                    .map(|(_, o)| o)
                    .collect()
            };
            let (ins, outs) = (dirs(true), dirs(false));
            let silent = |v: &[&Obs]| {
                v.len() >= 2 && v.iter().all(|o| o.mtu < e && o.stop == StopKind::Silent)
            };
            let carry = |v: &[&Obs]| !v.is_empty() && v.iter().all(|o| o.mtu >= e);
            let into = if silent(&ins) && carry(&outs) {
                true
            } else if silent(&outs) && carry(&ins) {
                false
            } else {
                continue;
            };
            for f in faults.iter_mut() {
                let Fault::OneWayDrop { from, to, .. } = f.d.fault else {
                    continue;
                };
                if into && to == m.addr {
                    f.d.fault = Fault::InboundDrop { nic_mtu: m.mtu };
                } else if !into && from == m.addr {
                    f.d.fault = Fault::OutboundDrop { nic_mtu: m.mtu };
                } else {
                    continue;
                }
                f.d.at = Location::Node { addr: m.addr };
            }
        }
    }
}

/// The order findings come in: nodes' NICs and routes, the network, nodes' ports and
/// one-way drops, routers, then what one pair shows.
fn rank(d: &Diagnosis) -> u8 {
    match (d.class(), &d.at) {
        (FaultClass::NicMtu, _) => 0,
        (FaultClass::RouteMtu, _) => 1,
        (_, Location::Network { .. }) => 2,
        (FaultClass::SwitchPort, Location::Node { .. }) => 3,
        (FaultClass::InboundDrop | FaultClass::OutboundDrop, _) => 4,
        (FaultClass::OneWayDrop, _) => 5,
        (FaultClass::BlackHole | FaultClass::RouterMtu, _) => 6,
        _ => 7,
    }
}

/// Diagnoses one network from the measurements that agree (`ev`); pushes its
/// findings and returns, per failing direction, the index of the finding that
/// explains it.
pub fn diagnose_net(
    ni: usize,
    net: &MeshNetwork,
    ev: &Evidence,
    findings: &mut Vec<MeshFinding>,
) -> Explained {
    let n = Net { network: net, ev };
    let mut faults = n.pairs();
    n.whole(&mut faults);
    n.ports(&mut faults);
    n.one_way(&mut faults);
    // 5. One finding per class and location, in the order of `rank`.
    let mut groups: Vec<(Diagnosis, Vec<PairFault>)> = Vec::new();
    for f in faults {
        match groups
            .iter_mut()
            .find(|(d, _)| d.class() == f.d.class() && d.at == f.d.at)
        {
            Some((_, list)) => list.push(f),
            None => groups.push((f.d.clone(), vec![f])),
        }
    }
    groups.sort_by_key(|(d, _)| rank(d));
    let mut explained = Explained::new();
    for (mut d, list) in groups {
        let mut dirs: Vec<Dir> = list.iter().flat_map(|f| f.dirs.clone()).collect();
        dirs.sort_unstable();
        dirs.dedup();
        d.mtu = typical(&dirs, &ev.obs);
        if let Fault::BlackHole { hop } | Fault::RouterMtu { hop } = &mut d.fault {
            *hop = list.iter().find_map(|f| match f.d.fault {
                Fault::BlackHole { hop } | Fault::RouterMtu { hop } => hop,
                _ => None,
            });
        }
        let node = match d.at {
            Location::Node { addr } => n.node_at(addr),
            _ => common_end(&list),
        };
        let idx = findings.len();
        for x in &dirs {
            explained.entry(*x).or_insert(idx);
        }
        findings.push(MeshFinding {
            net: Some(ni),
            node,
            directions: seen(&dirs, &ev.obs),
            what: Finding::Fault { diagnosis: d },
        });
    }
    explained
}

/// The node every pair of a group shares, when there are two pairs or more.
fn common_end(list: &[PairFault]) -> Option<usize> {
    let first = list.first()?;
    if list.len() < 2 {
        return None;
    }
    [first.a, first.b]
        .into_iter()
        .find(|&n| list.iter().all(|f| f.has(n)))
}
