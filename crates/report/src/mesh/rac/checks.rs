//! The cluvfy-style checks per network in words: each check's name, status and
//! reason (one line per check, as cluvfy prints them), and a failed block check as a
//! finding.

use std::fmt::Write as _;

use mtuperf_engine::mesh::{Check, CheckStatus, MeshTests, NetCheck, LOST_BLOCK_AFTER};

use super::{size, thousands, Document};
use crate::fmt::latency_ns;
use crate::mesh::words::{Say, Words};

/// "net A", "net eth1 (192.168.10.0, oifcfg)", "net eth1 HAIP".
fn check_name(c: &Check, d: &Document) -> String {
    match c {
        Check::Mtu { expect, .. } => format!("MTU {expect} both ways"),
        Check::Reachability { .. } => "reachability".into(),
        Check::BlockP99 { limit_ns, .. } => {
            let size = d
                .result
                .block
                .map_or_else(|| "8 KiB".into(), |b| size(b.block));
            match limit_ns {
                Some(l) => format!("{size} block p99 under {}", latency_ns(*l as f64)),
                None => format!("{size} block p99"),
            }
        }
        Check::LostBlocks { .. } => "lost blocks = 0".into(),
        Check::Reassembly { .. } => "reassembly failures = 0".into(),
        Check::Settings { .. } => "settings alike".into(),
    }
}

fn status(s: CheckStatus) -> &'static str {
    match s {
        CheckStatus::Passed => "PASSED",
        CheckStatus::Failed => "FAILED",
        CheckStatus::NotRun => "not run",
    }
}

impl Say<'_> {
    /// Why a check passed, failed or did not run, in a few words.
    pub fn check_reason(&self, c: &NetCheck) -> String {
        let d = self.document();
        match &c.check {
            Check::Mtu {
                expect,
                carried,
                measured,
            } => match (c.status, measured) {
                (CheckStatus::NotRun, 0) if !d.result.tests.contains(&MeshTests::Path) => {
                    "add --tests path".into()
                }
                (CheckStatus::NotRun, _) => "no direction measured".into(),
                _ => format!("{carried} of {measured} directions carry {expect}"),
            },
            Check::Reachability {
                reached,
                failed,
                planned,
            } => {
                let mut s = format!("{reached} of {planned} pairs reached");
                if *failed > 0 {
                    let _ = write!(s, ", {failed} failed or silent");
                }
                if c.status == CheckStatus::Failed && *failed == 0 {
                    s.push_str(", a node is missing from it (see findings)");
                }
                s
            }
            Check::BlockP99 {
                limit_ns,
                worst_ns,
                worst,
                over,
                measured,
            } => self.block_p99_reason(*limit_ns, *worst_ns, *worst, *over, *measured),
            Check::LostBlocks {
                lost,
                pairs,
                measured,
            } => self.lost_blocks_reason(c.status, *lost, *pairs, *measured),
            Check::Reassembly { fails, nodes, read } => {
                self.reassembly_reason(*fails, nodes, *read)
            }
            Check::Settings { findings } => settings_reason(c.status, findings),
        }
    }
}

