//! The words of a diagnosis (`mtuperf_engine::diagnosis`), the one place they live:
//! `path`, `path --hops`, `mesh` (its findings and its plain answer), the comparison's
//! check and the likely cause of a stalled test all say a fault the same way. Every
//! fix points toward the network's expected MTU.

use std::net::IpAddr;

use mtuperf_engine::diagnosis::{Diagnosis, Fault, Location};
use mtuperf_proto::text::escape_control;

/// How a command names what a location holds: a node by its address ("node n3",
/// "the agent's host (198.19.1.3)"), and the network the paths run on (" on net A
/// (198.19.1.0/24)", or "").
pub struct Names<'a> {
    pub node: &'a dyn Fn(IpAddr) -> String,
    pub on: String,
}

/// A fault in words: what it is, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    pub summary: String,
    pub fix: String,
}

/// How much of a node's paths the evidence covers: one pair, or every path into (or
/// out of, or through) the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Pair,
    Every,
}

fn router(addr: Option<IpAddr>, hop: Option<u32>) -> String {
    match (addr, hop) {
        (Some(a), Some(h)) => format!("router {a} (hop {h})"),
        (Some(a), None) => format!("router {a}"),
        (None, Some(h)) => format!("the router at hop {h}"),
        (None, None) => "a router".into(),
    }
}

/// "n3's NIC on net B is at 1500 (expected 9000)": the short form of the plain
/// answer; the same facts as [`say`]'s summary.
pub fn short(d: &Diagnosis, n: &Names<'_>) -> String {
    let (mtu, e, on) = (d.mtu, d.expect, &n.on);
    match (&d.fault, &d.at) {
        (Fault::NicMtu { nic_mtu, .. }, Location::Node { addr }) => {
            format!(
                "the NIC of {}{on} is at {nic_mtu} (expected {e})",
                (n.node)(*addr)
            )
        }
        (Fault::SwitchPort { .. }, Location::Node { addr }) => format!(
            "the switch port in front of {}{on} passes {mtu} (expected {e})",
            (n.node)(*addr)
        ),
        (Fault::SwitchPort { .. }, Location::Network { .. }) => {
            format!("the switch{on} passes {mtu} (expected {e})")
        }
        (Fault::OneWayDrop { from, to, .. }, _) => format!(
            "frames from {} to {}{on} above {mtu} are dropped (expected {e})",
            (n.node)(*from),
            (n.node)(*to)
        ),
        (Fault::InboundDrop { .. }, Location::Node { addr }) => format!(
            "frames into {}{on} above {mtu} are dropped (expected {e})",
            (n.node)(*addr)
        ),
        (Fault::OutboundDrop { .. }, Location::Node { addr }) => format!(
            "frames out of {}{on} above {mtu} are dropped (expected {e})",
            (n.node)(*addr)
        ),
        (Fault::BlackHole { hop }, Location::Router { addr }) => format!(
            "packets above {mtu} vanish past {}{on} (expected {e})",
            router(*addr, *hop)
        ),
        (Fault::RouterMtu { hop }, Location::Router { addr }) => format!(
            "{} limits paths{on} to {mtu} (expected {e})",
            router(*addr, *hop)
        ),
        _ => format!("{}{on}: {mtu} (expected {e})", place(&d.at, n)),
    }
}

/// Where a location is, in words.
pub fn place(at: &Location, n: &Names<'_>) -> String {
    match at {
        Location::Node { addr } => (n.node)(*addr),
        Location::Segment { a, b } => format!("between {} and {}", (n.node)(*a), (n.node)(*b)),
        Location::Router { addr } => router(*addr, None),
        Location::Network { cidr } => format!("every pair of {cidr}"),
    }
}

