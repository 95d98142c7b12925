//! The mesh's findings in words: one line, its evidence and the next step, from the
//! engine's typed findings. Peer-sent text (node labels from hostnames, interface
//! names, settings, agents' error messages) is escaped here, before any terminal or
//! page sees it.

use std::borrow::Cow;
use std::collections::BTreeMap;

use std::net::IpAddr;

use mtuperf_engine::diagnosis::{Diagnosis, Fault, Location};
use mtuperf_engine::mesh::{
    Answer, Claim, Contradiction, Finding, Implausible, MeshFinding, MeshTests, NicAbsence,
    Offload, PairError, Seen, Setting, Silence, StartStep, TestFailureAt, Unanswered, PROBE_WAIT,
};
use mtuperf_proto::msg::mesh::StopKind;
use mtuperf_proto::msg::Refusal;
use mtuperf_proto::text::escape_control;

use super::Document;
use crate::diagnosis::{self, Names, Scope};

/// A finding in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Words {
    pub summary: String,
    pub evidence: String,
    pub next: String,
}

/// Most directions or examples an evidence line lists.
const SHOWN: usize = 6;

fn esc(s: &str) -> Cow<'_, str> {
    escape_control(s)
}

fn secs(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// How a direction's search stopped.
pub fn how(stop: StopKind) -> &'static str {
    match stop {
        StopKind::Top => "at the sender's NIC",
        StopKind::Icmp => "ICMP frag-needed",
        StopKind::Local => "refused by the sender",
        StopKind::Silent => "silent",
    }
}

/// A test's name as the `--tests` flag spells it.
pub fn test_label(t: MeshTests) -> &'static str {
    match t {
        MeshTests::Path => "path",
        MeshTests::Rr => "rr",
        MeshTests::Stream => "stream",
        MeshTests::Doctor => "doctor",
    }
}

/// `items` joined, at most [`SHOWN`] of them, then "and N more".
fn some(items: Vec<String>) -> String {
    let n = items.len();
    let mut shown: Vec<String> = items.into_iter().take(SHOWN).collect();
    if n > SHOWN {
        shown.push(format!("and {} more", n - SHOWN));
    }
    shown.join(", ")
}

/// Words about one mesh document.
pub struct Say<'a> {
    d: &'a Document,
}

impl<'a> Say<'a> {
    pub fn new(d: &'a Document) -> Say<'a> {
        Say { d }
    }

    /// The document spoken of.
    pub fn document(&self) -> &'a Document {
        self.d
    }

    /// "net A  198.19.1.0/24", for a table's first column.
    pub fn net_title(&self, ni: usize) -> String {
        self.d.result.networks.get(ni).map_or_else(
            || "?".into(),
            |n| format!("net {}  {}", esc(&n.name), n.cidr),
        )
    }

    /// Node `n`'s label, escaped.
    pub fn node(&self, n: usize) -> String {
        esc(self.d.node(n)).into_owned()
    }

    /// "net A (198.19.1.0/24)".
    pub fn net(&self, ni: Option<usize>) -> String {
        ni.and_then(|i| self.d.result.networks.get(i)).map_or_else(
            || "?".into(),
            |n| format!("net {} ({})", esc(&n.name), n.cidr),
        )
    }

    /// Network `ni`'s name ("A"), escaped.
    pub fn net_label(&self, ni: usize) -> String {
        self.d
            .result
            .networks
            .get(ni)
            .map_or_else(|| "?".into(), |n| esc(&n.name).into_owned())
    }

    fn net_name(&self, ni: usize) -> String {
        self.d
            .result
            .networks
            .get(ni)
            .map_or_else(|| "?".into(), |n| format!("net {}", esc(&n.name)))
    }

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

