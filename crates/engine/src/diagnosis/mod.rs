//! One diagnosis model for `path`, `path --hops` and `mesh`: a fault has one class
//! (what is wrong, with its numbers: [`Fault`]) and one location (where:
//! [`Location`]), and every command that sees it names the same ones.
//!
//! The commands differ only in the evidence they hold, and all of them hand it to
//! [`pair::decide`]:
//!
//! - `path` measures both directions of one pair, with the far end's agent telling
//!   its NIC MTU; TTL-limited probes say whether a router stands between the two
//!   and past which hop larger packets vanish;
//! - `path --hops` walks the forward path hop by hop and, when an agent answers at
//!   the far end, completes the pair with its NIC MTU and the way back;
//! - `mesh` holds every pair of every network, and lets per-node and per-network
//!   findings absorb the per-pair ones (`mesh::diagnose`): a pair sees "somewhere on
//!   the segment between n1 and n3", the mesh sees "n3's switch port".
//!
//! The fix always points toward the network's expected MTU (`--expect`, else the
//! larger NIC MTU of the network), never down to the smaller one. The words are the
//! report's (`mtuperf_report::diagnosis`).

pub mod pair;

use std::net::IpAddr;

use ipnet::IpNet;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where a fault is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Location {
    /// A node, by its address on the network: its NIC, its route, its switch port, a
    /// filter on it (the class says which).
    Node {
        /// The node's address on the network.
        addr: IpAddr,
    },
    /// The L2 segment between two nodes, with no router between them (addresses in
    /// order): one pair cannot tell which port or device of the segment it is.
    Segment {
        /// One end of the segment (the lower address).
        a: IpAddr,
        /// The other end (the higher address).
        b: IpAddr,
    },
    /// A router, by the address it answered from (None: a router stands in the way
    /// but none answered).
    Router {
        /// The address the router answered from (null: none answered).
        addr: Option<IpAddr>,
    },
    /// Every pair of a network: its switch, its VLAN, a device all of them cross.
    Network {
        /// The network, as a CIDR ("192.168.1.0/24").
        #[schemars(with = "String")]
        cidr: IpNet,
    },
}

impl Location {
    /// The segment between `x` and `y`, whichever order they come in.
    pub fn segment(x: IpAddr, y: IpAddr) -> Location {
        Location::Segment {
            a: x.min(y),
            b: x.max(y),
        }
    }

    /// Whether `addr` is this location or one end of it.
    pub fn touches(&self, addr: IpAddr) -> bool {
        match self {
            Location::Node { addr: a } => *a == addr,
            Location::Segment { a, b } => *a == addr || *b == addr,
            Location::Router { addr: a } => *a == Some(addr),
            Location::Network { cidr } => cidr.contains(&addr),
        }
    }
}

/// What is wrong, with the numbers of its class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "class", rename_all = "snake_case")]
pub enum Fault {
    /// The node's NIC (`iface`, when known) is at `nic_mtu`, below the expected MTU.
    NicMtu {
        /// The NIC, when known.
        iface: Option<String>,
        /// The NIC's MTU.
        nic_mtu: u32,
    },
    /// The node's own route toward its peer refuses larger packets (EMSGSIZE from its
    /// route, e.g. `ip route … mtu`) while its NIC says `nic_mtu`.
    RouteMtu {
        /// The node's NIC MTU.
        nic_mtu: u32,
    },
    /// Both ways stop silently while the NICs say `nic_mtu` (the smaller of them): an
    /// L2 device passes less. At a node: its switch port (or a bond, VLAN or bridge in
    /// front of it); on a segment: somewhere between the two; on a network: its
    /// switch or VLAN.
    SwitchPort {
        /// The smaller NIC MTU of the ends.
        nic_mtu: u32,
    },
    /// Frames from `from` to `to` above the MTU vanish silently on the segment
    /// between them while the other way carries; both NICs say at least `nic_mtu`
    /// (the smaller of them). One pair cannot tell `from`'s outbound side (its switch
    /// port's ingress, a filter on it) from `to`'s inbound side (its switch port's
    /// egress, a filter on it): the mesh, which sees every direction into and out of
    /// a node, refines it to an [`Fault::InboundDrop`] or [`Fault::OutboundDrop`].
    OneWayDrop {
        /// The sender of the direction that stops (its outbound side, or the receiver's
        /// inbound side, drops the larger frames).
        from: IpAddr,
        /// The receiver of that direction.
        to: IpAddr,
        /// The smaller NIC MTU of the ends.
        nic_mtu: u32,
    },
    /// Frames into the node above the MTU vanish silently, frames out of it carry;
    /// its NIC says `nic_mtu`: its switch port's egress, or a filter on the node.
    InboundDrop {
        /// The node's NIC MTU.
        nic_mtu: u32,
    },
    /// Frames out of the node above the MTU vanish silently, frames into it carry;
    /// its NIC says `nic_mtu`: its switch port's ingress, or a filter on the node.
    OutboundDrop {
        /// The node's NIC MTU.
        nic_mtu: u32,
    },
    /// Frames above the MTU vanish silently on a segment with no router, into a node
    /// whose NIC MTU is not known (no agent answered there): its NIC, its switch port
    /// or a filter on it.
    SilentDrop,
    /// Packets above the MTU vanish past a router, with no ICMP error; `hop`: that
    /// router's distance (TTL) from the sender whose probes located it.
    BlackHole {
        /// The router's TTL distance from the sender that located it.
        hop: Option<u32>,
    },
    /// A router answers frag-needed / packet too big at the MTU (path MTU discovery
    /// works; the path carries less than expected).
    RouterMtu {
        /// The router's TTL distance from the sender that located it.
        hop: Option<u32>,
    },
}

