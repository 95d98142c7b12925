//! Cross-node comparison of the two ends' facts: the interconnect MTU must be equal,
//! and buffer and reassembly settings should be.

use super::finding::{shell_fix, FindingBuilder};
use super::{Finding, HostFacts, Status};

/// Settings that should match on every node (WARN when they differ).
const SAME: &[&str] = &[
    "net.core.rmem_default",
    "net.core.rmem_max",
    "net.core.wmem_default",
    "net.core.wmem_max",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.ipfrag_high_thresh",
    "net.ipv4.ipfrag_low_thresh",
    "net.ipv4.ipfrag_time",
    "net.ipv4.tcp_mtu_probing",
];

/// Compares the local interconnect interface facts with the peer's. Both `HostFacts`
/// hold the interface(s) carrying the traffic between them (first one compared).
pub fn compare(local: &HostFacts, peer: &HostFacts) -> Vec<Finding> {
    let mut out = Vec::new();
    if let (Some(l), Some(p)) = (local.ifaces.first(), peer.ifaces.first()) {
        let (lm, pm) = (l.info.mtu, p.info.mtu);
        let lower = lm.min(pm);
        let fix_iface = if lm > pm { &l.info.name } else { &p.info.name };
        let fix_host = if lm > pm { "this host" } else { "the peer" };
        out.push(
            FindingBuilder::new("cross.mtu", &format!("{} <-> {}:{}", l.info.name, peer.hostname, p.info.name))
                .status(if lm == pm { Status::Pass } else { Status::Fail })
                .measured(format!("local {lm}, peer {pm}"))
                .expected("equal MTU on both ends")
                .why("The end with the larger MTU sends frames the other end (or its switch port) drops; small packets pass, so the fault shows only under load or with big blocks.")
                .source("Oracle Grid Infrastructure Installation Guide for Linux (identical interconnect MTU on all nodes); MOS 1054902.1")
                .fix(shell_fix(&["ip", "link", "set", "dev", fix_iface, "mtu", &lower.to_string()], &format!("on {fix_host}, or raise the other end and the switch")))
                .build(),
        );
    }
    for name in SAME {
        let (Some(l), Some(p)) = (local.sysctls.get(*name), peer.sysctls.get(*name)) else {
            continue;
        };
        out.push(
            FindingBuilder::new(&format!("cross.{name}"), name)
                .status(if l == p { Status::Pass } else { Status::Warn })
                .measured(format!("local {l}, peer {p}"))
                .expected("equal on both ends")
                .why("Nodes with different buffer or reassembly settings behave differently under the same load, which hides the cause of one-sided drops.")
                .source("Oracle Grid Infrastructure Installation Guide for Linux (same kernel parameters on all nodes)")
                .fix(format!("# set {name} to the same value on both nodes (see the sysctl findings)"))
                .build(),
        );
    }
    out
}
