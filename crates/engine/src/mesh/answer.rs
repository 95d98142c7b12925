//! The mesh's plain answer: is the interconnect ready, and if not, the first thing
//! to fix. Typed here; the report words it as the first line of the text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::finding::{Finding, MeshFinding};
use super::model::MeshResult;

/// A network and the MTU its every path carried both ways.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetMtu {
    pub net: usize,
    pub mtu: u32,
}

/// Why there is no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unanswered {
    /// Stopped (Ctrl-C) before every pair was measured.
    Interrupted,
    /// The run's deadline passed before every pair was measured.
    DeadlinePassed,
    /// No network shared by two nodes was found, or no pair was planned.
    NothingToTest,
}

/// The answer a DBA can paste.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Answer {
    /// Every path of every network carries its expected MTU both ways.
    Ready { nets: Vec<NetMtu> },
    /// Not ready: `finding` (an index into the findings) is the first thing to fix;
    /// `others` more findings follow it.
    NotReady { finding: usize, others: usize },
    /// Nothing found in what was measured, but not everything was.
    Unknown { why: Unanswered },
}

/// How urgent a finding is for the answer: the paths' faults and interconnect NICs
/// missing first (they are what to fix), then nodes that could not be asked or went
/// silent and kernel counters that grew (lost blocks' causes), failed tests, doubted
/// evidence, settings.
fn urgency(f: &MeshFinding) -> u8 {
    match f.what {
        Finding::Fault { .. } | Finding::InterconnectAbsent { .. } => 0,
        Finding::Unreachable { .. } | Finding::NodeSilent { .. } | Finding::Kernel { .. } => 1,
        Finding::TestsFailed { .. } | Finding::CheckFailed { .. } => 2,
        Finding::Disputed { .. } | Finding::Implausible { .. } => 3,
        Finding::Setting { .. } => 4,
    }
}

/// The answer of a finished (or stopped) mesh run.
pub fn answer(r: &MeshResult) -> Answer {
    let first = r
        .findings
        .iter()
        .enumerate()
        .min_by_key(|(i, f)| (urgency(f), *i))
        .map(|(i, _)| i);
    if let Some(finding) = first {
        return Answer::NotReady {
            finding,
            others: r.findings.len() - 1,
        };
    }
    if r.interrupted {
        return Answer::Unknown {
            why: Unanswered::Interrupted,
        };
    }
    if r.deadline_passed {
        return Answer::Unknown {
            why: Unanswered::DeadlinePassed,
        };
    }
    if r.pairs.is_empty() {
        return Answer::Unknown {
            why: Unanswered::NothingToTest,
        };
    }
    Answer::Ready {
        nets: r
            .networks
            .iter()
            .enumerate()
            .map(|(net, n)| NetMtu { net, mtu: n.expect })
            .collect(),
    }
}