/// The class of a fault, without its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultClass {
    NicMtu,
    RouteMtu,
    SwitchPort,
    OneWayDrop,
    InboundDrop,
    OutboundDrop,
    SilentDrop,
    BlackHole,
    RouterMtu,
}

impl Fault {
    pub fn class(&self) -> FaultClass {
        match self {
            Fault::NicMtu { .. } => FaultClass::NicMtu,
            Fault::RouteMtu { .. } => FaultClass::RouteMtu,
            Fault::SwitchPort { .. } => FaultClass::SwitchPort,
            Fault::OneWayDrop { .. } => FaultClass::OneWayDrop,
            Fault::InboundDrop { .. } => FaultClass::InboundDrop,
            Fault::OutboundDrop { .. } => FaultClass::OutboundDrop,
            Fault::SilentDrop => FaultClass::SilentDrop,
            Fault::BlackHole { .. } => FaultClass::BlackHole,
            Fault::RouterMtu { .. } => FaultClass::RouterMtu,
        }
    }
}

/// One fault: its class and numbers, where it is, the MTU it limits paths to and the
/// network's expected MTU (the fix's target).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnosis {
    #[serde(flatten)]
    pub fault: Fault,
    pub at: Location,
    /// The largest packet (read as an MTU) the fault lets through.
    pub mtu: u32,
    /// The MTU every path of the network must carry: `--expect`, else the larger NIC
    /// MTU of the network.
    pub expect: u32,
}

impl Diagnosis {
    pub fn class(&self) -> FaultClass {
        self.fault.class()
    }

    /// The same fault seen from another place: same class and location, or a finer
    /// view of it (see [`Diagnosis::refines`]).
    pub fn agrees_with(&self, other: &Diagnosis) -> bool {
        (self.class() == other.class() && self.at == other.at && self.way() == other.way())
            || self.refines(other)
            || other.refines(self)
    }

    /// The direction a one-way drop on a segment stops: (from, to).
    fn way(&self) -> Option<(IpAddr, IpAddr)> {
        match self.fault {
            Fault::OneWayDrop { from, to, .. } => Some((from, to)),
            _ => None,
        }
    }

