//! A fault of the paths in words: the diagnosis `path` shares, the directions it
//! explains and how each stopped; and the plain answer, which names the first fault.

use std::collections::BTreeMap;
use std::net::IpAddr;

use mtuperf_engine::diagnosis::{Diagnosis, Fault, Location};
use mtuperf_engine::mesh::{Answer, Finding, MeshFinding, Seen, Unanswered};
use mtuperf_proto::msg::mesh::StopKind;

use super::{esc, how, some, Say, Words};
use crate::diagnosis::{self, Names, Scope};

/// "4 silent, 2 ICMP (from 10.0.0.254)".
fn stops(dirs: &[Seen]) -> String {
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut icmp_from = None;
    for s in dirs {
        let name = match s.stop {
            StopKind::Top | StopKind::Local => "at the sender's NIC",
            StopKind::Icmp => "ICMP",
            StopKind::Silent => "silent",
        };
        *counts.entry(name).or_default() += 1;
        if icmp_from.is_none() {
            icmp_from.clone_from(&s.icmp_from);
        }
    }
    let mut out: Vec<String> = counts.iter().map(|(k, v)| format!("{v} {k}")).collect();
    if let (Some(from), Some(last)) = (icmp_from, out.iter_mut().find(|x| x.ends_with("ICMP"))) {
        *last = format!("{last} (from {})", esc(&from));
    }
    out.join(", ")
}

impl Say<'_> {
    /// "n1→n2 1500 silent, n2→n1 1500 at the sender's NIC, ... and 2 more".
    fn list(&self, dirs: &[Seen]) -> String {
        some(
            dirs.iter()
                .map(|s| {
                    format!(
                        "{}→{} {} {}",
                        self.node(s.from),
                        self.node(s.to),
                        s.mtu,
                        how(s.stop)
                    )
                })
                .collect(),
        )
    }

    /// Names a node of network `ni` by its address there ("node n3"), anything else
    /// by its address.
    fn by_addr(&self, ni: Option<usize>) -> impl Fn(IpAddr) -> String + '_ {
        let net = ni.and_then(|i| self.d.result.networks.get(i));
        move |a: IpAddr| {
            net.and_then(|n| n.members.iter().find(|m| m.addr == a))
                .map_or_else(|| a.to_string(), |m| format!("node {}", self.node(m.node)))
        }
    }

    /// How a network's fault names its places: the network with its subnet, or
    /// (`short`, the plain answer) by its name alone.
    fn names<'b>(
        &self,
        ni: Option<usize>,
        node: &'b dyn Fn(IpAddr) -> String,
        short: bool,
    ) -> Names<'b> {
        let on = match ni {
            Some(i) if short => format!(" on net {}", self.net_label(i)),
            Some(_) => format!(" on {}", self.net(ni)),
            None => String::new(),
        };
        Names { node, on }
    }

    /// Whether finding `f` covers every measured direction into (or out of) its node.
    fn every(&self, f: &MeshFinding, d: &Diagnosis) -> Scope {
        let (Some(ni), Some(n)) = (f.net, f.node) else {
            return Scope::Pair;
        };
        let into = matches!(d.fault, Fault::InboundDrop { .. });
        let ours = |from: usize, to: usize| if into { to == n } else { from == n };
        let mut all: Vec<(usize, usize)> = Vec::new();
        for c in self.d.result.cells.iter().filter(|c| c.net == ni) {
            if c.forward.is_some() && ours(c.from, c.to) {
                all.push((c.from, c.to));
            }
            if c.reverse.is_some() && ours(c.to, c.from) {
                all.push((c.to, c.from));
            }
        }
        all.sort_unstable();
        all.dedup();
        let mut seen: Vec<(usize, usize)> = f
            .directions
            .iter()
            .filter(|s| ours(s.from, s.to))
            .map(|s| (s.from, s.to))
            .collect();
        seen.sort_unstable();
        seen.dedup();
        if all.len() >= 2 && seen == all {
            Scope::Every
        } else {
            Scope::Pair
        }
    }

    /// A fault of the paths: the diagnosis's words, the directions it explains.
    pub(super) fn fault(&self, f: &MeshFinding, d: &Diagnosis) -> Words {
        let node = self.by_addr(f.net);
        let names = self.names(f.net, &node, false);
        let mut said = diagnosis::say(d, &names, self.every(f, d));
        if let (Location::Router { .. }, Some(n)) = (&d.at, f.node) {
            said.summary = format!(
                "{}; it stands in front of node {n}: every path to {n} crosses it",
                said.summary,
                n = self.node(n)
            );
        }
        let dirs = &f.directions;
        Words {
            summary: said.summary,
            evidence: format!(
                "{} {}: {} ({})",
                dirs.len(),
                if dirs.len() == 1 {
                    "direction"
                } else {
                    "directions"
                },
                self.list(dirs),
                stops(dirs)
            ),
            next: said.fix,
        }
    }

    /// The plain answer, the text's first line.
    pub fn answer(&self, a: &Answer) -> String {
        match a {
            Answer::Ready { nets } => {
                let mut by_mtu: Vec<(u32, Vec<String>)> = Vec::new();
                for n in nets {
                    let name = format!("net {}", self.net_label(n.net));
                    match by_mtu.iter_mut().find(|(m, _)| *m == n.mtu) {
                        Some((_, v)) => v.push(name),
                        None => by_mtu.push((n.mtu, vec![name])),
                    }
                }
                let parts: Vec<String> = by_mtu
                    .iter()
                    .map(|(m, v)| format!("on {} carries {m}", and(v)))
                    .collect();
                format!(
                    "Interconnect ready: every path {} both ways",
                    parts.join(", every path ")
                )
            }
            Answer::NotReady { finding, others } => {
                let Some(f) = self.d.result.findings.get(*finding) else {
                    return "NOT ready".into();
                };
                let more = match others {
                    0 => String::new(),
                    1 => " (and 1 more finding below)".into(),
                    k => format!(" (and {k} more findings below)"),
                };
                let (what, fix) = if let Finding::Fault { diagnosis: d } = &f.what {
                    let node = self.by_addr(f.net);
                    let names = self.names(f.net, &node, true);
                    (
                        diagnosis::short(d, &names),
                        diagnosis::say(d, &names, Scope::Pair).fix,
                    )
                } else {
                    let w = self.finding(f);
                    (w.summary, w.next)
                };
                format!("NOT ready: {what}: {fix}{more}")
            }
            Answer::Unknown { why } => match why {
                Unanswered::Interrupted => {
                    "NOT known: interrupted before every pair was measured; nothing found in what was".into()
                }
                Unanswered::DeadlinePassed => {
                    "NOT known: the run's deadline passed before every pair was measured; nothing found in what was".into()
                }
                Unanswered::NothingToTest => {
                    "NOT known: no network is shared by two nodes, so no path was tested".into()
                }
            },
        }
    }
}

/// "net A", "net A and net B", "net A, net B and net C".
fn and(v: &[String]) -> String {
    match v {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
