//! Cross-node comparison of the two ends' facts: the interconnect MTU must be equal,
//! and buffer and reassembly settings should be.

use super::finding::{shell_fix, FindingBuilder};
use super::iface::RAC_MTU;
use super::{Finding, HostFacts, Profile, Status};

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
/// hold the interface(s) carrying the traffic between them (first one compared). A
/// different MTU is fixed toward the network's expected MTU, as every other finding
/// of this check: the Oracle 9000 under the rac profile, else the larger of the two
/// (never by lowering the end that is already right).
pub fn compare(local: &HostFacts, peer: &HostFacts, profile: Profile) -> Vec<Finding> {
    let mut out = Vec::new();
    if let (Some(l), Some(p)) = (local.ifaces.first(), peer.ifaces.first()) {
        let (lm, pm) = (l.info.mtu, p.info.mtu);
        out.push(
            FindingBuilder::new("cross.mtu", &format!("{} <-> {}:{}", l.info.name, peer.hostname, p.info.name))
                .status(if lm == pm { Status::Pass } else { Status::Fail })
                .measured(format!("local {lm}, peer {pm}"))
                .expected("equal MTU on both ends")
                .why("The end with the larger MTU sends frames the other end (or its switch port) drops; small packets pass, so the fault shows only under load or with big blocks.")
                .source("Oracle Grid Infrastructure Installation Guide for Linux (identical interconnect MTU on all nodes); MOS 1054902.1")
                .fix(mtu_fix(&l.info.name, lm, &p.info.name, pm, &peer.hostname, target_mtu(lm, pm, profile)))
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

/// The MTU both ends should carry: the profile's expected MTU, or the larger end's.
pub fn target_mtu(local: u32, peer: u32, profile: Profile) -> u32 {
    let expected = match profile {
        Profile::Rac => RAC_MTU,
        Profile::Generic => 0,
    };
    local.max(peer).max(expected)
}

/// Raises each end below `target` to it: this host's command, and the peer's named.
fn mtu_fix(local: &str, lm: u32, peer_if: &str, pm: u32, peer: &str, target: u32) -> String {
    let t = target.to_string();
    let peer_at = format!("on the peer ({peer})");
    let (iface, on, also) = match (lm < target, pm < target) {
        (true, true) => (
            local,
            "on this host",
            format!(", the same {peer_at} for {peer_if}"),
        ),
        (true, false) => (local, "on this host", String::new()),
        (false, true) => (peer_if, peer_at.as_str(), String::new()),
        (false, false) => return String::new(),
    };
    shell_fix(
        &["ip", "link", "set", "dev", iface, "mtu", &t],
        &format!("{on}{also}, and every switch port between them"),
    )
}
