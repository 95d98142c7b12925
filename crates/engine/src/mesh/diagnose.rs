//! Reading the matrix as a whole: which node, NIC, switch port or network explains
//! the failing directions. Per network, on the measurements that agree (see
//! `evidence`), in this order (each failing direction is explained by the first
//! finding that claims it):
//!
//! 1. a node whose NIC MTU is below the network's expected MTU, its directions failing;
//! 2. every direction failing: the network (switch, VLAN) when no NIC explains it;
//! 3. a node whose every direction, both ways, fails while its NIC says the expected
//!    MTU and other pairs pass: the L2 device in front of it (its switch port), or a
//!    router when frag-needed came back;
//! 4. a pair with one direction passing and the other failing: asymmetric;
//! 5. anything left: that pair's path is limited.
//!
//! Each finding carries its evidence: the directions it explains and what was seen
//! of each. The matrix cells and the mesh-wide findings are built in `cells`.

use std::collections::BTreeMap;

use mtuperf_proto::msg::mesh::StopKind;

pub use super::evidence::Obs;
pub use super::finding::{Finding, FindingKind, MeshFinding, Seen};
use super::model::MeshNetwork;

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

/// One network's diagnosis under way.
struct Net<'a> {
    ni: usize,
    network: &'a MeshNetwork,
    obs: &'a Observed,
    bad: Vec<Dir>,
    explained: Explained,
}

impl Net<'_> {
    fn involving(&self, n: usize) -> Vec<Dir> {
        self.obs
            .keys()
            .filter(|k| k.0 == n || k.1 == n)
            .copied()
            .collect()
    }

    /// Pushes a finding explaining `dirs` (those not yet explained).
    fn push(&mut self, node: Option<usize>, dirs: &[Dir], what: Finding, f: &mut Vec<MeshFinding>) {
        let idx = f.len();
        for d in dirs {
            self.explained.entry(*d).or_insert(idx);
        }
        f.push(MeshFinding {
            net: Some(self.ni),
            node,
            directions: seen(dirs, self.obs),
            what,
        });
    }

    fn unexplained(&self) -> Vec<Dir> {
        self.bad
            .iter()
            .filter(|d| !self.explained.contains_key(d))
            .copied()
            .collect()
    }

    /// 1. NICs below the expected MTU.
    fn nics(&mut self, f: &mut Vec<MeshFinding>) {
        let e = self.network.expect;
        let max_nic = self
            .network
            .members
            .iter()
            .map(|m| m.mtu)
            .max()
            .unwrap_or(0);
        for m in self.network.members.iter().filter(|m| m.mtu < e) {
            let through = self.involving(m.node);
            let dirs: Vec<Dir> = through
                .iter()
                .filter(|d| self.bad.contains(d))
                .copied()
                .collect();
            if dirs.is_empty() {
                continue;
            }
            let what = Finding::NicMtu {
                iface: m.iface.clone(),
                mtu: m.mtu,
                expect: e,
                others: (max_nic > m.mtu).then_some(max_nic),
                through: through.len(),
            };
            self.push(Some(m.node), &dirs, what, f);
        }
    }

    /// 2. The whole network: every direction between nodes whose NICs are fine fails.
    fn whole(&mut self, f: &mut Vec<MeshFinding>) -> bool {
        let e = self.network.expect;
        let fine = |n: usize| {
            self.network
                .members
                .iter()
                .any(|m| m.node == n && m.mtu >= e)
        };
        let between: Vec<Dir> = self
            .obs
            .keys()
            .filter(|d| fine(d.0) && fine(d.1))
            .copied()
            .collect();
        if between.is_empty() || !between.iter().all(|d| self.bad.contains(d)) {
            return false;
        }
        let mtu = typical(&between, self.obs);
        self.push(None, &between, Finding::Network { mtu, expect: e }, f);
        true
    }

    /// 3. A node whose every direction fails (both ways) while other pairs pass.
    fn nodes(&mut self, f: &mut Vec<MeshFinding>) {
        let e = self.network.expect;
        if self.network.members.len() < 3 {
            return;
        }
        for m in self.network.members.iter().filter(|m| m.mtu >= e) {
            let all = self.involving(m.node);
            let out = all.iter().any(|d| d.0 == m.node);
            let inn = all.iter().any(|d| d.1 == m.node);
            if all.is_empty() || !all.iter().all(|d| self.bad.contains(d)) || !(out && inn) {
                continue;
            }
            let silent = all
                .iter()
                .filter_map(|d| self.obs.get(d))
                .all(|o| o.stop != StopKind::Icmp);
            let mtu = typical(&all, self.obs);
            let what = if silent {
                Finding::SwitchPort {
                    iface: m.iface.clone(),
                    nic_mtu: m.mtu,
                    mtu,
                    expect: e,
                }
            } else {
                Finding::NodeRoute {
                    nic_mtu: m.mtu,
                    mtu,
                    expect: e,
                }
            };
            self.push(Some(m.node), &all, what, f);
        }
    }

    /// 4 and 5: what is left, pair by pair.
    fn pairs(&mut self, f: &mut Vec<MeshFinding>) {
        let e = self.network.expect;
        let left = self.unexplained();
        let mut done: Vec<Dir> = Vec::new();
        for &(a, b) in &left {
            let key = (a.min(b), a.max(b));
            if done.contains(&key) {
                continue;
            }
            done.push(key);
            let here = self.obs.get(&(a, b)).map_or(0, |o| o.mtu);
            match self.obs.get(&(b, a)).map(|o| o.mtu) {
                Some(back) if back >= e => {
                    let what = Finding::Asymmetric {
                        from: a,
                        to: b,
                        mtu: here,
                        back_mtu: back,
                        expect: e,
                    };
                    self.push(None, &[(a, b)], what, f);
                }
                _ => {
                    let dirs: Vec<Dir> = [(a, b), (b, a)]
                        .into_iter()
                        .filter(|d| left.contains(d))
                        .collect();
                    let mtu = typical(&dirs, self.obs);
                    self.push(
                        None,
                        &dirs,
                        Finding::Limited {
                            a,
                            b,
                            mtu,
                            expect: e,
                        },
                        f,
                    );
                }
            }
        }
    }
}

/// Diagnoses one network from the directions seen (`obs`: the measurements that
/// agree); pushes its findings and returns, per failing direction, the index of the
/// finding that explains it.
pub fn diagnose_net(
    ni: usize,
    net: &MeshNetwork,
    obs: &Observed,
    findings: &mut Vec<MeshFinding>,
) -> Explained {
    let bad: Vec<Dir> = obs
        .iter()
        .filter(|(_, o)| o.mtu < net.expect)
        .map(|(k, _)| *k)
        .collect();
    let mut n = Net {
        ni,
        network: net,
        obs,
        bad,
        explained: Explained::new(),
    };
    if n.bad.is_empty() {
        return n.explained;
    }
    n.nics(findings);
    if n.whole(findings) {
        return n.explained;
    }
    n.nodes(findings);
    n.pairs(findings);
    n.explained
}
