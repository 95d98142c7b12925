//! The plain answer a comparison starts with, one line a DBA can paste: "Jumbo
//! frames: worth it on this path — 8K stream +77%, 8K block latency −33%, CPU per MiB
//! −44%; the path carries 9000 both ways", or "NOT ready: …" naming what to fix. Typed
//! ([`Answer`], kept in the document); [`line`] words it.

use mtuperf_engine::compare::{PathCheck, Plan, TestKind, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{block_label, Diff, Figure};

/// The interface MTU that means jumbo frames.
const JUMBO: u32 = 9000;

/// One headline figure of the compared path against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Change {
    pub test: TestKind,
    pub block: u32,
    pub clients: u32,
    pub figure: Figure,
    /// mean_path / mean_baseline − 1.
    pub rel: f64,
    /// Beyond its 95% interval (false without one).
    pub significant: bool,
    /// The change is for the better (more goodput, less latency or CPU).
    pub better: bool,
}

/// Whether the compared path is worth it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Worth {
    /// At least one headline figure better beyond its interval, none worse.
    WorthIt,
    /// Better and worse figures, each beyond its interval.
    Mixed,
    /// No headline figure better beyond its interval.
    NotWorthIt,
    /// Fewer than 3 repetitions a path: no interval; the signs only.
    Unclear,
}

/// The comparison's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    /// A path failed its check: fix it before its figures mean anything.
    NotReady {
        path: String,
        target: String,
        /// The check's finding, in its words.
        reason: String,
        /// Measured anyway (`--force`).
        forced: bool,
    },
    /// `path` against `baseline`.
    Compared {
        path: String,
        baseline: String,
        /// Both ends of `path` at `mtu` ≥ 9000 and the baseline's below it: the
        /// question is jumbo frames.
        jumbo: bool,
        /// The MTU `path` carries both ways (its two-direction path check passed).
        carries: Option<u32>,
        worth: Worth,
        changes: Vec<Change>,
    },
}

/// The MTU a checked path carries both ways: its two-direction check passed and
/// both interfaces agree. At most the largest IP packet (loopback's 65536 carries
/// 65535, as its check says).
fn carries(c: &PathCheck) -> Option<u32> {
    match (c.verdict, c.client_mtu, c.agent_mtu) {
        (Verdict::Ok, Some(a), Some(b)) if a == b => Some(a.min(65_535)),
        _ => None,
    }
}

/// The headline figures: stream goodput and CPU per MiB, rr block latency (p50).
fn headline(d: &Diff) -> bool {
    matches!(
        (d.test, d.figure),
        (TestKind::Stream, Figure::Goodput | Figure::CpuPerMib) | (TestKind::Rr, Figure::P50)
    )
}

fn worth(changes: &[Change]) -> Worth {
    let better = changes.iter().any(|c| c.significant && c.better);
    let worse = changes.iter().any(|c| c.significant && !c.better);
    match (better, worse) {
        (true, false) => Worth::WorthIt,
        (true, true) => Worth::Mixed,
        _ => Worth::NotWorthIt,
    }
}

/// The answer for a comparison's checks and differences (None with fewer than two
/// paths or nothing compared).
pub fn answer(plan: &Plan, checks: &[PathCheck], diffs: &[Diff]) -> Option<Answer> {
    if let Some(c) = checks.iter().find(|c| c.verdict == Verdict::Broken) {
        let measured = diffs
            .iter()
            .any(|d| d.path == c.name || d.baseline == c.name);
        return Some(Answer::NotReady {
            path: c.name.clone(),
            target: c.target.clone(),
            reason: super::check_reason(c),
            forced: measured,
        });
    }
    let base = plan.paths.first()?;
    let path = plan.paths.get(1)?;
    let intervals = diffs.iter().any(|d| d.path == path.name && d.low.is_some());
    let changes: Vec<Change> = diffs
        .iter()
        .filter(|d| d.path == path.name && headline(d))
        .map(|d| Change {
            test: d.test,
            block: d.block,
            clients: d.clients,
            figure: d.figure,
            rel: d.rel,
            significant: d.significant,
            better: (d.rel > 0.0) == d.figure.higher_is_better(),
        })
        .collect();
    if changes.is_empty() {
        return None;
    }
    let check = |name: &str| checks.iter().find(|c| c.name == name);
    let (path_mtu, base_mtu) = (
        check(&path.name).and_then(carries),
        check(&base.name).and_then(|c| c.client_mtu),
    );
    let jumbo = path_mtu.is_some_and(|m| m >= JUMBO) && base_mtu.is_some_and(|m| m < JUMBO);
    Some(Answer::Compared {
        path: path.name.clone(),
        baseline: base.name.clone(),
        jumbo,
        carries: path_mtu,
        worth: if intervals {
            worth(&changes)
        } else {
            Worth::Unclear
        },
        changes,
    })
}

