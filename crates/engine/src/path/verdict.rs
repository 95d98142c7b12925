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
#[path = "verdict_tests.rs"]
mod tests;
