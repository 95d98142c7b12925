//! From the two directions' searches to what they say: each direction's largest size
//! read as an interface MTU (sizes within the link-layer slack of an MTU are that
//! MTU, see [`as_mtu`]), and the pair evidence the diagnosis reads
//! ([`crate::diagnosis::pair`]).

use std::net::IpAddr;

use mtuperf_proto::msg::mesh::StopKind;

use super::search::{DirResult, Limit};

/// Bytes a link may carry above its MTU: NICs, veth and bridges accept frames up to
/// a VLAN tag (4) or a QinQ pair (8) beyond the MTU, and which device checks depends
/// on the direction. A size this close above an interface MTU is that MTU.
pub const LINK_SLACK: u32 = 8;

/// Interface MTUs common enough to read a size through the slack even when no
/// interface on the path reports them (a switch port is not visible from the hosts):
/// IPv6's minimum, Ethernet, FDDI/POS, jumbo, the usual switch maximum.
const COMMON_MTUS: [u32; 5] = [1280, 1500, 4470, 9000, 9216];

/// IP header bytes plus UDP header: payload = size − overhead.
pub fn udp_overhead(v6: bool) -> u32 {
    if v6 {
        48
    } else {
        28
    }
}

/// `size` read as an interface MTU: the largest of `seen` (then of the common MTUs)
/// that `size` exceeds by at most [`LINK_SLACK`]; else `other` (the other direction's
/// largest size) when `size` exceeds it by at most the slack; else `size` itself.
pub fn as_mtu(size: u32, seen: &[u32], other: Option<u32>) -> u32 {
    let near = |m: &u32| *m <= size && size - m <= LINK_SLACK;
    seen.iter()
        .copied()
        .filter(near)
        .max()
        .or_else(|| COMMON_MTUS.iter().copied().filter(near).max())
        .or_else(|| other.filter(near))
        .unwrap_or(size)
}

fn icmp_mtu(l: &Limit) -> Option<u32> {
    match l {
        Limit::Icmp { mtu, .. } | Limit::Local { mtu } => Some(*mtu),
        _ => None,
    }
}

/// Each direction's largest size read as an MTU (forward, reverse), against the
/// interfaces' MTUs and any MTU an ICMP error or the sender's route named.
pub fn mtus(fwd: &DirResult, rev: &DirResult, local_mtu: u32, peer_mtu: Option<u32>) -> (u32, u32) {
    let mut seen = vec![local_mtu];
    seen.extend(peer_mtu);
    seen.extend(icmp_mtu(&fwd.limit));
    seen.extend(icmp_mtu(&rev.limit));
    (
        as_mtu(fwd.largest_ok, &seen, Some(rev.largest_ok)),
        as_mtu(rev.largest_ok, &seen, Some(fwd.largest_ok)),
    )
}

impl Limit {
    /// How the search stopped, as the diagnosis and the mesh's wire name it.
    pub fn stop(&self) -> StopKind {
        match self {
            Limit::Top => StopKind::Top,
            Limit::Icmp { .. } => StopKind::Icmp,
            Limit::Local { .. } => StopKind::Local,
            Limit::Silent => StopKind::Silent,
        }
    }

    /// Who answered frag-needed, for `Icmp`.
    pub fn icmp_from(&self) -> Option<IpAddr> {
        match self {
            Limit::Icmp { from, .. } => *from,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(ok: u32, top: u32, limit: Limit) -> DirResult {
        DirResult {
            largest_ok: ok,
            top,
            limit,
            probes: 1,
            lost: 0,
            waited: super::super::Waited::default(),
        }
    }

    #[test]
    fn as_mtu_prefers_interfaces_seen_then_common_mtus_then_the_other_direction() {
        assert_eq!(as_mtu(1504, &[9000], None), 1500);
        assert_eq!(as_mtu(1508, &[9000], None), 1500);
        assert_eq!(as_mtu(1509, &[9000], None), 1509);
        assert_eq!(as_mtu(4004, &[4000, 9000], None), 4000);
        assert_eq!(as_mtu(4004, &[9000], Some(4000)), 4000);
        assert_eq!(as_mtu(4000, &[9000], Some(4004)), 4000);
        assert_eq!(as_mtu(9000, &[9000], Some(1500)), 9000);
    }

    /// Sizes a few bytes over an MTU on one side only (a bridge port at 1500 passes
    /// 1504 one way) read as that MTU; more than the slack apart stays apart.
    #[test]
    fn link_layer_slack_is_read_as_the_mtu() {
        let silent = |n| dir(n, 9000, Limit::Silent);
        assert_eq!(
            mtus(&silent(1500), &silent(1504), 9000, Some(9000)),
            (1500, 1500)
        );
        assert_eq!(mtus(&silent(3002), &silent(3000), 9000, None), (3000, 3000));
        assert_eq!(
            mtus(&silent(1500), &silent(1520), 9000, Some(9000)),
            (1500, 1520)
        );
        let icmp = Limit::Icmp {
            mtu: 1500,
            from: None,
        };
        assert_eq!(
            mtus(
                &dir(9000, 9000, Limit::Top),
                &dir(1500, 9000, icmp),
                9000,
                Some(9000)
            ),
            (9000, 1500)
        );
    }
}
