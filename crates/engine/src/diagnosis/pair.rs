//! The diagnosis of one pair of nodes from what was seen of it: each end (its
//! address, its NIC MTU when known, the first router its packets toward the other
//! reach) and each direction (the MTU it carries, how its search stopped, past which
//! hop larger packets vanish). In this order, the first rule that matches decides:
//!
//! 1. a router answered frag-needed for a failing direction: that router;
//! 2. TTL-limited probes found the last hop that still gets the larger packets: a
//!    black hole past that router;
//! 3. a router stands between the two (a gateway, or a router answering a TTL-1
//!    probe even where both addresses share a subnet: proxy ARP): a black hole past
//!    the last router before the receiver of the silent direction;
//! 4. one segment, no router: a NIC below the expected MTU; a sender whose own route
//!    refuses more; both directions silent while the NICs are fine: an L2 device on
//!    the segment; one direction silent: a one-way drop on the segment in that
//!    direction (the sender's outbound side or the receiver's inbound side: from one
//!    pair the two look the same, so neither end is blamed, the near one least of
//!    all; the mesh, seeing every direction of a node, names which), or, when the
//!    receiver's NIC MTU is not known, a silent drop into it.

use std::net::IpAddr;

use mtuperf_proto::msg::mesh::StopKind;

use super::{Diagnosis, Fault, Location};

/// One end of a pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    /// Its address on the network.
    pub addr: IpAddr,
    /// Its NIC's MTU toward the other end, when known.
    pub nic_mtu: Option<u32>,
    pub iface: Option<String>,
    /// The first router its packets toward the other end reach (its gateway, or the
    /// router that answered a TTL-1 probe), when one was seen.
    pub first_router: Option<IpAddr>,
}

/// A hop of a path, by its TTL distance from the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    pub ttl: u32,
    pub addr: Option<IpAddr>,
}

/// One direction as measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Way {
    /// The largest packet that passed, read as an MTU.
    pub mtu: u32,
    pub stop: StopKind,
    /// Who answered frag-needed, for `Icmp`.
    pub icmp_from: Option<IpAddr>,
    /// The last hop that still answered the larger packets (TTL-limited probes), when
    /// they vanish past it; TTL 0: they vanish on the sender's first link.
    pub vanish_after: Option<Hop>,
}

/// A pair and what was seen of its two directions (`ab`: from `a` to `b`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub a: End,
    pub b: End,
    pub ab: Option<Way>,
    pub ba: Option<Way>,
    /// The MTU both directions must carry.
    pub expect: u32,
}

/// A failing direction: the way, its sender, its receiver.
type Failing<'a> = (&'a Way, &'a End, &'a End);

/// The faults that explain the pair's failing directions: none when both carry the
/// expected MTU; two only when both NICs are below it.
pub fn decide(p: &Pair) -> Vec<Diagnosis> {
    let failing: Vec<Failing<'_>> = [(&p.ab, &p.a, &p.b), (&p.ba, &p.b, &p.a)]
        .into_iter()
        .filter_map(|(w, from, to)| w.as_ref().map(|w| (w, from, to)))
        .filter(|(w, _, _)| w.mtu < p.expect)
        .collect();
    let Some(mtu) = failing.iter().map(|(w, _, _)| w.mtu).min() else {
        return Vec::new();
    };
    let at = |fault, at| Diagnosis {
        fault,
        at,
        mtu,
        expect: p.expect,
    };
    if let Some((f, loc)) = routed(p, &failing) {
        return vec![at(f, loc)];
    }
    segment(p, &failing)
        .into_iter()
        .map(|(f, loc)| at(f, loc))
        .collect()
}

