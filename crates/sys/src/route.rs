//! The kernel's route to a destination, like `ip route get`, over rtnetlink.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use mtuperf_proto::host::RouteInfo;

use crate::netdev::index_to_name;
use crate::netlink::{self, attrs, push_attr, u32_at};
use crate::Error;

/// Size of `struct rtmsg`, the family header of route messages.
const RTMSG_LEN: usize = 12;
/// RTAX_MTU from linux/rtnetlink.h (libc does not export the RTAX_* metrics).
const RTAX_MTU: u16 = 2;
/// Offset of `rta_expires` in `struct rta_cacheinfo` (after clntref and lastuse).
const CACHEINFO_EXPIRES: usize = 8;

/// The route the kernel would use to reach `dst` (RTM_GETROUTE with RTA_DST): output
/// interface, preferred source, gateway, and a cached path MTU exception with its
/// remaining lifetime (what `ip route get` prints as "cache expires 587sec mtu 1400").
pub fn route_to(dst: IpAddr) -> Result<RouteInfo, Error> {
    let (family, addr): (u8, Vec<u8>) = match dst {
        IpAddr::V4(a) => (libc::AF_INET as u8, a.octets().to_vec()),
        IpAddr::V6(a) => (libc::AF_INET6 as u8, a.octets().to_vec()),
    };
    let mut req = vec![0u8; RTMSG_LEN];
    req[0] = family;
    req[1] = (addr.len() * 8) as u8; // rtm_dst_len: a host route
    push_attr(&mut req, libc::RTA_DST, &addr);
    let reply =
        netlink::request(libc::RTM_GETROUTE, &req, libc::RTM_NEWROUTE).map_err(|source| {
            Error::Netlink {
                op: "RTM_GETROUTE",
                subject: dst.to_string(),
                source,
            }
        })?;
    let parsed = parse_route(&reply, crate::cpu::clk_tck());
    let iface = parsed
        .oif
        .and_then(index_to_name)
        .ok_or(Error::NoRoute { dst })?;
    Ok(RouteInfo {
        destination: Some(dst),
        iface,
        ..parsed.info
    })
}

/// What a RTM_NEWROUTE reply says, before the interface index is turned into a name.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct ParsedRoute {
    pub oif: Option<u32>,
    pub info: RouteInfo,
}

/// Parses a RTM_NEWROUTE payload (rtmsg + attributes). `user_hz` converts
/// rta_expires, which the kernel reports in clock_t ticks (USER_HZ), to seconds.
pub(crate) fn parse_route(payload: &[u8], user_hz: u64) -> ParsedRoute {
    let mut out = ParsedRoute::default();
    let Some(rest) = payload.get(RTMSG_LEN..) else {
        return out;
    };
    for (ty, value) in attrs(rest) {
        match ty {
            libc::RTA_OIF => out.oif = u32_at(value, 0),
            libc::RTA_PREFSRC => out.info.source = ip(value),
            libc::RTA_GATEWAY => out.info.gateway = ip(value),
            libc::RTA_METRICS => {
                let mtu = attrs(value).into_iter().find(|(t, _)| *t == RTAX_MTU);
                out.info.cached_pmtu = mtu.and_then(|(_, v)| u32_at(v, 0)).filter(|&m| m > 0);
            }
            libc::RTA_CACHEINFO => {
                let expires = u32_at(value, CACHEINFO_EXPIRES).map(|v| v as i32);
                out.info.cached_expires_s = expires
                    .filter(|&e| e > 0 && user_hz > 0)
                    .map(|e| (u64::from(e.unsigned_abs()) / user_hz) as u32);
            }
            _ => {}
        }
    }
    // A route metric MTU without an expiring exception is configuration, not a cache.
    if out.info.cached_expires_s.is_none() {
        out.info.cached_pmtu = None;
    }
    out
}

