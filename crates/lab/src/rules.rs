//! The kernel-facing pieces every lab build shares: sysctls written in a
//! namespace and the nftables rule sets of black holes and random loss. Kept apart
//! from `build` so the cluster builder can use them without importing its caller.
use std::fmt::Write as _;

use crate::cmd::{in_ns, shell_line, Runner};
use crate::error::LabError;

/// nftables table names used inside the namespaces.
pub(crate) const BLACKHOLE_TABLE: &str = "mtlab_blackhole";
pub(crate) const LOSS_TABLE: &str = "mtlab_loss";

/// The threshold out of 10000 for `numgen random mod 10000 < T` (0.01% steps).
pub(crate) fn loss_threshold(pct: f64) -> u32 {
    (pct * 100.0).round().clamp(1.0, 10_000.0) as u32
}

/// Writes sysctl `key` (dotted, as `sysctl -w` takes it) in namespace `ns`: the
/// `/proc/sys/net` files a thread opens are those of its network namespace.
pub(crate) fn sysctl(run: Runner, ns: &str, key: &str, value: &str) -> Result<(), LabError> {
    let file = format!("/proc/sys/{}", key.replace('.', "/"));
    let line = shell_line(&in_ns(ns, &["sysctl", "-qw", &format!("{key}={value}")]));
    run.kernel(ns, &line, || std::fs::write(&file, value))
}

/// The router's own frag-needed / packet-too-big errors leave through `output`;
/// `forward` catches ones passing through.
pub(crate) fn blackhole_rules() -> String {
    let drops = "    icmp type destination-unreachable icmp code frag-needed drop\n    \
                 icmpv6 type packet-too-big drop\n";
    let mut s = format!("table inet {BLACKHOLE_TABLE} {{\n");
    for hook in ["output", "forward"] {
        let _ = write!(
            s,
            "  chain {hook} {{\n    type filter hook {hook} priority 0; policy accept;\n{drops}  }}\n"
        );
    }
    s + "}\n"
}

/// Random loss of UDP datagrams and ICMP echoes at input (see the crate docs).
pub(crate) fn loss_rules(threshold: u32) -> String {
    // `counter`: tests read how many the rule dropped (`nft list table`).
    let drop = format!("numgen random mod 10000 < {threshold} counter drop");
    format!(
        "table inet {LOSS_TABLE} {{\n  chain input {{\n    \
         type filter hook input priority 0; policy accept;\n    \
         meta l4proto udp {drop}\n    \
         icmp type {{ echo-request, echo-reply }} {drop}\n    \
         icmpv6 type {{ echo-request, echo-reply }} {drop}\n  }}\n}}\n"
    )
}