    /// Whether this fault, at a node, is `coarse` as one pair saw it: the same class on
    /// a segment that node ends (a switch port), or the node's inbound (outbound) side
    /// where the pair saw a one-way drop into (out of) it.
    pub fn refines(&self, coarse: &Diagnosis) -> bool {
        let Location::Node { addr } = self.at else {
            return false;
        };
        if !matches!(coarse.at, Location::Segment { .. }) {
            return false;
        }
        match (&self.fault, &coarse.fault) {
            (Fault::InboundDrop { .. }, Fault::OneWayDrop { to, .. }) => *to == addr,
            (Fault::OutboundDrop { .. }, Fault::OneWayDrop { from, .. }) => *from == addr,
            _ => self.class() == coarse.class() && coarse.at.touches(addr),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_diagnosis_is_stored_as_its_class_its_numbers_and_where() {
        let d = Diagnosis {
            fault: Fault::InboundDrop { nic_mtu: 9000 },
            at: Location::Node {
                addr: ip("198.19.1.3"),
            },
            mtu: 1500,
            expect: 9000,
        };
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "class": "inbound_drop", "nic_mtu": 9000,
                "at": {"kind": "node", "addr": "198.19.1.3"},
                "mtu": 1500, "expect": 9000
            })
        );
        assert_eq!(serde_json::from_value::<Diagnosis>(v).unwrap(), d);
        let bh = Diagnosis {
            fault: Fault::BlackHole { hop: Some(1) },
            at: Location::Router { addr: None },
            ..d.clone()
        };
        let v = serde_json::to_value(&bh).unwrap();
        assert_eq!(v["class"], "black_hole");
        assert_eq!(serde_json::from_value::<Diagnosis>(v).unwrap(), bh);
        let silent = Diagnosis {
            fault: Fault::SilentDrop,
            ..d
        };
        let v = serde_json::to_value(&silent).unwrap();
        assert_eq!(serde_json::from_value::<Diagnosis>(v).unwrap(), silent);
    }

    #[test]
    fn a_node_refines_a_segment_it_ends() {
        let (n1, n3) = (ip("198.19.1.1"), ip("198.19.1.3"));
        let port = |at| Diagnosis {
            fault: Fault::SwitchPort { nic_mtu: 9000 },
            at,
            mtu: 1500,
            expect: 9000,
        };
        let seg = port(Location::segment(n3, n1));
        assert_eq!(seg.at, Location::segment(n1, n3));
        assert!(port(Location::Node { addr: n3 }).agrees_with(&seg));
        assert!(seg.agrees_with(&port(Location::Node { addr: n1 })));
        assert!(!seg.agrees_with(&port(Location::Node {
            addr: ip("198.19.1.2")
        })));
        let nic = Diagnosis {
            fault: Fault::NicMtu {
                iface: None,
                nic_mtu: 1500,
            },
            ..port(Location::Node { addr: n3 })
        };
        assert!(!nic.agrees_with(&seg), "another class");
    }

    /// A pair sees a one-way drop from n3 to n1 on their segment: n3's outbound side
    /// or n1's inbound side. The mesh's outbound drop at n3 and inbound drop at n1
    /// refine it; an inbound drop at n3 (the wrong way) or at another node does not.
    #[test]
    fn a_node_side_refines_the_one_way_drop_it_explains() {
        let (n1, n2, n3) = (ip("198.19.1.1"), ip("198.19.1.2"), ip("198.19.1.3"));
        let d = |fault, at| Diagnosis {
            fault,
            at,
            mtu: 1500,
            expect: 9000,
        };
        let pair = d(
            Fault::OneWayDrop {
                from: n3,
                to: n1,
                nic_mtu: 9000,
            },
            Location::segment(n1, n3),
        );
        let node = |addr| Location::Node { addr };
        let out_at = |a| d(Fault::OutboundDrop { nic_mtu: 9000 }, node(a));
        let in_at = |a| d(Fault::InboundDrop { nic_mtu: 9000 }, node(a));
        let cases = [
            ("n3's outbound side", out_at(n3), true),
            ("n1's inbound side", in_at(n1), true),
            ("n3's inbound side: the other way", in_at(n3), false),
            ("n1's outbound side: the other way", out_at(n1), false),
            ("a node off the segment", out_at(n2), false),
        ];
        for (what, fine, agrees) in cases {
            assert_eq!(fine.agrees_with(&pair), agrees, "{what}");
            assert_eq!(pair.agrees_with(&fine), agrees, "{what}, either order");
        }
        assert!(pair.agrees_with(&pair.clone()));
        let back = d(
            Fault::OneWayDrop {
                from: n1,
                to: n3,
                nic_mtu: 9000,
            },
            Location::segment(n1, n3),
        );
        assert!(
            !pair.agrees_with(&back),
            "the other direction of the segment"
        );
        assert!(!pair.refines(&pair), "a segment refines nothing");
    }
}