    /// The finding `f` in words.
    pub fn finding(&self, f: &MeshFinding) -> Words {
        let on = self.net(f.net);
        let n = f.node.map_or_else(|| "?".into(), |n| self.node(n));
        match &f.what {
            Finding::Fault { diagnosis } => self.fault(f, diagnosis),
            Finding::TestsFailed { count, examples } => self.failed(f.net, *count, examples),
            Finding::Unreachable {
                agent,
                error,
                ssh_step,
            } => unreachable(&n, agent, error, *ssh_step),
            Finding::NodeSilent {
                silence,
                at_ms,
                waited_ms,
                not_measured,
            } => silent(&n, *silence, *at_ms, *waited_ms, *not_measured),
            Finding::Disputed { contradictions } => self.disputed(f.node, &on, contradictions),
            Finding::Implausible { claims } => self.implausible(&n, &on, claims),
            Finding::Setting {
                setting,
                value,
                norm,
                holders,
                of,
            } => setting_words(&n, &on, setting, &esc(value), &esc(norm), *holders, *of),
            Finding::InterconnectAbsent { iface, subnet, why } => {
                absent(&n, iface, &subnet.to_string(), *why)
            }
            Finding::CheckFailed { check } => self.check_failed(f.net, check),
            Finding::Kernel {
                counter,
                delta,
                iface,
                of,
            } => self.kernel_words(
                f.node.unwrap_or(usize::MAX),
                f.net,
                *counter,
                *delta,
                iface.as_deref(),
                *of,
            ),
        }
    }
}

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
    fn fault(&self, f: &MeshFinding, d: &Diagnosis) -> Words {
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

fn unreachable(n: &str, agent: &str, error: &str, ssh_step: Option<StartStep>) -> Words {
    let (agent, error) = (esc(agent), esc(error));
    let Some(step) = ssh_step else {
        return Words {
            summary: format!("node {n}: its agent at {agent} could not be asked: {error}"),
            evidence: "discovery failed; no pair with this node was tested".into(),
            next: format!(
                "start a keyed agent on {n} (mtuperf serve --key-file ...) and check the orchestrator can reach {agent}"
            ),
        };
    };
    let ssh = agent.strip_prefix("ssh ").unwrap_or(&agent);
    let (name, next) = match step {
        StartStep::Connect => ("ssh", format!(
            "check that `ssh -o BatchMode=yes {ssh} true` works from this host without a prompt (sshd running, your key in its authorized_keys, its host key in your known_hosts), with the same --ssh-command"
        )),
        StartStep::Copy => ("copy", format!(
            "install this mtuperf version on {ssh} (on its PATH), or check that a private temporary directory there allows programs to run"
        )),
        StartStep::Start => ("agent", format!("run `mtuperf serve` on {ssh} by hand to see why the agent does not start")),
        StartStep::Plan => ("addresses", "choose the interconnect with --net (every node needs an address on a network shared with another node)".into()),
        StartStep::Interrupted => ("interrupted", "run again".into()),
    };
    Words {
        summary: format!("node {n}: {error}"),
        evidence: format!(
            "its agent could not be started over SSH (step: {name}); no pair with this node was tested"
        ),
        next,
    }
}

fn silent(n: &str, silence: Silence, at_ms: u64, waited_ms: u64, not_measured: usize) -> Words {
    let tests = if not_measured == 1 { "test" } else { "tests" };
    match silence {
        Silence::NoAnswer => Words {
            summary: format!(
                "node {n} went silent {} into the run: its agent stopped answering",
                secs(at_ms)
            ),
            evidence: format!(
                "no welcome to a new session within {} s, twice ({} waited); {not_measured} pair {tests} with it not measured",
                PROBE_WAIT.as_secs(),
                secs(waited_ms)
            ),
            next: format!(
                "check {n}'s agent (mtuperf serve: running, not stopped?) and its host, then run the mesh again"
            ),
        },
        Silence::NoResult => Words {
            summary: format!(
                "node {n}'s agent answered but returned no result for {} ({} into the run)",
                secs(waited_ms),
                secs(at_ms)
            ),
            evidence: format!(
                "its test ran past --pair-timeout; {not_measured} more pair {tests} asked of it not measured"
            ),
            next: format!(
                "check {n}'s agent log (mtuperf serve) and its host's load, then run the mesh again"
            ),
        },
    }
}

fn setting_words(
    n: &str,
    on: &str,
    s: &Setting,
    value: &str,
    norm: &str,
    holders: usize,
    of: usize,
) -> Words {
    let (what, next) = match s {
        Setting::NicMtu { iface } => (
            format!("the NIC MTU on {on}"),
            format!("on {n}: ip link set dev {} mtu {norm}", esc(iface)),
        ),
        Setting::Offload { iface, offload } => {
            let name = match offload {
                Offload::Tso => "tso",
                Offload::Gso => "gso",
                Offload::Gro => "gro",
                Offload::Lro => "lro",
            };
            (
                format!("{name} offload on {on}"),
                format!("on {n}: ethtool -K {} {name} {norm}", esc(iface)),
            )
        }
        Setting::RpFilter { iface } => (
            format!("rp_filter on {on}"),
            format!(
                "on {n}: sysctl -w net.ipv4.conf.{}.rp_filter={norm}",
                esc(iface)
            ),
        ),
        Setting::Sysctl { key } => (
            format!("sysctl {}", esc(key)),
            format!(
                "on {n}: sysctl -w {}=\"{norm}\" (and in /etc/sysctl.d)",
                esc(key)
            ),
        ),
    };
    Words {
        summary: format!("node {n}: {what} is {value}, the others {norm}"),
        evidence: format!("{holders} of {of} nodes have {norm}"),
        next,
    }
}

impl Say<'_> {
    /// "n3 reports n1→n3 576 (ICMP frag-needed), n1 reports 9000 (at the sender's NIC)".
    fn contradiction(&self, c: &Contradiction) -> String {
        let claim = |x: &Claim| format!("{} ({})", x.mtu, how(x.stop));
        let mut parts = c.claims.iter();
        let first = parts.next().map_or_else(String::new, |x| {
            format!(
                "{} reports {}→{} {}",
                self.node(x.by),
                self.node(c.from),
                self.node(c.to),
                claim(x)
            )
        });
        let rest: Vec<String> = parts
            .map(|x| format!("{} reports {}", self.node(x.by), claim(x)))
            .collect();
        std::iter::once(first)
            .chain(rest)
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn disputed(&self, node: Option<usize>, on: &str, cs: &[Contradiction]) -> Words {
        let evidence = some(cs.iter().map(|c| self.contradiction(c)).collect());
        if let Some(v) = node {
            let v = self.node(v);
            return Words {
                summary: format!(
                    "results about node {v} on {on} disagree: its measurements contradict every peer's, so none of them is used; no verdict on its paths rests on them"
                ),
                evidence,
                next: format!(
                    "check node {v}'s agent and host (the same mtuperf, unmodified?), then mtuperf path from {v} toward a peer and from that peer toward {v}"
                ),
            };
        }
        let mut pairs: Vec<(usize, usize)> = cs
            .iter()
            .map(|c| (c.from.min(c.to), c.from.max(c.to)))
            .collect();
        pairs.dedup();
        let names = some(
            pairs
                .iter()
                .map(|&(a, b)| format!("{} ↔ {}", self.node(a), self.node(b)))
                .collect(),
        );
        Words {
            summary: format!(
                "results about {names} on {on} disagree: both sides are left out of the diagnosis"
            ),
            evidence,
            next: "mtuperf path from each end toward the other, by hand, to see which is right"
                .into(),
        }
    }

    fn implausible(&self, n: &str, on: &str, claims: &[Implausible]) -> Words {
        let k = claims.len();
        Words {
            summary: format!(
                "node {n} reported {k} {} on {on} that no path can carry: refused as evidence",
                if k == 1 {
                    "measurement"
                } else {
                    "measurements"
                }
            ),
            evidence: some(
                claims
                    .iter()
                    .map(|c| {
                        format!(
                            "{}→{} {} (largest packet {}), above {}",
                            self.node(c.from),
                            self.node(c.to),
                            c.mtu,
                            c.largest_ok,
                            c.limit
                        )
                    })
                    .collect(),
            ) + " (the smaller NIC MTU of the two ends, as they reported it)",
            next: format!(
                "check node {n}'s agent (the same mtuperf, unmodified?) and its NIC MTU on {on}"
            ),
        }
    }
}

/// Why a failed test failed, in a few words (the grouped cause).
fn cause(e: &PairError) -> &'static str {
    match e {
        PairError::NoResult { .. } => {
            "the asked agent returned no result before the pair's deadline"
        }
        PairError::Unreachable { .. } => "the asked agent could not be reached",
        PairError::Refused {
            refusal: Refusal::PeerNotAuthenticated { .. },
            ..
        } => "the peer's agent refused the sender (its --allow list, or another key)",
        PairError::Refused {
            refusal: Refusal::Busy { .. },
            ..
        } => "the agents stayed busy (every session in use) until the pair's deadline",
        PairError::Refused {
            refusal: Refusal::Limit { .. },
            ..
        } => "beyond an agent's limit",
        PairError::Refused {
            refusal: Refusal::KeyRequired { .. },
            ..
        } => "the asked agent holds no key",
        PairError::Refused { .. } => "refused by the asked agent",
        PairError::Agent { .. } => "the asked agent reported an error",
        PairError::Protocol { .. } => "an answer broke the protocol",
        PairError::Cut { .. } => "the load test ended early",
    }
}

