//! Configuring links, addresses and routes through rtnetlink (what `ip link add`,
//! `ip link set`, `ip addr add` and `ip route add|replace` do), with the maintained
//! `netlink-packet-route` message types over a blocking `netlink-sys` socket. Every
//! call acts in the calling thread's network namespace: run it inside
//! [`crate::netns::run_in`] to configure a namespace.
use std::io;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, BorrowedFd};

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_ACK, NLM_F_CREATE, NLM_F_DUMP, NLM_F_EXCL,
    NLM_F_REPLACE, NLM_F_REQUEST,
};
use netlink_packet_route::address::{AddressAttribute, AddressHeaderFlags, AddressMessage};
use netlink_packet_route::link::{
    BridgeStpState, InfoBridge, InfoData, InfoKind, InfoVeth, LinkAttribute, LinkFlags, LinkInfo,
    LinkMessage,
};
use netlink_packet_route::neighbour::{
    NeighbourAddress, NeighbourAttribute, NeighbourFlags, NeighbourMessage, NeighbourState,
};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteMetric, RouteProtocol,
    RouteScope, RouteType,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};

/// How long the kernel may take to answer one request.
const REPLY_TIMEOUT_S: libc::time_t = 5;

/// Sends `msg` with `flags` (plus REQUEST|ACK) and returns the messages of the reply,
/// up to the kernel's acknowledgement. An error reply is the kernel's errno.
fn request(msg: RouteNetlinkMessage, flags: u16) -> io::Result<Vec<RouteNetlinkMessage>> {
    let mut sock = Socket::new(NETLINK_ROUTE)?;
    sock.bind_auto()?;
    sock.connect(&SocketAddr::new(0, 0))?;
    set_timeout(&sock);
    let mut header = NetlinkHeader::default();
    header.flags = NLM_F_REQUEST | NLM_F_ACK | flags;
    header.sequence_number = 1;
    let mut nl = NetlinkMessage::new(header, NetlinkPayload::from(msg));
    nl.finalize();
    let mut buf = vec![0u8; nl.buffer_len()];
    nl.serialize(&mut buf);
    sock.send(&buf, 0)?;
    let mut out = Vec::new();
    loop {
        let (data, _) = sock.recv_from_full()?;
        if data.is_empty() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let mut off = 0;
        while off < data.len() {
            let reply = NetlinkMessage::<RouteNetlinkMessage>::deserialize(&data[off..])
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e.to_string()))?;
            let len = reply.header.length as usize;
            if reply.header.sequence_number == 1 {
                match reply.payload {
                    NetlinkPayload::Error(e) if e.code.is_none() => return Ok(out),
                    NetlinkPayload::Error(e) => return Err(e.to_io()),
                    NetlinkPayload::Done(_) => return Ok(out),
                    NetlinkPayload::InnerMessage(m) => out.push(m),
                    _ => {}
                }
            }
            if len == 0 {
                break;
            }
            off += (len + 3) & !3;
        }
    }
}

/// A receive timeout, so a kernel that never answers cannot hang the caller.
fn set_timeout(sock: &Socket) {
    let tv = libc::timeval {
        tv_sec: REPLY_TIMEOUT_S,
        tv_usec: 0,
    };
    // SAFETY: `tv` is a valid timeval for the length passed; failure only means no
    // timeout, so the result is ignored.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&raw const tv).cast(),
            size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
}

fn named(name: &str) -> LinkMessage {
    let mut m = LinkMessage::default();
    m.attributes.push(LinkAttribute::IfName(name.to_string()));
    m
}

/// The index of interface `name`.
pub fn link_index(name: &str) -> io::Result<u32> {
    Ok(get_link(name)?.header.index)
}

fn get_link(name: &str) -> io::Result<LinkMessage> {
    let reply = request(RouteNetlinkMessage::GetLink(named(name)), 0)?;
    reply
        .into_iter()
        .find_map(|m| match m {
            RouteNetlinkMessage::NewLink(l) => Some(l),
            _ => None,
        })
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ENODEV))
}

/// The MTU of interface `name` as the kernel reports it now.
pub fn link_mtu(name: &str) -> io::Result<u32> {
    get_link(name)?
        .attributes
        .iter()
        .find_map(|a| match a {
            LinkAttribute::Mtu(m) => Some(*m),
            _ => None,
        })
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "link without MTU"))
}

fn new_link(m: LinkMessage) -> io::Result<()> {
    request(RouteNetlinkMessage::NewLink(m), NLM_F_CREATE | NLM_F_EXCL).map(drop)
}

/// `ip link add NAME type veth peer name PEER [netns PEER_NS]`: the peer is created
/// directly in the namespace `peer_ns` refers to (an open `/run/netns/…` file).
pub fn add_veth(name: &str, peer: &str, peer_ns: Option<BorrowedFd<'_>>) -> io::Result<()> {
    let mut p = named(peer);
    if let Some(fd) = peer_ns {
        p.attributes.push(LinkAttribute::NetNsFd(fd.as_raw_fd()));
    }
    let mut m = named(name);
    m.attributes.push(LinkAttribute::LinkInfo(vec![
        LinkInfo::Kind(InfoKind::Veth),
        LinkInfo::Data(InfoData::Veth(InfoVeth::Peer(p))),
    ]));
    new_link(m)
}

