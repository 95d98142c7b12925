//! sysctl rules: UDP socket buffers (RAC minimums), TCP buffer maxima against the
//! bandwidth-delay product, backlog, PMTU probing, IP reassembly, metrics caching.
//!
//! Namespaces (checked on Linux 6.18 by writing each in a child namespace):
//! net.ipv4.* here (tcp_rmem, tcp_wmem, tcp_mtu_probing, tcp_no_metrics_save,
//! ipfrag_*, conf.*.rp_filter) are per network namespace; net.core.{r,w}mem_{default,max}
//! are host-wide (read-only inside a child namespace) and net.core.netdev_max_backlog
//! is not visible at all outside the initial namespace (SKIP there).

use super::finding::{finding, skip};
use super::{Check, Finding, Fix, HostFacts, MinimumOf, Options, SkipReason, Status, TcpBuffer};

pub fn check(facts: &HostFacts, opts: &Options) -> Vec<Finding> {
    // The UDP buffer minimums are the GI kernel parameter table's, the reassembly
    // thresholds MOS 2008933.1's: below them is FAIL under rac. A small backlog is
    // advice under every profile.
    let below = opts.profile.below_minimum();
    vec![
        minimum(facts, MinimumOf::RmemDefault, 262_144, below),
        minimum(facts, MinimumOf::RmemMax, 4_194_304, below),
        minimum(facts, MinimumOf::WmemDefault, 262_144, below),
        minimum(facts, MinimumOf::WmemMax, 1_048_576, below),
        tcp_max(facts, opts, TcpBuffer::Rmem),
        tcp_max(facts, opts, TcpBuffer::Wmem),
        minimum(facts, MinimumOf::NetdevMaxBacklog, 1000, Status::Warn),
        mtu_probing(facts),
        minimum(facts, MinimumOf::IpfragHighThresh, 16_777_216, below),
        minimum(facts, MinimumOf::IpfragLowThresh, 15_728_640, below),
        ipfrag_time(facts),
        no_metrics_save(facts),
    ]
}

/// The value of `name`, or why it is missing.
fn read<'a>(facts: &'a HostFacts, name: &str) -> Result<&'a String, SkipReason> {
    facts
        .sysctls
        .get(name)
        .ok_or_else(|| match facts.unreadable.get(name) {
            Some(error) => SkipReason::SysctlUnreadable {
                error: error.clone(),
            },
            None => SkipReason::SysctlNotRead,
        })
}

/// The SKIP finding of sysctl `name`.
fn skipped(name: &str, why: SkipReason) -> Finding {
    skip(&format!("sysctl.{name}"), name, None, why)
}

/// A numeric parameter with a documented minimum: `below` when under it.
fn minimum(facts: &HostFacts, of: MinimumOf, min: u64, below: Status) -> Finding {
    let name = of.sysctl();
    let id = format!("sysctl.{name}");
    let v = match read(facts, name) {
        Ok(v) => v,
        Err(why) => return skipped(name, why),
    };
    let Ok(value) = v.parse::<u64>() else {
        return skip(&id, name, None, SkipReason::Unparsable { value: v.clone() });
    };
    finding(
        &id,
        name,
        if value < min { below } else { Status::Pass },
        Check::Minimum { of, value, min },
        Some(Fix::sysctl(name, min.to_string())),
    )
}

/// The third value of tcp_rmem/tcp_wmem must hold the bandwidth-delay product.
fn tcp_max(facts: &HostFacts, opts: &Options, buffer: TcpBuffer) -> Finding {
    let name = buffer.sysctl();
    let id = format!("sysctl.{name}");
    let v = match read(facts, name) {
        Ok(v) => v,
        Err(why) => return skipped(name, why),
    };
    let parts: Vec<u64> = v
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    let [lo, def, max] = parts[..] else {
        return skip(&id, name, None, SkipReason::Unparsable { value: v.clone() });
    };
    // A stored stream run in which this very buffer held the sender back.
    let evidence = opts.evidence.as_ref().filter(|e| e.sysctl == name);
    let need = opts.bdp.as_ref().map(super::Bdp::bytes);
    let status = match (need, evidence) {
        (None, None) => return skip(&id, name, Some(v), SkipReason::NoBdp { max }),
        (Some(need), _) if max < need => opts.profile.below_minimum(),
        (_, Some(_)) => Status::Warn,
        (Some(_), None) => Status::Pass,
    };
    let raise_to = need.filter(|n| max < *n).unwrap_or(max.saturating_mul(2));
    finding(
        &id,
        name,
        status,
        Check::TcpMax {
            buffer,
            values: [lo, def, max],
            bdp: opts.bdp.clone(),
            need,
            evidence: evidence.cloned().map(Box::new),
        },
        Some(Fix::sysctl(name, format!("{lo} {def} {raise_to}"))),
    )
}

/// Sysctl `name` judged by `judge` (its status, the check and the fix), or its SKIP.
fn judged(
    facts: &HostFacts,
    name: &str,
    judge: impl FnOnce(&str) -> (Status, Check, Option<Fix>),
) -> Finding {
    match read(facts, name) {
        Ok(v) => {
            let (status, check, fix) = judge(v);
            finding(&format!("sysctl.{name}"), name, status, check, fix)
        }
        Err(why) => skipped(name, why),
    }
}

fn mtu_probing(facts: &HostFacts) -> Finding {
    let name = "net.ipv4.tcp_mtu_probing";
    judged(facts, name, |v| {
        let status = if v == "0" { Status::Warn } else { Status::Pass };
        let check = Check::MtuProbing { value: v.into() };
        (status, check, Some(Fix::sysctl(name, "1")))
    })
}

fn ipfrag_time(facts: &HostFacts) -> Finding {
    let name = "net.ipv4.ipfrag_time";
    judged(facts, name, |v| {
        let n = v.parse::<u64>().unwrap_or(0);
        let status = if n == 0 || n > 30 {
            Status::Warn
        } else {
            Status::Pass
        };
        let check = Check::IpfragTime { value: v.into() };
        (status, check, Some(Fix::sysctl(name, "30")))
    })
}

fn no_metrics_save(facts: &HostFacts) -> Finding {
    let name = "net.ipv4.tcp_no_metrics_save";
    judged(facts, name, |v| {
        let check = Check::NoMetricsSave { value: v.into() };
        (Status::Pass, check, None)
    })
}