/// The fault in words, with its fix.
pub fn say(d: &Diagnosis, n: &Names<'_>, scope: Scope) -> Said {
    let (mtu, e, on) = (d.mtu, d.expect, &n.on);
    match (&d.fault, &d.at) {
        (Fault::NicMtu { iface, nic_mtu }, Location::Node { addr }) => {
            let x = (n.node)(*addr);
            let dev = iface
                .as_deref()
                .map_or_else(|| "?".into(), |i| escape_control(i).into_owned());
            Said {
                summary: format!(
                    "NIC {dev} of {x}{on} is at MTU {nic_mtu}, below the network's {e}: paths through it carry {mtu}"
                ),
                fix: format!(
                    "ip link set dev {dev} mtu {e} on {x}, and make it persistent in its network configuration"
                ),
            }
        }
        (Fault::RouteMtu { nic_mtu }, Location::Node { addr }) => {
            let x = (n.node)(*addr);
            Said {
                summary: format!(
                    "the route of {x}{on} toward its peer refuses packets above {mtu} while its NIC says {nic_mtu}"
                ),
                fix: format!(
                    "on {x}, `ip route get` toward the peer shows the route's mtu: raise it to {e} or remove it"
                ),
            }
        }
        (Fault::SwitchPort { nic_mtu }, at) => switch_port(at, n, *nic_mtu, mtu, e),
        (Fault::OneWayDrop { from, to, nic_mtu }, _) => {
            let (f, t) = ((n.node)(*from), (n.node)(*to));
            Said {
                summary: format!(
                    "frames from {f} to {t}{on} above {mtu} vanish silently while the other way carries {e}, and both NICs say {nic_mtu}: the outbound side of {f} (its switch port's ingress, or a filter on it) or the inbound side of {t} (its switch port's egress, or a filter on it) drops them; one pair cannot tell which"
                ),
                fix: format!(
                    "set the switch ports in front of {f} and of {t} to MTU {e} or more, and check the filters on both (nft list ruleset, iptables -S, tc filter show) for a size limit; mtuperf mesh over three nodes or more names the side"
                ),
            }
        }
        (Fault::InboundDrop { nic_mtu }, Location::Node { addr }) => one_way(
            &(n.node)(*addr),
            on,
            Way::Inbound,
            *nic_mtu,
            (mtu, e),
            scope,
        ),
        (Fault::OutboundDrop { nic_mtu }, Location::Node { addr }) => one_way(
            &(n.node)(*addr),
            on,
            Way::Outbound,
            *nic_mtu,
            (mtu, e),
            scope,
        ),
        (Fault::SilentDrop, at) => {
            let x = place(at, n);
            Said {
                summary: format!(
                    "frames into {x}{on} above {mtu} vanish with no ICMP error and no router on the way: its NIC, its switch port or a filter on it (no agent answered there to tell which)"
                ),
                fix: format!(
                    "start an agent on {x} (mtuperf serve) and run mtuperf path toward it: its NIC's MTU and the way back name the cause"
                ),
            }
        }
        (Fault::BlackHole { hop } | Fault::RouterMtu { hop }, Location::Router { addr }) => {
            routed(&d.fault, &router(*addr, *hop), on, mtu, e)
        }
        (_, at) => Said {
            summary: format!("{}{on}: the paths carry {mtu}, not {e}", place(at, n)),
            fix: format!("mtuperf path --hops toward {}", place(at, n)),
        },
    }
}

/// A black hole past router `r`, or `r` answering frag-needed.
fn routed(f: &Fault, r: &str, on: &str, mtu: u32, e: u32) -> Said {
    if matches!(f, Fault::BlackHole { .. }) {
        return Said {
            summary: format!(
                "black hole{on}: packets above {mtu} vanish past {r} with no ICMP error (the link beyond it passes {mtu}, and its frag-needed errors are dropped)"
            ),
            fix: format!(
                "raise the MTU of the link past {r} to {e}, or let its ICMP frag-needed through (meanwhile net.ipv4.tcp_mtu_probing=1 on the hosts)"
            ),
        };
    }
    Said {
        summary: format!(
            "{r}{on} answers frag-needed at {mtu}: the path carries {mtu}, not {e} (path MTU discovery works)"
        ),
        fix: format!("raise the MTU of {r}'s link toward the far end to {e}"),
    }
}

fn switch_port(at: &Location, n: &Names<'_>, nic: u32, mtu: u32, e: u32) -> Said {
    let on = &n.on;
    match at {
        Location::Node { addr } => {
            let x = (n.node)(*addr);
            Said {
                summary: format!(
                    "every path through {x}{on} stops above {mtu} in both directions, silently, while its NIC says {nic}: its switch port (or a bond, VLAN or bridge in front of it) is at {mtu}"
                ),
                fix: format!(
                    "set the switch port in front of {x} (and any bond, VLAN or bridge on the way) to MTU {e} or more"
                ),
            }
        }
        Location::Network { cidr } => Said {
            summary: format!(
                "every pair{on} stops above {mtu}, silently, while the NICs say {nic}: the switch or VLAN carrying {cidr}, not one node"
            ),
            fix: format!("set the switch (or VLAN, or any L2 device) carrying {cidr} to MTU {e} or more"),
        },
        _ => {
            let x = place(at, n);
            Said {
                summary: format!(
                    "both directions {x}{on} stop above {mtu}, silently, while both NICs say {nic}: an L2 device between them (a switch port, a bridge, a VLAN) passes at most {mtu}"
                ),
                fix: format!(
                    "set the switch ports (and any bridge or VLAN) {x} to MTU {e} or more; mtuperf mesh over more nodes names the port"
                ),
            }
        }
    }
}

/// Which way frames are dropped at a node.
#[derive(Debug, Clone, Copy)]
enum Way {
    Inbound,
    Outbound,
}

impl Way {
    /// ("inbound", "into", "out of", "egress"): the drop, the way it drops, the way
    /// back, and the side of the node's switch port that would do it.
    fn words(self) -> (&'static str, &'static str, &'static str, &'static str) {
        match self {
            Way::Inbound => ("inbound", "into", "out of", "egress"),
            Way::Outbound => ("outbound", "out of", "into", "ingress"),
        }
    }
}

