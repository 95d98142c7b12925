//! A summary a DBA recognises: per network, one check per line, PASSED or FAILED
//! with its numbers, as cluvfy's node connectivity checks print them. Computed from
//! the pairs, the cells, the kernel deltas and the findings; the report words them.

use std::net::IpAddr;
use std::time::Duration;

use ipnet::IpNet;

pub use super::doc::{Check, CheckStatus, NetCheck};
use super::finding::{Finding, FindingKind, MeshFinding};
use super::kernel::NodeKernel;
use super::model::{Cell, MeshNetwork, MeshTests, NotMeasured, PairResult};

/// The block p99 limit on a private network when `--max-block-p99` is not given.
pub const DEFAULT_MAX_BLOCK_P99: Duration = Duration::from_millis(1);

/// Whether `net` is in private address space (RFC 1918, link-local, the benchmark
/// range 198.18.0.0/15, unique-local IPv6): where the default block p99 limit applies.
pub fn private(net: &IpNet) -> bool {
    match net.network() {
        IpAddr::V4(v4) => {
            v4.is_private()
                || v4.is_link_local()
                || (v4.octets()[0] == 198 && v4.octets()[1] & 0xfe == 18)
        }
        IpAddr::V6(v6) => {
            (v6.segments()[0] & 0xfe00) == 0xfc00 || (v6.segments()[0] & 0xffc0) == 0xfe80
        }
    }
}

/// What the checks read.
pub struct Inputs<'a> {
    pub tests: &'a [MeshTests],
    pub networks: &'a [MeshNetwork],
    pub pairs: &'a [PairResult],
    pub cells: &'a [Cell],
    pub findings: &'a [MeshFinding],
    pub kernel: &'a [NodeKernel],
    /// `--max-block-p99`, when given.
    pub max_block_p99: Option<Duration>,
}

fn status(pass: bool) -> CheckStatus {
    if pass {
        CheckStatus::Passed
    } else {
        CheckStatus::Failed
    }
}

/// Every network's checks, in the order a DBA reads them.
pub fn checks(i: &Inputs<'_>) -> Vec<NetCheck> {
    let mut out = Vec::new();
    for (ni, net) in i.networks.iter().enumerate() {
        let pairs: Vec<&PairResult> = i.pairs.iter().filter(|p| p.net == ni).collect();
        let mut push = |status, check| {
            out.push(NetCheck {
                net: ni,
                status,
                check,
            });
        };
        let (s, c) = mtu(i, ni, net);
        push(s, c);
        let (s, c) = reach(i, ni, net, &pairs);
        push(s, c);
        let (s, c) = block_p99(i, net, &pairs);
        push(s, c);
        let (s, c) = lost(i, &pairs);
        push(s, c);
        let (s, c) = reassembly(i, net);
        push(s, c);
        let (s, c) = settings(i, ni, net);
        push(s, c);
    }
    out
}

fn mtu(i: &Inputs<'_>, ni: usize, net: &MeshNetwork) -> (CheckStatus, Check) {
    let dirs: Vec<bool> = i
        .cells
        .iter()
        .filter(|c| c.net == ni)
        .flat_map(|c| [c.forward.as_ref(), c.reverse.as_ref()])
        .flatten()
        .filter(|d| d.doubt.is_none())
        .map(|d| d.ok)
        .collect();
    let carried = dirs.iter().filter(|&&x| x).count();
    let check = Check::Mtu {
        expect: net.expect,
        carried,
        measured: dirs.len(),
    };
    if !i.tests.contains(&MeshTests::Path) || dirs.is_empty() {
        return (CheckStatus::NotRun, check);
    }
    (status(carried == dirs.len()), check)
}

fn reach(
    i: &Inputs<'_>,
    ni: usize,
    net: &MeshNetwork,
    pairs: &[&PairResult],
) -> (CheckStatus, Check) {
    let cut = |p: &PairResult| {
        p.not_measured
            .iter()
            .any(|s| matches!(s.why, NotMeasured::Interrupted | NotMeasured::Deadline))
    };
    let silent = |p: &PairResult| {
        p.not_measured
            .iter()
            .any(|s| matches!(s.why, NotMeasured::NodeSilent { .. }))
    };
    let failed = pairs
        .iter()
        .filter(|p| !p.failed.is_empty() || silent(p))
        .count();
    let reached = pairs
        .iter()
        .filter(|p| p.failed.is_empty() && !silent(p) && !cut(p))
        .count();
    // A member that could not be asked at all is no pair of the plan: it fails here.
    let absent = i.findings.iter().any(|f| {
        matches!(
            f.what,
            Finding::Unreachable { .. } | Finding::InterconnectAbsent { .. }
        ) && f
            .node
            .is_some_and(|n| !net.members.iter().any(|m| m.node == n))
    });
    let _ = ni;
    let check = Check::Reachability {
        reached,
        failed,
        planned: pairs.len(),
    };
    if failed == 0 && !absent && reached < pairs.len() {
        return (CheckStatus::NotRun, check);
    }
    (
        status(failed == 0 && !absent && reached == pairs.len()),
        check,
    )
}

