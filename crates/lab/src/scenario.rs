//! The lab's topology as data: which hosts, links, addresses and routes each scenario
//! needs. Nothing here runs a command; `build.rs` turns a [`Topology`] into commands.
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::LabError;

/// One test network shape. Every scenario has its own server host and its own
/// interface on the shared client host, so runs from the client can be compared.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scenario {
    /// client ↔ server, one link at MTU 1500.
    Std,
    /// client ↔ server, one link at MTU 9000.
    Jumbo,
    /// client —9000— router —1500— server; the router sends ICMP frag-needed / PTB.
    Routed,
    /// As routed, but the router drops its frag-needed / packet-too-big errors.
    Blackhole,
    /// client at MTU 9000, server at 1500 on the same link: no router, no ICMP.
    Mismatch,
    /// client and server both at MTU 9000 on one segment through a bridge (an L2
    /// switch) whose port toward the server is at 1500: no router, no ICMP, both NICs
    /// say 9000. Reached over IPv4 and IPv6 like every scenario.
    Switchport,
    /// client —9000— router —9000— server, but the router's route back to the client
    /// has MTU 1500: forward carries 9000, the return path 1500 (the router answers
    /// frag-needed / packet too big for the return direction only).
    Asym,
    /// N nodes, K networks, one bridge per network, faults: see the `cluster` module.
    /// Not in [`Scenario::ALL`]: it is built alone, from `LabOptions::cluster`.
    Cluster,
}

impl Scenario {
    pub const ALL: [Scenario; 7] = [
        Scenario::Std,
        Scenario::Jumbo,
        Scenario::Routed,
        Scenario::Blackhole,
        Scenario::Mismatch,
        Scenario::Switchport,
        Scenario::Asym,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Std => "std",
            Scenario::Jumbo => "jumbo",
            Scenario::Routed => "routed",
            Scenario::Blackhole => "blackhole",
            Scenario::Mismatch => "mismatch",
            Scenario::Switchport => "switchport",
            Scenario::Asym => "asym",
            Scenario::Cluster => "cluster",
        }
    }

    /// Subnet number: 198.18.N.0/24 and fd6d:7475:0:N::/64 on the client's link.
    fn net(self) -> u8 {
        match self {
            Scenario::Std => 1,
            Scenario::Jumbo => 2,
            Scenario::Routed => 3,
            Scenario::Blackhole => 4,
            Scenario::Mismatch => 5,
            Scenario::Switchport => 6,
            Scenario::Asym => 7,
            Scenario::Cluster => 0,
        }
    }

    /// The host that runs the agent: the address users give to stream/rr/path.
    pub fn server_host(self) -> &'static str {
        self.name()
    }

    pub fn router_host(self) -> Option<&'static str> {
        match self {
            Scenario::Routed => Some("routed-router"),
            Scenario::Blackhole => Some("blackhole-router"),
            Scenario::Asym => Some("asym-router"),
            _ => None,
        }
    }

    /// The L2 switch (a Linux bridge) between client and server, if any.
    pub fn switch_host(self) -> Option<&'static str> {
        (self == Scenario::Switchport).then_some("switchport-switch")
    }

    /// Routes inside a host rewritten with an MTU: (host, prefix, device, metric, MTU).
    /// The asym router reaches the client's subnet through a route of MTU 1500 (the
    /// metric is the kernel's for the connected route, so `replace` rewrites it).
    pub fn mtu_routes(self) -> Vec<(&'static str, String, &'static str, u32, u32)> {
        match self {
            Scenario::Asym => vec![
                (
                    "asym-router",
                    format!("{}/24", v4(self.net(), 0)),
                    "eth0",
                    0,
                    1500,
                ),
                (
                    "asym-router",
                    format!("{}/64", v6(self.net(), 0)),
                    "eth0",
                    256,
                    1500,
                ),
            ],
            _ => Vec::new(),
        }
    }

    /// The client's interface for this scenario (`std0`, `jumbo0`, ...).
    pub fn client_ifname(self) -> String {
        format!("{}0", self.name())
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scenario {
    type Err = LabError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scenario::ALL
            .into_iter()
            .chain([Scenario::Cluster])
            .find(|sc| sc.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| LabError::Invalid {
                what: "scenario".into(),
                value: s.into(),
                allowed: "std, jumbo, routed, blackhole, mismatch, switchport, asym, cluster"
                    .into(),
            })
    }
}

/// What a host does in the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Client,
    Router,
    /// A bridge (L2 switch): its interfaces are bridge ports without addresses.
    Switch,
    Server,
    /// A cluster node: runs an agent, tests toward the other nodes.
    Node,
}

