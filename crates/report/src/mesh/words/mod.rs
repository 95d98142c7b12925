//! The mesh's findings in words: one line, its evidence and the next step, from the
//! engine's typed findings. Peer-sent text (node labels from hostnames, interface
//! names, settings, agents' error messages) is escaped here, before any terminal or
//! page sees it. Here: the words every finding shares (nodes, networks, lists) and
//! the dispatch on the finding's kind; beside it, one file per family of findings:
//! `fault` (a fault of the paths, and the plain answer it leads), `node` (a node
//! unreachable, silent, set apart or without its interconnect NIC), `doubt`
//! (measurements refused as evidence) and `failed` (failed tests grouped by cause).

mod doubt;
mod failed;
mod fault;
mod node;

use std::borrow::Cow;

use mtuperf_engine::mesh::{Finding, MeshFinding, MeshTests};
use mtuperf_proto::msg::mesh::StopKind;
use mtuperf_proto::text::escape_control;

use node::{absent, setting_words, silent, unreachable};

use super::Document;

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

    /// The finding `f` in words.
    pub fn finding(&self, f: &MeshFinding) -> Words {
        let on = self.net(f.net);
        let n = f.node.map_or_else(|| "?".into(), |n| self.node(n));
        match &f.what {
            Finding::Fault { diagnosis } => self.fault(f, diagnosis),
            Finding::TestsFailed { count, examples } => self.failed(f.net, *count, examples),
            Finding::Unreachable { agent, error } => unreachable(&n, agent, error),
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