/// `ip link add NAME type bridge stp_state 0`.
pub fn add_bridge(name: &str) -> io::Result<()> {
    let mut m = named(name);
    m.attributes.push(LinkAttribute::LinkInfo(vec![
        LinkInfo::Kind(InfoKind::Bridge),
        LinkInfo::Data(InfoData::Bridge(vec![InfoBridge::StpState(
            BridgeStpState::Disabled,
        )])),
    ]));
    new_link(m)
}

/// What [`set_link`] changes; `None` leaves a property as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkChange<'a> {
    pub mtu: Option<u32>,
    /// `ip link set NAME master BRIDGE`.
    pub master: Option<&'a str>,
    /// `ip link set NAME up` (true) or `down` (false).
    pub up: Option<bool>,
}

/// `ip link set NAME [mtu M] [master B] [up|down]`.
pub fn set_link(name: &str, change: LinkChange<'_>) -> io::Result<()> {
    let mut m = LinkMessage::default();
    m.header.index = link_index(name)?;
    if let Some(mtu) = change.mtu {
        m.attributes.push(LinkAttribute::Mtu(mtu));
    }
    if let Some(master) = change.master {
        m.attributes
            .push(LinkAttribute::Controller(link_index(master)?));
    }
    if let Some(up) = change.up {
        m.header.change_mask = LinkFlags::Up;
        if up {
            m.header.flags = LinkFlags::Up;
        }
    }
    request(RouteNetlinkMessage::SetLink(m), 0).map(drop)
}

/// `ip addr add ADDR/PREFIX dev NAME [nodad]` (no duplicate address detection: the
/// address is usable at once).
pub fn add_address(name: &str, addr: IpAddr, prefix: u8, nodad: bool) -> io::Result<()> {
    let mut m = AddressMessage::default();
    m.header.family = family(addr);
    m.header.prefix_len = prefix;
    m.header.index = link_index(name)?;
    if nodad {
        m.header.flags = AddressHeaderFlags::Nodad;
    }
    m.attributes.push(AddressAttribute::Local(addr));
    m.attributes.push(AddressAttribute::Address(addr));
    request(
        RouteNetlinkMessage::NewAddress(m),
        NLM_F_CREATE | NLM_F_EXCL,
    )
    .map(drop)
}

/// `ip neigh add proxy ADDR dev NAME`: with `proxy_arp` / `proxy_ndp` on NAME, the
/// kernel answers ARP / neighbour solicitations for ADDR on it (a proxy-ARP router).
pub fn add_neigh_proxy(name: &str, addr: IpAddr) -> io::Result<()> {
    let mut m = NeighbourMessage::default();
    m.header.family = family(addr);
    m.header.ifindex = link_index(name)?;
    m.header.flags = NeighbourFlags::Proxy;
    m.header.state = NeighbourState::Permanent;
    m.attributes
        .push(NeighbourAttribute::Destination(match addr {
            IpAddr::V4(a) => NeighbourAddress::Inet(a),
            IpAddr::V6(a) => NeighbourAddress::Inet6(a),
        }));
    request(
        RouteNetlinkMessage::NewNeighbour(m),
        NLM_F_CREATE | NLM_F_EXCL,
    )
    .map(drop)
}

/// A route for [`add_route`]: `ip route add|replace DEST/PREFIX [via GW] [dev DEV]
/// [metric N] [mtu M]` in the main table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSpec<'a> {
    pub dest: IpAddr,
    pub prefix: u8,
    pub via: Option<IpAddr>,
    pub dev: Option<&'a str>,
    pub metric: Option<u32>,
    pub mtu: Option<u32>,
}

/// Adds `r` (fails if it exists), or with `replace` adds or rewrites it.
pub fn add_route(r: &RouteSpec<'_>, replace: bool) -> io::Result<()> {
    let mut m = RouteMessage::default();
    m.header.address_family = family(r.dest);
    m.header.destination_prefix_length = r.prefix;
    m.header.table = RouteHeader::RT_TABLE_MAIN;
    m.header.protocol = RouteProtocol::Boot;
    m.header.kind = RouteType::Unicast;
    // As iproute2: a route through a gateway has universe scope, a direct one link.
    m.header.scope = if r.via.is_some() {
        RouteScope::Universe
    } else {
        RouteScope::Link
    };
    m.attributes
        .push(RouteAttribute::Destination(route_addr(r.dest)));
    if let Some(gw) = r.via {
        m.attributes.push(RouteAttribute::Gateway(route_addr(gw)));
    }
    if let Some(dev) = r.dev {
        m.attributes.push(RouteAttribute::Oif(link_index(dev)?));
    }
    if let Some(metric) = r.metric {
        m.attributes.push(RouteAttribute::Priority(metric));
    }
    if let Some(mtu) = r.mtu {
        m.attributes
            .push(RouteAttribute::Metrics(vec![RouteMetric::Mtu(mtu)]));
    }
    let flags = if replace {
        NLM_F_CREATE | NLM_F_REPLACE
    } else {
        NLM_F_CREATE | NLM_F_EXCL
    };
    request(RouteNetlinkMessage::NewRoute(m), flags).map(drop)
}