/// The pairs whose block test measured (a result, not cut short).
fn measured<'a>(pairs: &[&'a PairResult]) -> Vec<&'a PairResult> {
    pairs
        .iter()
        .copied()
        .filter(|p| p.rr.is_some() && p.failure(MeshTests::Rr).is_none())
        .collect()
}

fn block_p99(i: &Inputs<'_>, net: &MeshNetwork, pairs: &[&PairResult]) -> (CheckStatus, Check) {
    let limit = i
        .max_block_p99
        .or_else(|| private(&net.cidr).then_some(DEFAULT_MAX_BLOCK_P99))
        .map(|d| d.as_nanos() as u64);
    let got = measured(pairs);
    // No block answered sorts above every latency.
    let p99 = |p: &PairResult| p.rr.as_ref().and_then(|r| r.p99_ns).unwrap_or(u64::MAX);
    let worst = got.iter().max_by_key(|p| p99(p));
    let over = limit.map_or(0, |l| got.iter().filter(|p| p99(p) > l).count());
    let check = Check::BlockP99 {
        limit_ns: limit,
        worst_ns: worst.and_then(|p| p.rr.as_ref()?.p99_ns),
        worst: worst.map(|p| (p.from, p.to)),
        over,
        measured: got.len(),
    };
    if limit.is_none() || got.is_empty() || !i.tests.contains(&MeshTests::Rr) {
        return (CheckStatus::NotRun, check);
    }
    (status(over == 0), check)
}

fn lost(i: &Inputs<'_>, pairs: &[&PairResult]) -> (CheckStatus, Check) {
    let got = measured(pairs);
    let lost_of = |p: &PairResult| p.rr.as_ref().map_or(0, |r| r.counts.lost);
    let lost: u64 = got.iter().map(|p| lost_of(p)).sum();
    let check = Check::LostBlocks {
        lost,
        pairs: got.iter().filter(|p| lost_of(p) > 0).count(),
        measured: got.len(),
    };
    if got.is_empty() || !i.tests.contains(&MeshTests::Rr) {
        return (CheckStatus::NotRun, check);
    }
    (status(lost == 0), check)
}

fn reassembly(i: &Inputs<'_>, net: &MeshNetwork) -> (CheckStatus, Check) {
    let read: Vec<&NodeKernel> = i
        .kernel
        .iter()
        .filter(|k| k.snmp.is_some() && net.members.iter().any(|m| m.node == k.node))
        .collect();
    let fails = |k: &NodeKernel| k.snmp.map_or(0, |s| s.ip_reasm_fails);
    let nodes: Vec<usize> = read
        .iter()
        .filter(|k| fails(k) > 0)
        .map(|k| k.node)
        .collect();
    let check = Check::Reassembly {
        fails: read.iter().map(|k| fails(k)).sum(),
        nodes,
        read: read.len(),
    };
    if read.is_empty() {
        return (CheckStatus::NotRun, check);
    }
    let ok = matches!(&check, Check::Reassembly { fails: 0, .. });
    (status(ok), check)
}

fn settings(i: &Inputs<'_>, ni: usize, net: &MeshNetwork) -> (CheckStatus, Check) {
    let member = |n: Option<usize>| n.is_some_and(|n| net.members.iter().any(|m| m.node == n));
    let findings: Vec<usize> = i
        .findings
        .iter()
        .enumerate()
        .filter(|(_, f)| {
            f.kind() == FindingKind::Setting
                && (f.net == Some(ni) || (f.net.is_none() && member(f.node)))
        })
        .map(|(k, _)| k)
        .collect();
    let ok = findings.is_empty();
    let check = Check::Settings { findings };
    if !i.tests.contains(&MeshTests::Doctor) {
        return (CheckStatus::NotRun, check);
    }
    (status(ok), check)
}

/// A finding for each failed block check (p99 over its limit, blocks lost): the
/// other checks have findings of their own (faults, failed tests, kernel counters,
/// settings).
pub fn findings(checks: &[NetCheck]) -> Vec<MeshFinding> {
    checks
        .iter()
        .filter(|c| c.status == CheckStatus::Failed)
        .filter(|c| matches!(c.check, Check::BlockP99 { .. } | Check::LostBlocks { .. }))
        .map(|c| {
            MeshFinding::new(
                Some(c.net),
                None,
                Finding::CheckFailed {
                    check: c.check.clone(),
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_networks_get_the_default_limit() {
        for (net, want) in [
            ("10.1.0.0/24", true),
            ("192.168.10.0/24", true),
            ("172.20.0.0/16", true),
            ("169.254.0.0/17", true),
            ("198.19.1.0/24", true),
            ("203.0.113.0/24", false),
            ("fd00:1::/64", true),
            ("2001:db8::/64", false),
        ] {
            assert_eq!(private(&net.parse().unwrap()), want, "{net}");
        }
    }
}
