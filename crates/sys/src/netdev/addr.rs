//! Which interface owns a local address (getifaddrs).

use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The name of the interface that has `addr` configured, if any. IPv4-mapped IPv6
/// addresses are looked up as IPv4.
pub fn iface_with_addr(addr: IpAddr) -> Option<String> {
    let addr = match addr {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
        v4 @ IpAddr::V4(_) => v4,
    };
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: `head` is a valid out-pointer; on success it owns a list we free below.
    if unsafe { libc::getifaddrs(&raw mut head) } != 0 {
        return None;
    }
    let mut found = None;
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a non-null node of the list getifaddrs returned, alive until
        // freeifaddrs.
        let ifa = unsafe { &*cur };
        // SAFETY: ifa_addr is null or points to a sockaddr of the family it declares.
        if unsafe { sockaddr_ip(ifa.ifa_addr) } == Some(addr) && !ifa.ifa_name.is_null() {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let name = unsafe { CStr::from_ptr(ifa.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
            break;
        }
        cur = ifa.ifa_next;
    }
    // SAFETY: `head` came from a successful getifaddrs and is freed exactly once.
    unsafe { libc::freeifaddrs(head) };
    found
}

/// The IP address in a sockaddr, for AF_INET and AF_INET6.
///
/// # Safety
/// `sa` must be null or point to a valid sockaddr whose size matches its family.
unsafe fn sockaddr_ip(sa: *const libc::sockaddr) -> Option<IpAddr> {
    if sa.is_null() {
        return None;
    }
    // SAFETY: non-null and valid per the caller's contract; sa_family is always present.
    match i32::from(unsafe { (*sa).sa_family }) {
        libc::AF_INET => {
            // SAFETY: the family says this is a sockaddr_in; read_unaligned avoids
            // assuming the allocation's alignment.
            let sin = unsafe { sa.cast::<libc::sockaddr_in>().read_unaligned() };
            Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                sin.sin_addr.s_addr,
            ))))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says this is a sockaddr_in6.
            let sin6 = unsafe { sa.cast::<libc::sockaddr_in6>().read_unaligned() };
            Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_belong_to_lo() {
        let cases: [(&str, Option<&str>); 4] = [
            ("127.0.0.1", Some("lo")),
            ("::1", Some("lo")),
            ("::ffff:127.0.0.1", Some("lo")),
            // TEST-NET-3 is never configured on this host.
            ("203.0.113.254", None),
        ];
        for (addr, want) in cases {
            let got = iface_with_addr(addr.parse().unwrap());
            assert_eq!(got.as_deref(), want, "{addr}");
        }
    }
}