/// An inbound (or outbound) drop at node `x`.
fn one_way(x: &str, on: &str, way: Way, nic: u32, (mtu, e): (u32, u32), scope: Scope) -> Said {
    let (what, way, back, side) = way.words();
    let summary = match scope {
        Scope::Every => format!(
            "every path {way} {x}{on} stops at {mtu} silently while every path {back} it carries {e}: its switch port's {side}, or a filter on {x}, drops {what} frames above {mtu} (its NIC says {nic})"
        ),
        Scope::Pair => format!(
            "frames {way} {x}{on} above {mtu} vanish silently while the other way carries {e}, and its NIC says {nic}: its switch port's {side}, or a filter on {x}, drops {what} frames above {mtu}"
        ),
    };
    Said {
        summary,
        fix: format!(
            "set the switch port in front of {x} to MTU {e} or more, and check the filters on {x} (nft list ruleset, iptables -S, tc filter show) for a size limit"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_engine::diagnosis::Fault;

    fn names(f: &dyn Fn(IpAddr) -> String) -> Names<'_> {
        Names {
            node: f,
            on: " on net A".into(),
        }
    }

    fn d(fault: Fault, at: Location) -> Diagnosis {
        Diagnosis {
            fault,
            at,
            mtu: 1500,
            expect: 9000,
        }
    }

    fn n3() -> Location {
        Location::Node {
            addr: "198.19.1.3".parse().unwrap(),
        }
    }

    /// Every fix points toward the expected MTU, never "set this host to 1500".
    #[test]
    fn every_fix_points_toward_the_expected_mtu() {
        let label = |a: IpAddr| format!("node n{}", a.to_string().rsplit('.').next().unwrap());
        let n = names(&label);
        let all = [
            d(
                Fault::NicMtu {
                    iface: Some("net1".into()),
                    nic_mtu: 1500,
                },
                n3(),
            ),
            d(Fault::RouteMtu { nic_mtu: 9000 }, n3()),
            d(Fault::SwitchPort { nic_mtu: 9000 }, n3()),
            d(
                Fault::SwitchPort { nic_mtu: 9000 },
                Location::segment("198.19.1.1".parse().unwrap(), "198.19.1.3".parse().unwrap()),
            ),
            d(
                Fault::SwitchPort { nic_mtu: 9000 },
                Location::Network {
                    cidr: "198.19.1.0/24".parse().unwrap(),
                },
            ),
            d(Fault::InboundDrop { nic_mtu: 9000 }, n3()),
            d(Fault::OutboundDrop { nic_mtu: 9000 }, n3()),
            d(
                Fault::OneWayDrop {
                    from: "198.19.1.3".parse().unwrap(),
                    to: "198.19.1.1".parse().unwrap(),
                    nic_mtu: 9000,
                },
                Location::segment("198.19.1.1".parse().unwrap(), "198.19.1.3".parse().unwrap()),
            ),
            d(Fault::SilentDrop, n3()),
            d(
                Fault::BlackHole { hop: Some(1) },
                Location::Router {
                    addr: Some("198.19.1.103".parse().unwrap()),
                },
            ),
            d(
                Fault::RouterMtu { hop: None },
                Location::Router { addr: None },
            ),
        ];
        for x in &all {
            let s = say(x, &n, Scope::Pair);
            assert!(!s.fix.contains("1500"), "{x:?}: {}", s.fix);
            assert!(
                s.fix.contains("9000") || x.fault == Fault::SilentDrop,
                "{x:?}: {}",
                s.fix
            );
            assert!(s.summary.contains("1500"), "{x:?}: {}", s.summary);
        }
        let nic = say(&all[0], &n, Scope::Pair);
        assert_eq!(
            nic.fix,
            "ip link set dev net1 mtu 9000 on node n3, and make it persistent in its network configuration"
        );
        assert_eq!(
            short(&all[0], &n),
            "the NIC of node n3 on net A is at 1500 (expected 9000)"
        );
        let one_way = say(&all[7], &n, Scope::Pair);
        assert!(
            one_way.summary.starts_with(
                "frames from node n3 to node n1 on net A above 1500 vanish silently while the other way carries 9000, and both NICs say 9000: the outbound side of node n3 (its switch port's ingress, or a filter on it) or the inbound side of node n1 (its switch port's egress, or a filter on it) drops them"
            ),
            "neither end alone: {}",
            one_way.summary
        );
        assert_eq!(
            short(&all[7], &n),
            "frames from node n3 to node n1 on net A above 1500 are dropped (expected 9000)"
        );
        let inbound = say(&all[5], &n, Scope::Every);
        assert!(
            inbound.summary.starts_with(
                "every path into node n3 on net A stops at 1500 silently while every path out of it carries 9000: its switch port's egress, or a filter on node n3, drops inbound frames above 1500"
            ),
            "{}",
            inbound.summary
        );
    }
}