/// What to do about failures of this cause.
fn next_step(e: &PairError, example: &str) -> String {
    match e {
        PairError::NoResult { .. } => "check the asked node's agent (mtuperf serve) and its host's load; --pair-timeout is each pair's deadline".into(),
        PairError::Unreachable { .. } => "start a keyed agent on the asked node (mtuperf serve --key-file ...) and check this host can reach it".into(),
        PairError::Refused {
            refusal: Refusal::PeerNotAuthenticated { .. },
            ..
        } => "give every agent the same --key-file and an --allow list that includes these networks' addresses, or leave these networks out with --net".into(),
        PairError::Refused {
            refusal: Refusal::Busy { .. },
            ..
        } => "raise the agents' --max-sessions, or lower --per-node".into(),
        PairError::Refused {
            refusal: Refusal::Limit { .. },
            ..
        } => "raise the agent limit named above, or lower --time".into(),
        PairError::Refused {
            refusal: Refusal::KeyRequired { .. },
            ..
        } => "start every agent with --key-file (the same key)".into(),
        PairError::Cut { .. } => format!("run mtuperf rr or stream {example} by hand"),
        PairError::Refused { .. } | PairError::Agent { .. } | PairError::Protocol { .. } => {
            format!("mtuperf path {example}, to see the error in full")
        }
    }
}