/// The MTU metric of the main-table route to exactly `dest/prefix` (what `ip route`
/// shows as `mtu N`): `Ok(None)` when the route has none, `ENOENT` when there is no
/// such route.
pub fn route_mtu(dest: IpAddr, prefix: u8) -> io::Result<Option<u32>> {
    let mut m = RouteMessage::default();
    m.header.address_family = family(dest);
    let routes = request(RouteNetlinkMessage::GetRoute(m), NLM_F_DUMP)?;
    let want = route_addr(dest);
    routes
        .into_iter()
        .filter_map(|r| match r {
            RouteNetlinkMessage::NewRoute(r) => Some(r),
            _ => None,
        })
        .find(|r| {
            r.header.destination_prefix_length == prefix
                && r.header.table == RouteHeader::RT_TABLE_MAIN
                && r.attributes
                    .contains(&RouteAttribute::Destination(want.clone()))
        })
        .map(|r| {
            r.attributes.iter().find_map(|a| match a {
                RouteAttribute::Metrics(ms) => ms.iter().find_map(|m| match m {
                    RouteMetric::Mtu(v) => Some(*v),
                    _ => None,
                }),
                _ => None,
            })
        })
        .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))
}

fn family(a: IpAddr) -> AddressFamily {
    match a {
        IpAddr::V4(_) => AddressFamily::Inet,
        IpAddr::V6(_) => AddressFamily::Inet6,
    }
}

fn route_addr(a: IpAddr) -> RouteAddress {
    match a {
        IpAddr::V4(v) => RouteAddress::Inet(v),
        IpAddr::V6(v) => RouteAddress::Inet6(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_found_and_unknown_links_are_enodev() {
        assert!(link_index("lo").unwrap() > 0);
        assert!(link_mtu("lo").unwrap() >= 68);
        let err = link_index("mtuperf-none0").unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENODEV), "{err}");
    }

    /// Builds a veth pair with addresses and a route with an MTU in a fresh namespace
    /// and reads the kernel's view back with iproute2-independent means.
    #[test]
    fn configures_links_addresses_and_routes_in_a_namespace() {
        use crate::netns;
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipping: needs root");
            return;
        }
        let name = format!("mtrtnl-{}", std::process::id());
        netns::create(&name).unwrap();
        let res = netns::run_in(&name, || -> io::Result<String> {
            add_veth("va", "vb", None)?;
            add_bridge("br9")?;
            let mtu = |m| LinkChange {
                mtu: Some(m),
                up: Some(true),
                ..LinkChange::default()
            };
            set_link("va", mtu(9000))?;
            set_link("vb", mtu(9000))?;
            set_link(
                "vb",
                LinkChange {
                    master: Some("br9"),
                    ..LinkChange::default()
                },
            )?;
            add_address("va", "198.18.99.1".parse().unwrap(), 24, false)?;
            add_address("va", "fd6d:7475:0:99::1".parse().unwrap(), 64, true)?;
            // Added twice: the kernel says it exists.
            let again = add_address("va", "198.18.99.1".parse().unwrap(), 24, false);
            assert_eq!(again.unwrap_err().raw_os_error(), Some(libc::EEXIST));
            add_route(
                &RouteSpec {
                    dest: "198.18.98.0".parse().unwrap(),
                    prefix: 24,
                    via: None,
                    dev: Some("va"),
                    metric: Some(5),
                    mtu: Some(1500),
                },
                true,
            )?;
            assert_eq!(link_mtu("va")?, 9000);
            let master = get_link("vb")?.attributes.iter().find_map(|a| match a {
                LinkAttribute::Controller(i) => Some(*i),
                _ => None,
            });
            assert_eq!(master, Some(link_index("br9")?));
            let r = crate::route::route_to("198.18.98.5".parse().unwrap())
                .map_err(|e| io::Error::other(e.to_string()))?;
            let mtu = route_mtu("198.18.98.0".parse().unwrap(), 24)?;
            let v6 = route_mtu("fd6d:7475:0:99::".parse().unwrap(), 64)?;
            Ok(format!("{} {mtu:?} {v6:?}", r.iface))
        })
        .unwrap();
        netns::delete(&name).unwrap();
        // The route's MTU metric, as the kernel answers for a destination behind it.
        // The connected v6 route has no MTU metric of its own.
        assert_eq!(res.unwrap(), "va Some(1500) None");
    }
}
