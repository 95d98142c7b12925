//! From the two directions' searches and the local view to one verdict. Sizes within
//! the link-layer slack of an interface MTU are read as that MTU (see [`as_mtu`]).

use serde::{Deserialize, Serialize};

use super::search::{DirResult, Limit};

/// What the path does, with MTUs (sizes read through the link-layer slack).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// Both directions carry `mtu` up to the interface MTU of the sending ends.
    Carries { mtu: u32 },
    /// A router answered frag-needed / packet too big at `mtu`.
    LimitedByHop { mtu: u32, hop: String },
    /// Probes above `mtu` vanish and no ICMP comes back (a routed path). `hop`: the
    /// last hop that answers larger probes, when TTL-limited probes found it.
    BlackHole {
        mtu: u32,
        #[serde(default)]
        hop: Option<String>,
    },
    /// Same segment, the two interfaces' MTUs differ and the path carries the smaller.
    Mismatch { local_mtu: u32, peer_mtu: u32 },
    /// Same segment, both interfaces above `mtu`, both directions silently limited to
    /// `mtu`: an L2 device between them (switch port, bridge, VLAN sub-interface).
    SwitchPort {
        mtu: u32,
        local_mtu: u32,
        peer_mtu: u32,
    },
    /// The two directions carry different MTUs.
    Asymmetric { forward: u32, reverse: u32 },
}

/// The facts the verdict needs besides the searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    pub local_mtu: u32,
    pub peer_mtu: Option<u32>,
    /// No gateway in our route and the agent's address is on-link.
    pub same_segment: bool,
}

/// Bytes a link may carry above its MTU: NICs, veth and bridges accept frames up to
/// a VLAN tag (4) or a QinQ pair (8) beyond the MTU, and which device checks depends
/// on the direction. A size this close above an interface MTU is that MTU.
pub const LINK_SLACK: u32 = 8;

/// Interface MTUs common enough to read a size through the slack even when no
/// interface on the path reports them (a switch port is not visible from the hosts):
/// IPv6's minimum, Ethernet, FDDI/POS, jumbo, the usual switch maximum.
const COMMON_MTUS: [u32; 5] = [1280, 1500, 4470, 9000, 9216];

/// The verdict with each direction's largest passing size read as an MTU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub verdict: Verdict,
    pub forward_mtu: u32,
    pub reverse_mtu: u32,
}

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

pub fn decide(fwd: &DirResult, rev: &DirResult, cx: Context) -> Reading {
    let mut seen = vec![cx.local_mtu];
    seen.extend(cx.peer_mtu);
    seen.extend(icmp_mtu(&fwd.limit));
    seen.extend(icmp_mtu(&rev.limit));
    let f = as_mtu(fwd.largest_ok, &seen, Some(rev.largest_ok));
    let r = as_mtu(rev.largest_ok, &seen, Some(fwd.largest_ok));
    let reading = |verdict| Reading {
        verdict,
        forward_mtu: f,
        reverse_mtu: r,
    };
    let smallest = f.min(r);
    let limits = [&fwd.limit, &rev.limit];
    let icmp_hop = limits.iter().find_map(|l| match l {
        Limit::Icmp { from, .. } => Some(from.map_or_else(|| "?".into(), |a| a.to_string())),
        _ => None,
    });
    if let (Some(peer), true) = (cx.peer_mtu, cx.same_segment) {
        let nics = cx.local_mtu.min(peer);
        if peer != cx.local_mtu && smallest < cx.local_mtu.max(peer) && smallest >= nics {
            return reading(Verdict::Mismatch {
                local_mtu: cx.local_mtu,
                peer_mtu: peer,
            });
        }
        let silent = fwd.limit == Limit::Silent && rev.limit == Limit::Silent;
        if f == r && smallest < nics && silent {
            return reading(Verdict::SwitchPort {
                mtu: smallest,
                local_mtu: cx.local_mtu,
                peer_mtu: peer,
            });
        }
    }
    if f != r {
        return reading(Verdict::Asymmetric {
            forward: f,
            reverse: r,
        });
    }
    if let Some(hop) = icmp_hop {
        return reading(Verdict::LimitedByHop { mtu: smallest, hop });
    }
    if limits.iter().any(|l| **l == Limit::Silent) {
        return reading(Verdict::BlackHole {
            mtu: smallest,
            hop: None,
        });
    }
    reading(Verdict::Carries { mtu: smallest })
}