/// One end of a veth pair, with its addresses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Iface {
    pub host: String,
    pub name: String,
    pub mtu: u32,
    pub v4: Ipv4Addr,
    pub v4_prefix: u8,
    pub v6: Ipv6Addr,
    pub v6_prefix: u8,
}

/// A veth pair; `a` is the end nearer the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    pub scenario: Scenario,
    pub a: Iface,
    pub b: Iface,
}

/// A static route inside one host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub host: String,
    /// Destination prefix, e.g. "198.18.13.0/24".
    pub dest: String,
    pub via: IpAddr,
}

/// Hosts (with roles), links and routes of a set of scenarios.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Topology {
    pub hosts: Vec<(String, Role)>,
    pub links: Vec<Link>,
    pub routes: Vec<Route>,
}

pub const CLIENT: &str = "client";
/// The bridge device inside a switch host.
pub const BRIDGE: &str = "br0";
/// MTU of the switch's port toward the server in the switchport scenario.
pub const SWITCH_PORT_MTU: u32 = 1500;

fn v4(net: u8, host: u8) -> Ipv4Addr {
    Ipv4Addr::new(198, 18, net, host)
}

/// fd6d:7475:0:N::H with N and H written with the same digits as in IPv4
/// (198.18.13.254 ↔ fd6d:7475:0:13::254), so the two are easy to match by eye.
fn v6(net: u8, host: u8) -> Ipv6Addr {
    let digits = |n: u8| u16::from_str_radix(&n.to_string(), 16).unwrap_or(0);
    Ipv6Addr::new(0xfd6d, 0x7475, 0, digits(net), 0, 0, 0, digits(host))
}

fn iface(host: &str, name: &str, mtu: u32, net: u8, h: u8) -> Iface {
    Iface {
        host: host.into(),
        name: name.into(),
        mtu,
        v4: v4(net, h),
        v4_prefix: 24,
        v6: v6(net, h),
        v6_prefix: 64,
    }
}

impl Topology {
    /// The topology of the given scenarios (in the given order, one client host).
    pub fn of(scenarios: &[Scenario]) -> Topology {
        let mut t = Topology {
            hosts: vec![(CLIENT.into(), Role::Client)],
            ..Topology::default()
        };
        for &s in scenarios {
            let (n, server, cif) = (s.net(), s.server_host(), s.client_ifname());
            if let Some(switch) = s.switch_host() {
                // One segment: the bridge ports carry addresses of the client's subnet
                // in the plan (.253, .254) for the record only; `build` assigns none.
                t.hosts.push((switch.into(), Role::Switch));
                t.links.push(Link {
                    scenario: s,
                    a: iface(CLIENT, &cif, 9000, n, 1),
                    b: iface(switch, "eth0", 9000, n, 253),
                });
                t.links.push(Link {
                    scenario: s,
                    a: iface(switch, "eth1", SWITCH_PORT_MTU, n, 254),
                    b: iface(server, "eth0", 9000, n, 2),
                });
            } else if let Some(router) = s.router_host() {
                let far = n + 10;
                let far_mtu = if s == Scenario::Asym { 9000 } else { 1500 };
                t.hosts.push((router.into(), Role::Router));
                t.links.push(Link {
                    scenario: s,
                    a: iface(CLIENT, &cif, 9000, n, 1),
                    b: iface(router, "eth0", 9000, n, 254),
                });
                t.links.push(Link {
                    scenario: s,
                    a: iface(router, "eth1", far_mtu, far, 254),
                    b: iface(server, "eth0", far_mtu, far, 2),
                });
                for (host, to, gw) in [(CLIENT, far, n), (server, n, far)] {
                    t.routes.push(Route {
                        host: host.into(),
                        dest: format!("{}/24", v4(to, 0)),
                        via: v4(gw, 254).into(),
                    });
                    t.routes.push(Route {
                        host: host.into(),
                        dest: format!("{}/64", v6(to, 0)),
                        via: v6(gw, 254).into(),
                    });
                }
            } else {
                let (cm, sm) = match s {
                    Scenario::Jumbo => (9000, 9000),
                    Scenario::Mismatch => (9000, 1500),
                    _ => (1500, 1500),
                };
                t.links.push(Link {
                    scenario: s,
                    a: iface(CLIENT, &cif, cm, n, 1),
                    b: iface(server, "eth0", sm, n, 2),
                });
            }
            t.hosts.push((server.into(), Role::Server));
        }
        t
    }

    /// Every interface, in creation order.
    pub fn ifaces(&self) -> impl Iterator<Item = &Iface> {
        self.links.iter().flat_map(|l| [&l.a, &l.b])
    }
}