impl Say<'_> {
    /// One failed test: "n1 → n2 on net C: n1's agent returned no result in 60.0 s".
    fn example(&self, x: &TestFailureAt) -> String {
        let who = |n: usize| self.node(n);
        let what = match &x.failure.error {
            PairError::NoResult { node, waited_ms } => format!(
                "{}'s agent returned no result in {}",
                who(*node),
                secs(*waited_ms)
            ),
            PairError::Unreachable { node, detail } | PairError::Protocol { node, detail } => {
                format!("{}: {}", who(*node), esc(detail))
            }
            PairError::Refused { node, refusal } => {
                format!("{}'s agent: {}", who(*node), esc(&refusal.to_string()))
            }
            PairError::Agent { node, message } => {
                format!("{}'s agent: {}", who(*node), esc(message))
            }
            PairError::Cut { reason } => format!("ended early: {}", esc(reason)),
        };
        format!(
            "{} {} → {} on {}: {what}",
            test_label(x.failure.test),
            who(x.from),
            who(x.to),
            self.net_name(x.net)
        )
    }

    fn failed(&self, net: Option<usize>, count: usize, examples: &[TestFailureAt]) -> Words {
        let Some(first) = examples.first() else {
            return Words {
                summary: format!("{count} tests failed"),
                evidence: String::new(),
                next: String::new(),
            };
        };
        let e = &first.failure.error;
        let tests = if count == 1 { "test" } else { "tests" };
        let on = net.map_or_else(String::new, |_| format!(" on {}", self.net(net)));
        let mut evidence: Vec<String> = examples.iter().map(|x| self.example(x)).collect();
        if count > examples.len() {
            evidence.push(format!("and {} more", count - examples.len()));
        }
        let example = format!(
            "from {} toward {}'s address on {}",
            self.node(first.from),
            self.node(first.to),
            self.net_name(first.net)
        );
        let eg = if count > 1 { "e.g. " } else { "" };
        Words {
            summary: format!("{count} {tests} failed{on}: {}", cause(e)),
            evidence: format!("{eg}{}", evidence.join("; ")),
            next: next_step(e, &example),
        }
    }
}

/// `--oifcfg`: node `n` has no up `iface` in the interconnect subnet.
pub(crate) fn absent(n: &str, iface: &str, subnet: &str, why: NicAbsence) -> Words {
    let iface = escape_control(iface);
    let (state, next) = match why {
        NicAbsence::Down => (
            format!("its NIC {iface} is down"),
            format!("ip link set dev {iface} up on {n} (and check its cable and switch port), or remove the subnet with oifcfg delif if it is retired"),
        ),
        NicAbsence::NoAddress => (
            format!("its NIC {iface} has no address in {subnet}"),
            format!("give {n}'s {iface} its address in {subnet}, as on the other nodes"),
        ),
        NicAbsence::Missing => (
            format!("it has no interface {iface}"),
            format!("oifcfg's global entries need the same interface name on every node: rename {n}'s interconnect NIC to {iface}, or set a per-node entry (oifcfg setif -node)"),
        ),
    };
    Words {
        summary: format!(
            "node {n}: {state}: the cluster_interconnect subnet {subnet} is unusable cluster-wide (Oracle drops a subnet missing on any node)"
        ),
        evidence: format!(
            "oifcfg getif lists {iface} {subnet} as cluster_interconnect; {n}'s discovery has no up {iface} with an address in it"
        ),
        next,
    }
}