fn ip(value: &[u8]) -> Option<IpAddr> {
    match value.len() {
        4 => <[u8; 4]>::try_from(value)
            .ok()
            .map(|b| IpAddr::V4(Ipv4Addr::from(b))),
        16 => <[u8; 16]>::try_from(value)
            .ok()
            .map(|b| IpAddr::V6(Ipv6Addr::from(b))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(attrs: &[(u16, Vec<u8>)]) -> Vec<u8> {
        let mut p = vec![0u8; RTMSG_LEN];
        for (ty, v) in attrs {
            push_attr(&mut p, *ty, v);
        }
        p
    }

    fn metrics(mtu: u32) -> Vec<u8> {
        let mut m = Vec::new();
        push_attr(&mut m, 8, &1460u32.to_ne_bytes()); // RTAX_ADVMSS
        push_attr(&mut m, RTAX_MTU, &mtu.to_ne_bytes());
        m
    }

    fn cacheinfo(expires: i32) -> Vec<u8> {
        let mut c = vec![0u8; 32];
        c[CACHEINFO_EXPIRES..CACHEINFO_EXPIRES + 4].copy_from_slice(&expires.to_ne_bytes());
        c
    }

    #[test]
    fn parses_route_replies() {
        let gw: IpAddr = "198.18.0.1".parse().unwrap();
        let src: IpAddr = "198.18.0.2".parse().unwrap();
        let src6: IpAddr = "2001:db8::2".parse().unwrap();
        let cases = [
            // Plain route through a gateway.
            (
                payload(&[
                    (libc::RTA_OIF, 3u32.to_ne_bytes().to_vec()),
                    (libc::RTA_PREFSRC, vec![198, 18, 0, 2]),
                    (libc::RTA_GATEWAY, vec![198, 18, 0, 1]),
                ]),
                Some(3),
                RouteInfo {
                    source: Some(src),
                    gateway: Some(gw),
                    ..RouteInfo::default()
                },
            ),
            // PMTU exception: "cache expires 587sec mtu 1400" with USER_HZ 100.
            (
                payload(&[
                    (libc::RTA_OIF, 2u32.to_ne_bytes().to_vec()),
                    (
                        libc::RTA_PREFSRC,
                        src6.to_string()
                            .parse::<Ipv6Addr>()
                            .unwrap()
                            .octets()
                            .to_vec(),
                    ),
                    (libc::RTA_METRICS, metrics(1400)),
                    (libc::RTA_CACHEINFO, cacheinfo(58_799)),
                ]),
                Some(2),
                RouteInfo {
                    source: Some(src6),
                    cached_pmtu: Some(1400),
                    cached_expires_s: Some(587),
                    ..RouteInfo::default()
                },
            ),
            // Route metric MTU without an expiring exception; expired cache info.
            (
                payload(&[
                    (libc::RTA_METRICS, metrics(9000)),
                    (libc::RTA_CACHEINFO, cacheinfo(0)),
                ]),
                None,
                RouteInfo::default(),
            ),
            // Garbage: odd address length, truncated cacheinfo, short payload.
            (
                payload(&[
                    (libc::RTA_GATEWAY, vec![1, 2, 3]),
                    (libc::RTA_CACHEINFO, vec![1]),
                ]),
                None,
                RouteInfo::default(),
            ),
            (vec![0u8; 5], None, RouteInfo::default()),
        ];
        for (i, (bytes, oif, info)) in cases.into_iter().enumerate() {
            assert_eq!(
                parse_route(&bytes, 100),
                ParsedRoute { oif, info },
                "case {i}"
            );
        }
    }

    #[test]
    fn loopback_routes_use_lo() {
        for dst in ["127.0.0.1", "::1"] {
            let dst: IpAddr = dst.parse().unwrap();
            let r = route_to(dst).unwrap();
            assert_eq!(r.iface, "lo", "{dst}");
            assert_eq!(r.destination, Some(dst));
            assert_eq!(r.gateway, None);
        }
        assert_eq!(
            route_to("127.0.0.1".parse().unwrap()).unwrap().source,
            Some("127.0.0.1".parse().unwrap())
        );
    }
}