fn pct(x: f64) -> String {
    let v = (x * 100.0).round() + 0.0;
    if v < 0.0 {
        format!("\u{2212}{}%", -v)
    } else {
        format!("+{v}%")
    }
}

/// "8K stream +77%", "8K block latency −33%", "CPU per MiB −44%".
fn change(c: &Change) -> String {
    let x = if c.clients > 1 {
        format!(" x{}", c.clients)
    } else {
        String::new()
    };
    let what = match c.figure {
        Figure::Goodput => format!("{} stream{x}", block_label(c.block)),
        Figure::P50 => format!("{} block latency{x}", block_label(c.block)),
        f => f.label().to_string(),
    };
    format!("{what} {}", pct(c.rel))
}

fn list(cs: &[&Change]) -> String {
    cs.iter().map(|c| change(c)).collect::<Vec<_>>().join(", ")
}

/// The answer in one line.
pub fn line(a: &Answer) -> String {
    match a {
        Answer::NotReady {
            path,
            target,
            reason,
            forced,
        } => format!(
            "NOT ready: path {path} ({target}) fails its check: {}; fix it before comparing{}",
            mtuperf_proto::text::escape_control(reason),
            if *forced {
                " (measured anyway with --force: its figures below are flagged)"
            } else {
                ""
            }
        ),
        Answer::Compared {
            path,
            baseline,
            jumbo,
            carries,
            worth,
            changes,
        } => {
            let subject = if *jumbo {
                "Jumbo frames".to_string()
            } else {
                format!("{path} over {baseline}")
            };
            let all: Vec<&Change> = changes.iter().collect();
            let better: Vec<&Change> = changes
                .iter()
                .filter(|c| c.significant && c.better)
                .collect();
            let worse: Vec<&Change> = changes
                .iter()
                .filter(|c| c.significant && !c.better)
                .collect();
            let noise: Vec<&Change> = changes.iter().filter(|c| !c.significant).collect();
            let noise = if noise.is_empty() {
                String::new()
            } else {
                format!(" (within noise: {})", list(&noise))
            };
            let what = match worth {
                Worth::WorthIt => format!("worth it on this path — {}{noise}", list(&better)),
                Worth::Mixed => format!(
                    "mixed on this path — better: {}; worse: {}{noise}",
                    list(&better),
                    list(&worse)
                ),
                Worth::NotWorthIt => format!("no gain on this path — nothing beyond its 95% interval ({})", list(&all)),
                Worth::Unclear => format!("unclear on this path — {} (fewer than 3 repetitions a path: no interval; run --repeat 3 or more)", list(&all)),
            };
            let carried =
                carries.map_or_else(String::new, |m| format!("; the path carries {m} both ways"));
            format!("{subject}: {what}{carried}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(test: TestKind, figure: Figure, rel: f64, significant: bool) -> Diff {
        Diff {
            path: "jumbo".into(),
            baseline: "std".into(),
            test,
            block: 8192,
            clients: 1,
            figure,
            rel,
            low: Some(rel - 0.05),
            high: Some(rel + 0.05),
            significant,
            method: "log-ratio-welch".into(),
            no_interval: None,
        }
    }

    fn check(name: &str, mtu: u32, ok: bool) -> PathCheck {
        PathCheck {
            name: name.into(),
            target: format!("198.18.{}.2", if mtu == 9000 { 2 } else { 1 }),
            verdict: if ok { Verdict::Ok } else { Verdict::Broken },
            failed: None,
            client_iface: None,
            client_mtu: Some(mtu),
            agent_iface: None,
            agent_mtu: Some(mtu),
            carries: Some(if ok { mtu } else { 1500 }),
            faults: if ok {
                Vec::new()
            } else {
                use mtuperf_engine::diagnosis::{Diagnosis, Fault, Location};
                let (a, b) = ([198, 18, 2, 1].into(), [198, 18, 2, 2].into());
                vec![Diagnosis {
                    fault: Fault::SwitchPort { nic_mtu: mtu },
                    at: Location::segment(a, b),
                    mtu: 1500,
                    expect: mtu,
                }]
            },
        }
    }

    fn plan() -> Plan {
        let path = |name: &str, target: &str| mtuperf_engine::compare::PathSpec {
            name: name.into(),
            target: target.into(),
            bind: None,
        };
        Plan {
            version: 1,
            paths: vec![path("std", "198.18.1.2"), path("jumbo", "198.18.2.2")],
            tests: vec![TestKind::Stream, TestKind::Rr],
            blocks: vec![8192],
            clients: vec![1],
            time_ms: 2000,
            repeat: mtuperf_engine::compare::Repeat::Fixed { n: 3 },
            force: false,
            sysctls: std::collections::BTreeMap::new(),
            placement: mtuperf_engine::placement::PlacementPolicy::default(),
        }
    }

    /// A check that could not judge its path says where it stopped and why, the
    /// refusal in report's words (kept typed in the document, never as a sentence).
    #[test]
    fn a_check_that_stopped_says_where_and_words_its_refusal() {
        use mtuperf_engine::compare::{CheckFailed, CheckStep};
        use mtuperf_proto::failed::Failed;
        use mtuperf_proto::msg::Refusal;
        let mut c = check("jumbo", 9000, false);
        c.faults.clear();
        c.carries = None;
        c.failed = Some(CheckFailed {
            step: CheckStep::Reach,
            failed: Failed::Refused {
                refusal: Refusal::AuthFailed,
            },
        });
        let reach = crate::compare::check_reason(&c);
        assert!(
            reach.starts_with("cannot reach the agent at 198.18.2.2: "),
            "{reach}"
        );
        assert!(
            reach.ends_with(&crate::refusal::refusal(&Refusal::AuthFailed)),
            "{reach}"
        );
        c.failed = Some(CheckFailed {
            step: CheckStep::Path,
            failed: Failed::error("the agent closed the connection"),
        });
        assert_eq!(
            crate::compare::check_reason(&c),
            "the path check failed: the agent closed the connection"
        );
        assert_eq!(carries(&c), None);
    }

    #[test]
    fn each_answer_in_one_line() {
        let checks = [check("std", 1500, true), check("jumbo", 9000, true)];
        let worth = [
            diff(TestKind::Stream, Figure::Goodput, 0.77, true),
            diff(TestKind::Stream, Figure::CpuPerMib, -0.44, true),
            diff(TestKind::Stream, Figure::FramesPerBlock, -0.8, true),
            diff(TestKind::Rr, Figure::P50, -0.33, true),
            diff(TestKind::Rr, Figure::P99, 0.05, false),
        ];
        let a = answer(&plan(), &checks, &worth).unwrap();
        assert_eq!(
            line(&a),
            "Jumbo frames: worth it on this path — 8K stream +77%, CPU per MiB \u{2212}44%, 8K block latency \u{2212}33%; the path carries 9000 both ways"
        );
        let flat = [
            diff(TestKind::Stream, Figure::Goodput, 0.03, false),
            diff(TestKind::Rr, Figure::P50, -0.01, false),
        ];
        assert!(line(&answer(&plan(), &checks, &flat).unwrap())
            .starts_with("Jumbo frames: no gain on this path — nothing beyond its 95% interval (8K stream +3%, 8K block latency \u{2212}1%)"));
        let mixed = [
            diff(TestKind::Stream, Figure::Goodput, 0.4, true),
            diff(TestKind::Rr, Figure::P50, 0.12, true),
        ];
        assert!(line(&answer(&plan(), &checks, &mixed).unwrap())
            .starts_with("Jumbo frames: mixed on this path — better: 8K stream +40%; worse: 8K block latency +12%"));
        let broken = [check("std", 1500, true), check("jumbo", 9000, false)];
        assert_eq!(
            line(&answer(&plan(), &broken, &[]).unwrap()),
            "NOT ready: path jumbo (198.18.2.2) fails its check: both directions between 198.18.2.1 and 198.18.2.2 stop above 1500, silently, while both NICs say 9000: an L2 device between them (a switch port, a bridge, a VLAN) passes at most 1500; fix: set the switch ports (and any bridge or VLAN) between 198.18.2.1 and 198.18.2.2 to MTU 9000 or more; mtuperf mesh over more nodes names the port (mtuperf path 198.18.2.2); fix it before comparing"
        );
        // Two runs a path: the signs, said to be without an interval.
        let two: Vec<Diff> = worth
            .iter()
            .map(|d| Diff {
                low: None,
                high: None,
                significant: false,
                ..d.clone()
            })
            .collect();
        assert!(line(&answer(&plan(), &checks, &two).unwrap()).contains("unclear on this path"));
    }
}