/// The exact sizes behind a reading, when the slack made them differ from the MTUs:
/// "exact largest sizes: forward 1504, reverse 1500 (link-layer slack)".
pub fn slack_detail(fwd: &DirResult, rev: &DirResult, r: &Reading) -> Option<String> {
    (fwd.largest_ok != r.forward_mtu || rev.largest_ok != r.reverse_mtu).then(|| {
        format!(
            "exact largest sizes: forward {}, reverse {} (link-layer slack)",
            fwd.largest_ok, rev.largest_ok
        )
    })
}

impl Verdict {
    /// One line for people, with payload sizes: "carries MTU 9000 end to end (…)".
    pub fn text(&self, v6: bool) -> String {
        let o = udp_overhead(v6);
        let sz = |n: u32| format!("{n} = {} + {o}", n.saturating_sub(o));
        match self {
            Verdict::Carries { mtu } => format!("carries MTU {mtu} end to end ({})", sz(*mtu)),
            Verdict::LimitedByHop { mtu, hop } => {
                format!(
                    "limited to {mtu} by hop {hop} (ICMP frag-needed) ({})",
                    sz(*mtu)
                )
            }
            Verdict::BlackHole { mtu, hop: None } => format!(
                "black hole above {mtu}: larger packets vanish, no ICMP ({})",
                sz(*mtu)
            ),
            Verdict::BlackHole { mtu, hop: Some(h) } => format!(
                "black hole above {mtu} after hop {h}: larger packets vanish past it, no ICMP ({})",
                sz(*mtu)
            ),
            Verdict::Mismatch {
                local_mtu,
                peer_mtu,
            } if peer_mtu < local_mtu => format!(
                "mismatch: local MTU {local_mtu}, peer accepts ≤ {peer_mtu} on the same segment"
            ),
            Verdict::Mismatch {
                local_mtu,
                peer_mtu,
            } => format!(
                "mismatch: peer MTU {peer_mtu}, this host accepts ≤ {local_mtu} on the same segment"
            ),
            Verdict::SwitchPort {
                mtu,
                local_mtu,
                peer_mtu,
            } => {
                let nics = if local_mtu == peer_mtu {
                    format!("both NICs say {local_mtu}")
                } else {
                    format!("the NICs say {local_mtu} (local) and {peer_mtu} (peer)")
                };
                format!(
                    "switch port: an L2 device between these two interfaces (a switch port, a bridge, a VLAN sub-interface) passes at most {mtu}; {nics} ({})",
                    sz(*mtu)
                )
            }
            Verdict::Asymmetric { forward, reverse } => {
                format!("asymmetric: forward {forward}, reverse {reverse}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr};

    use super::*;

    fn dir(ok: u32, top: u32, limit: Limit) -> DirResult {
        DirResult {
            largest_ok: ok,
            top,
            limit,
            probes: 1,
            lost: 0,
        }
    }

    #[test]
    fn verdicts() {
        let lan = Context {
            local_mtu: 9000,
            peer_mtu: Some(9000),
            same_segment: true,
        };
        let routed = Context {
            peer_mtu: Some(1500),
            same_segment: false,
            ..lan
        };
        let r = Some(IpAddr::V4(Ipv4Addr::new(198, 18, 3, 1)));
        let icmp = Limit::Icmp { mtu: 1500, from: r };
        let cases = [
            (
                dir(9000, 9000, Limit::Top),
                dir(9000, 9000, Limit::Top),
                lan,
                Verdict::Carries { mtu: 9000 },
            ),
            (
                dir(1500, 9000, icmp.clone()),
                dir(1500, 1500, Limit::Top),
                routed,
                Verdict::LimitedByHop {
                    mtu: 1500,
                    hop: "198.18.3.1".into(),
                },
            ),
            (
                dir(1500, 9000, Limit::Silent),
                dir(1500, 1500, Limit::Top),
                routed,
                Verdict::BlackHole {
                    mtu: 1500,
                    hop: None,
                },
            ),
            (
                dir(1500, 9000, Limit::Silent),
                dir(1500, 1500, Limit::Top),
                Context {
                    same_segment: true,
                    ..routed
                },
                Verdict::Mismatch {
                    local_mtu: 9000,
                    peer_mtu: 1500,
                },
            ),
            (
                dir(9000, 9000, Limit::Top),
                dir(4000, 9000, Limit::Silent),
                lan,
                Verdict::Asymmetric {
                    forward: 9000,
                    reverse: 4000,
                },
            ),
        ];
        for (f, r, cx, want) in cases {
            assert_eq!(decide(&f, &r, cx).verdict, want);
        }
    }

    #[test]
    fn link_layer_slack_is_read_as_the_mtu() {
        let lan = Context {
            local_mtu: 9000,
            peer_mtu: Some(9000),
            same_segment: true,
        };
        let switch = Verdict::SwitchPort {
            mtu: 1500,
            local_mtu: 9000,
            peer_mtu: 9000,
        };
        let icmp = Limit::Icmp {
            mtu: 1500,
            from: Some(IpAddr::V4(Ipv4Addr::new(198, 18, 7, 254))),
        };
        let cases = [
            // Both NICs 9000, one bridge port at 1500: 4 bytes of slack one way only.
            (
                dir(1500, 9000, Limit::Silent),
                dir(1504, 9000, Limit::Silent),
                lan,
                switch.clone(),
                (1500, 1500),
            ),
            (
                dir(1504, 9000, Limit::Silent),
                dir(1504, 9000, Limit::Silent),
                lan,
                switch,
                (1500, 1500),
            ),
            // The peer's own NIC at 1500 takes a VLAN tag's worth more on receive.
            (
                dir(1504, 9000, Limit::Silent),
                dir(1500, 1500, Limit::Top),
                Context {
                    peer_mtu: Some(1500),
                    ..lan
                },
                Verdict::Mismatch {
                    local_mtu: 9000,
                    peer_mtu: 1500,
                },
                (1500, 1500),
            ),
            // This host is the small one.
            (
                dir(1500, 1500, Limit::Top),
                dir(1504, 9000, Limit::Silent),
                Context {
                    local_mtu: 1500,
                    ..lan
                },
                Verdict::Mismatch {
                    local_mtu: 1500,
                    peer_mtu: 9000,
                },
                (1500, 1500),
            ),
            // Sizes a few bytes apart with no MTU near them: still one limit.
            (
                dir(3002, 9000, Limit::Silent),
                dir(3000, 9000, Limit::Silent),
                Context {
                    same_segment: false,
                    ..lan
                },
                Verdict::BlackHole {
                    mtu: 3000,
                    hop: None,
                },
                (3000, 3000),
            ),
            // A real asymmetric route: forward 9000, return through a 1500 hop.
            (
                dir(9000, 9000, Limit::Top),
                dir(1500, 9000, icmp),
                Context {
                    same_segment: false,
                    ..lan
                },
                Verdict::Asymmetric {
                    forward: 9000,
                    reverse: 1500,
                },
                (9000, 1500),
            ),
            // More than the slack apart is asymmetric even on one segment.
            (
                dir(1500, 9000, Limit::Silent),
                dir(1520, 9000, Limit::Silent),
                lan,
                Verdict::Asymmetric {
                    forward: 1500,
                    reverse: 1520,
                },
                (1500, 1520),
            ),
        ];
        for (f, r, cx, want, mtus) in cases {
            let got = decide(&f, &r, cx);
            assert_eq!(got.verdict, want, "{f:?} {r:?}");
            assert_eq!((got.forward_mtu, got.reverse_mtu), mtus);
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

    #[test]
    fn text_names_ip_and_payload_sizes() {
        let sw = Verdict::SwitchPort {
            mtu: 1500,
            local_mtu: 9000,
            peer_mtu: 9000,
        };
        assert_eq!(
            sw.text(false),
            "switch port: an L2 device between these two interfaces (a switch port, a bridge, a VLAN sub-interface) passes at most 1500; both NICs say 9000 (1500 = 1472 + 28)"
        );
        assert_eq!(
            Verdict::Carries { mtu: 9000 }.text(false),
            "carries MTU 9000 end to end (9000 = 8972 + 28)"
        );
        assert!(Verdict::BlackHole {
            mtu: 1500,
            hop: None
        }
        .text(true)
        .contains("1500 = 1452 + 48"));
    }
}
