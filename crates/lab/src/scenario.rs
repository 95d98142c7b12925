//! The lab's topology as data: which hosts, links, addresses and routes each scenario
//! needs. Nothing here runs a command; `build.rs` turns a [`Topology`] into commands.
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::LabError;

/// One test network shape. Every scenario has its own server host and its own
/// interface on the shared client host, so runs from the client can be compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
}

impl Scenario {
    pub const ALL: [Scenario; 5] = [
        Scenario::Std,
        Scenario::Jumbo,
        Scenario::Routed,
        Scenario::Blackhole,
        Scenario::Mismatch,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Std => "std",
            Scenario::Jumbo => "jumbo",
            Scenario::Routed => "routed",
            Scenario::Blackhole => "blackhole",
            Scenario::Mismatch => "mismatch",
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
            _ => None,
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
            .find(|sc| sc.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| LabError::Invalid {
                what: "scenario".into(),
                value: s.into(),
                allowed: "std, jumbo, routed, blackhole, mismatch".into(),
            })
    }
}

/// What a host does in the lab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Client,
    Router,
    Server,
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
            if let Some(router) = s.router_host() {
                let far = n + 10;
                t.hosts.push((router.into(), Role::Router));
                t.links.push(Link {
                    scenario: s,
                    a: iface(CLIENT, &cif, 9000, n, 1),
                    b: iface(router, "eth0", 9000, n, 254),
                });
                t.links.push(Link {
                    scenario: s,
                    a: iface(router, "eth1", 1500, far, 254),
                    b: iface(server, "eth0", 1500, far, 2),
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
