//! From the two directions' searches and the local view to one verdict.

use serde::{Deserialize, Serialize};

use super::search::{DirResult, Limit};

/// What the path does, with exact IP packet sizes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// Both directions carry `mtu` up to the interface MTU of the sending ends.
    Carries { mtu: u32 },
    /// A router answered frag-needed / packet too big at `mtu`.
    LimitedByHop { mtu: u32, hop: String },
    /// Probes above `mtu` vanish and no ICMP comes back.
    BlackHole { mtu: u32 },
    /// Same segment, the peer's interface MTU is smaller than ours.
    Mismatch { local_mtu: u32, peer_mtu: u32 },
    /// The two directions carry different sizes.
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

/// IP header bytes plus UDP header: payload = size − overhead.
pub fn udp_overhead(v6: bool) -> u32 {
    if v6 {
        48
    } else {
        28
    }
}

pub fn decide(fwd: &DirResult, rev: &DirResult, cx: Context) -> Verdict {
    let smallest = fwd.largest_ok.min(rev.largest_ok);
    if let Some(peer) = cx.peer_mtu {
        if cx.same_segment && peer < cx.local_mtu && smallest < cx.local_mtu {
            return Verdict::Mismatch {
                local_mtu: cx.local_mtu,
                peer_mtu: peer,
            };
        }
    }
    if fwd.largest_ok != rev.largest_ok {
        return Verdict::Asymmetric {
            forward: fwd.largest_ok,
            reverse: rev.largest_ok,
        };
    }
    let limits = [&fwd.limit, &rev.limit];
    if let Some(hop) = limits.iter().find_map(|l| match l {
        Limit::Icmp { from, .. } => Some(from.map_or_else(|| "?".into(), |a| a.to_string())),
        _ => None,
    }) {
        return Verdict::LimitedByHop { mtu: smallest, hop };
    }
    if limits.iter().any(|l| **l == Limit::Silent) {
        return Verdict::BlackHole { mtu: smallest };
    }
    Verdict::Carries { mtu: smallest }
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
            Verdict::BlackHole { mtu } => format!(
                "black hole above {mtu}: larger packets vanish, no ICMP ({})",
                sz(*mtu)
            ),
            Verdict::Mismatch {
                local_mtu,
                peer_mtu,
            } => format!(
                "mismatch: local MTU {local_mtu}, peer accepts ≤ {peer_mtu} on the same segment"
            ),
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
                Verdict::BlackHole { mtu: 1500 },
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
            assert_eq!(decide(&f, &r, cx), want);
        }
    }

    #[test]
    fn text_names_ip_and_payload_sizes() {
        assert_eq!(
            Verdict::Carries { mtu: 9000 }.text(false),
            "carries MTU 9000 end to end (9000 = 8972 + 28)"
        );
        assert!(Verdict::BlackHole { mtu: 1500 }
            .text(true)
            .contains("1500 = 1452 + 48"));
    }
}