/// Rules 1 to 3: a router answered, was located, or stands between the two.
fn routed(p: &Pair, failing: &[Failing<'_>]) -> Option<(Fault, Location)> {
    if let Some((w, _, _)) = failing.iter().find(|(w, _, _)| w.stop == StopKind::Icmp) {
        return Some((
            Fault::RouterMtu { hop: None },
            Location::Router { addr: w.icmp_from },
        ));
    }
    let located = failing
        .iter()
        .filter_map(|(w, _, _)| w.vanish_after)
        .find(|h| h.ttl >= 1);
    if let Some(h) = located {
        return Some((
            Fault::BlackHole { hop: Some(h.ttl) },
            Location::Router { addr: h.addr },
        ));
    }
    if p.a.first_router.is_none() && p.b.first_router.is_none() {
        return None;
    }
    let (_, from, to) = failing
        .iter()
        .find(|(w, _, _)| w.stop == StopKind::Silent)?;
    Some((
        Fault::BlackHole { hop: None },
        Location::Router {
            addr: to.first_router.or(from.first_router),
        },
    ))
}

/// Rule 4: one segment, no router.
fn segment(p: &Pair, failing: &[Failing<'_>]) -> Vec<(Fault, Location)> {
    let node = |e: &End| Location::Node { addr: e.addr };
    let mut low: Vec<&End> = [&p.a, &p.b]
        .into_iter()
        .filter(|e| e.nic_mtu.is_some_and(|m| m < p.expect))
        .collect();
    low.sort_by_key(|e| e.nic_mtu);
    if !low.is_empty() {
        return low
            .into_iter()
            .map(|e| {
                let f = Fault::NicMtu {
                    iface: e.iface.clone(),
                    nic_mtu: e.nic_mtu.unwrap_or(0),
                };
                (f, node(e))
            })
            .collect();
    }
    if let Some((_, from, _)) = failing.iter().find(|(w, _, _)| w.stop == StopKind::Local) {
        let f = Fault::RouteMtu {
            nic_mtu: from.nic_mtu.unwrap_or(0),
        };
        return vec![(f, node(from))];
    }
    let nic = |e: &End| e.nic_mtu.unwrap_or(p.expect);
    if let [_, _] = failing {
        let f = Fault::SwitchPort {
            nic_mtu: nic(&p.a).min(nic(&p.b)),
        };
        return vec![(f, Location::segment(p.a.addr, p.b.addr))];
    }
    let Some((w, from, to)) = failing.first() else {
        return Vec::new();
    };
    let f = match (w.stop, to.nic_mtu) {
        (StopKind::Silent, Some(_)) => {
            let f = Fault::OneWayDrop {
                from: from.addr,
                to: to.addr,
                nic_mtu: nic(from).min(nic(to)),
            };
            return vec![(f, Location::segment(from.addr, to.addr))];
        }
        (StopKind::Silent, None) => Fault::SilentDrop,
        // The sender's search stopped at its own NIC, whose MTU was not reported.
        _ => {
            return vec![(
                Fault::NicMtu {
                    iface: from.iface.clone(),
                    nic_mtu: w.mtu,
                },
                node(from),
            )]
        }
    };
    vec![(f, node(to))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnosis::FaultClass;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn end(addr: &str, nic: Option<u32>) -> End {
        End {
            addr: ip(addr),
            nic_mtu: nic,
            iface: Some("net1".into()),
            first_router: None,
        }
    }

    #[allow(clippy::unnecessary_wraps)] // a pair's directions are Options
    fn way(mtu: u32, stop: StopKind) -> Option<Way> {
        Some(Way {
            mtu,
            stop,
            icmp_from: None,
            vanish_after: None,
        })
    }

    const N1: &str = "198.19.1.1";
    const N3: &str = "198.19.1.3";
    const R: &str = "198.19.1.103";

    /// From n1 toward n3.
    fn pair(a: Option<u32>, b: Option<u32>, ab: Option<Way>, ba: Option<Way>) -> Pair {
        Pair {
            a: end(N1, a),
            b: end(N3, b),
            ab,
            ba,
            expect: 9000,
        }
    }

    /// From n3 toward n1.
    fn back(a: Option<u32>, b: Option<u32>, ab: Option<Way>, ba: Option<Way>) -> Pair {
        Pair {
            a: end(N3, a),
            b: end(N1, b),
            ..pair(None, None, ab, ba)
        }
    }

    fn one(p: &Pair) -> (FaultClass, Location, u32) {
        let d = decide(p);
        assert_eq!(d.len(), 1, "{d:?}");
        (d[0].class(), d[0].at.clone(), d[0].mtu)
    }

    fn node(a: &str) -> Location {
        Location::Node { addr: ip(a) }
    }

    fn seg() -> Location {
        Location::segment(ip(N1), ip(N3))
    }

    fn router(a: &str) -> Location {
        Location::Router { addr: Some(ip(a)) }
    }

    /// Each fault of the lab, as a pair from n1 toward n3 and from n3 toward n1 sees
    /// it: both name the same class and location.
    #[test]
    fn both_ends_of_a_pair_name_the_same_fault() {
        use StopKind::{Icmp, Silent, Top};
        let located = Some(Way {
            vanish_after: Some(Hop {
                ttl: 1,
                addr: Some(ip(R)),
            }),
            ..way(1500, Silent).unwrap()
        });
        let icmp = Some(Way {
            icmp_from: Some(ip(R)),
            ..way(1500, Icmp).unwrap()
        });
        let behind = |mut p: Pair, at_a: bool, at_b: bool| {
            p.a.first_router = at_a.then(|| ip(R));
            p.b.first_router = at_b.then(|| ip(R));
            p
        };
        let cases: Vec<(&str, Pair, (FaultClass, Location, u32))> = vec![
            (
                "n3's NIC at 1500, from n1",
                pair(Some(9000), Some(1500), way(1500, Silent), way(1500, Top)),
                (FaultClass::NicMtu, node(N3), 1500),
            ),
            (
                "n3's NIC at 1500, from n3 (its own NIC is the low one, not 'mismatch')",
                back(Some(1500), Some(9000), way(1500, Top), way(1500, Silent)),
                (FaultClass::NicMtu, node(N3), 1500),
            ),
            (
                "a switch port at 1500 between them, both NICs 9000",
                pair(Some(9000), Some(9000), way(1500, Silent), way(1504, Silent)),
                (
                    FaultClass::SwitchPort,
                    Location::segment(ip(N3), ip(N1)),
                    1500,
                ),
            ),
            (
                "frames from n1 into n3 vanish, from n1: their segment, not this host",
                pair(Some(9000), Some(9000), way(1500, Silent), way(9000, Top)),
                (FaultClass::OneWayDrop, seg(), 1500),
            ),
            (
                "the same, from n3: the failing way goes into n3 (the near end here)",
                back(Some(9000), Some(9000), way(9000, Top), way(1500, Silent)),
                (FaultClass::OneWayDrop, seg(), 1500),
            ),
            (
                "a black hole past router R in front of n3, from n1 (located)",
                behind(
                    pair(Some(9000), Some(1500), located, way(1500, Top)),
                    true,
                    false,
                ),
                (FaultClass::BlackHole, router(R), 1500),
            ),
            (
                "the same from n3: its NIC is 1500 too, but a router stands between",
                behind(
                    back(Some(1500), Some(9000), way(1500, Top), way(1500, Silent)),
                    true,
                    false,
                ),
                (FaultClass::BlackHole, router(R), 1500),
            ),
            (
                "a router answering frag-needed, either way",
                pair(Some(9000), Some(1500), icmp, way(1500, Top)),
                (FaultClass::RouterMtu, router(R), 1500),
            ),
            (
                "the return route only (asym)",
                pair(Some(9000), Some(9000), way(9000, Top), icmp),
                (FaultClass::RouterMtu, router(R), 1500),
            ),
            (
                "this host's own route refuses more",
                pair(
                    Some(9000),
                    Some(9000),
                    way(1500, StopKind::Local),
                    way(9000, Top),
                ),
                (FaultClass::RouteMtu, node(N1), 1500),
            ),
            (
                "no agent at n3 (path --hops alone): a silent drop into n3",
                pair(Some(9000), None, way(1500, Silent), None),
                (FaultClass::SilentDrop, node(N3), 1500),
            ),
        ];
        for (what, p, want) in cases {
            assert_eq!(one(&p), want, "{what}");
            assert!(decide(&p).iter().all(|d| d.expect == 9000), "{what}");
        }
    }

    #[test]
    fn a_path_that_carries_the_expected_mtu_has_no_fault() {
        let p = pair(
            Some(9000),
            Some(9000),
            way(9000, StopKind::Top),
            way(9000, StopKind::Top),
        );
        assert!(decide(&p).is_empty());
        // Loopback: the largest IP packet, below lo's 65536.
        let lo = Pair {
            expect: 65_535,
            ..pair(
                Some(65_536),
                Some(65_536),
                way(65_535, StopKind::Top),
                way(65_535, StopKind::Top),
            )
        };
        assert!(decide(&lo).is_empty());
    }

    #[test]
    fn both_nics_below_an_expect_above_them_are_both_named() {
        let p = Pair {
            expect: 9216,
            ..pair(
                Some(9000),
                Some(4000),
                way(4000, StopKind::Silent),
                way(4000, StopKind::Top),
            )
        };
        let d = decide(&p);
        let got: Vec<(FaultClass, Location)> =
            d.iter().map(|d| (d.class(), d.at.clone())).collect();
        assert_eq!(
            got,
            vec![
                (FaultClass::NicMtu, node(N3)),
                (FaultClass::NicMtu, node(N1))
            ]
        );
        assert_eq!(
            d[0].fault,
            Fault::NicMtu {
                iface: Some("net1".into()),
                nic_mtu: 4000
            }
        );
    }

    /// A one-way drop names its direction, whichever end runs the check: n3's egress
    /// dropping frames above 1500 (or n1's ingress: one pair cannot tell) is the drop
    /// from n3 to n1, never "this host" from n1 (the near end) nor n3 for being far.
    #[test]
    fn a_one_way_drop_names_its_direction_not_an_end() {
        use StopKind::{Silent, Top};
        let want = Fault::OneWayDrop {
            from: ip(N3),
            to: ip(N1),
            nic_mtu: 9000,
        };
        let from_n1 = pair(Some(9000), Some(9000), way(9000, Top), way(1500, Silent));
        let from_n3 = back(Some(9000), Some(9000), way(1500, Silent), way(9000, Top));
        for (what, p) in [("from n1", from_n1), ("from n3", from_n3)] {
            let d = decide(&p);
            assert_eq!(d.len(), 1, "{what}: {d:?}");
            assert_eq!(d[0].fault, want, "{what}");
            assert_eq!(d[0].at, seg(), "{what}");
            assert_eq!((d[0].mtu, d[0].expect), (1500, 9000), "{what}");
        }
    }
}
