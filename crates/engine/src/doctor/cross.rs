//! Cross-node comparison of the two ends' facts: the interconnect MTU must be equal,
//! and buffer and reassembly settings should be.

use super::finding::finding;
use super::iface::RAC_MTU;
use super::{Check, Finding, Fix, HostFacts, MtuScope, Profile, Status};

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
        out.push(finding(
            "cross.mtu",
            &format!("{} <-> {}:{}", l.info.name, peer.hostname, p.info.name),
            if lm == pm { Status::Pass } else { Status::Fail },
            Check::CrossMtu {
                local: lm,
                peer: pm,
            },
            mtu_fix(
                &l.info.name,
                lm,
                &p.info.name,
                pm,
                &peer.hostname,
                target_mtu(lm, pm, profile),
            ),
        ));
    }
    for name in SAME {
        let (Some(l), Some(p)) = (local.sysctls.get(*name), peer.sysctls.get(*name)) else {
            continue;
        };
        out.push(finding(
            &format!("cross.{name}"),
            name,
            if l == p { Status::Pass } else { Status::Warn },
            Check::CrossSysctl {
                sysctl: (*name).into(),
                local: l.clone(),
                peer: p.clone(),
            },
            Some(Fix::SameOnBothNodes {
                sysctl: (*name).into(),
            }),
        ));
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

/// Raises each end below `target` to it: this host's interface, and the peer's named.
fn mtu_fix(local: &str, lm: u32, peer_if: &str, pm: u32, peer: &str, target: u32) -> Option<Fix> {
    let peer = peer.to_string();
    let (iface, scope) = match (lm < target, pm < target) {
        (true, true) => (
            local,
            MtuScope::HereAndPeer {
                peer,
                peer_iface: peer_if.into(),
            },
        ),
        (true, false) => (local, MtuScope::Here),
        (false, true) => (peer_if, MtuScope::Peer { peer }),
        (false, false) => return None,
    };
    Some(Fix::SetMtu {
        iface: iface.into(),
        mtu: target,
        scope,
    })
}