impl Say<'_> {
    /// The block p99 check: the worst pair's p99 and where, and how many pairs are over.
    fn block_p99_reason(
        &self,
        limit_ns: Option<u64>,
        worst_ns: Option<u64>,
        worst: Option<(usize, usize)>,
        over: usize,
        measured: usize,
    ) -> String {
        if !self.document().result.tests.contains(&MeshTests::Rr) {
            return "add --tests rr".into();
        }
        if measured == 0 {
            return "no pair measured".into();
        }
        let at = worst.map_or_else(String::new, |(a, b)| {
            format!(" ({} asking {})", self.node(a), self.node(b))
        });
        let worst = worst_ns.map_or_else(
            || "a pair answered no block".into(),
            |w| format!("worst {}{at}", latency_ns(w as f64)),
        );
        match limit_ns {
            None => format!(
                "{worst}; not judged on a network outside private address space (--max-block-p99 sets a limit)"
            ),
            Some(_) if over == 0 => format!("{worst}, all {measured} pairs under"),
            Some(_) => format!("{over} of {measured} pairs over; {worst}"),
        }
    }

    /// The lost-blocks check: how many, on how many pairs.
    fn lost_blocks_reason(
        &self,
        status: CheckStatus,
        lost: u64,
        pairs: usize,
        measured: usize,
    ) -> String {
        if status == CheckStatus::NotRun {
            return if self.document().result.tests.contains(&MeshTests::Rr) {
                "no pair measured".into()
            } else {
                "add --tests rr".into()
            };
        }
        if lost == 0 {
            format!("none on {measured} pairs")
        } else {
            format!(
                "{} lost on {pairs} of {measured} pairs (unanswered within {} ms, or never)",
                thousands(lost),
                LOST_BLOCK_AFTER.as_millis()
            )
        }
    }

    /// The reassembly check: the failures and the nodes that counted them.
    fn reassembly_reason(&self, fails: u64, nodes: &[usize], read: usize) -> String {
        if read == 0 {
            return "no node's counters could be read".into();
        }
        if nodes.is_empty() {
            return format!("none on the {read} nodes read");
        }
        let who: Vec<String> = nodes.iter().map(|&n| self.node(n)).collect();
        format!(
            "{} on {} (whole-host counters, over the run)",
            thousands(fails),
            who.join(", ")
        )
    }
}

/// The settings check: which findings differ.
fn settings_reason(status: CheckStatus, findings: &[usize]) -> String {
    if status == CheckStatus::NotRun {
        return "add --tests doctor".into();
    }
    if findings.is_empty() {
        "every compared setting alike".into()
    } else {
        let list: Vec<String> = findings.iter().map(|i| format!("#{}", i + 1)).collect();
        format!(
            "{} settings differ (findings {})",
            findings.len(),
            list.join(", ")
        )
    }
}

/// The checks as (network, check, status, reason) rows.
pub(crate) fn check_rows(
    d: &Document,
    say: &Say<'_>,
) -> Vec<(String, String, &'static str, String)> {
    d.result
        .checks
        .iter()
        .map(|c| {
            (
                say.net_title(c.net),
                check_name(&c.check, d),
                status(c.status),
                say.check_reason(c),
            )
        })
        .collect()
}

/// The cluvfy-style summary: one line per check per network.
pub fn checks(o: &mut String, d: &Document, say: &Say<'_>) {
    let r = &d.result;
    if r.checks.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nchecks (per network, as cluvfy prints them):");
    let rows = check_rows(d, say);
    let w0 = rows.iter().map(|x| x.0.chars().count()).max().unwrap_or(0);
    let w1 = rows.iter().map(|x| x.1.chars().count()).max().unwrap_or(0);
    for (net, name, st, why) in rows {
        let _ = writeln!(o, "  {net:<w0$}  {name:<w1$}  {st:<7}  {why}");
    }
}

impl Say<'_> {
    /// A failed block check of network `net`.
    pub(crate) fn check_failed(&self, net: Option<usize>, c: &Check) -> Words {
        let on = self.net(net);
        let d = self.document();
        let size = d
            .result
            .block
            .map_or_else(|| "8 KiB".into(), |b| size(b.block));
        let reason = self.check_reason(&NetCheck {
            net: net.unwrap_or(0),
            status: CheckStatus::Failed,
            check: c.clone(),
        });
        match c {
            Check::LostBlocks { .. } => Words {
                summary: format!("{size} blocks lost on {on}: RAC counts each as a gc block lost"),
                evidence: reason,
                next: "the findings above name causes (a short path, reassembly failures, receive-buffer drops); else mtuperf rr between the pair's nodes, with --from to ask from the node that lost them".into(),
            },
            _ => Words {
                summary: format!("{size} block p99 over the limit on {on}"),
                evidence: reason,
                next: "mtuperf rr between the worst pair's nodes (--clients 1 --time 10s) and mtuperf doctor on both; a loaded host or CPU placement shows in its report; --max-block-p99 sets the limit".into(),
            },
        }
    }
}
