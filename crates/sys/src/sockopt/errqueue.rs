//! The socket error queue (IP_RECVERR / IPV6_RECVERR): ICMP errors and local
//! EMSGSIZE reports, with the MTU and the offending router.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::fd::{AsFd, AsRawFd};

/// Size of `struct sock_extended_err`; the offender sockaddr follows it.
const EE_LEN: usize = 16;

/// Who generated a queued error (`ee_origin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// This host: its own interface or route MTU (SO_EE_ORIGIN_LOCAL).
    Local,
    /// An ICMPv4 message from a router or the peer.
    Icmp,
    /// An ICMPv6 message.
    Icmp6,
    Other(u8),
}

/// One queued error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrQueueEntry {
    /// ee_errno: EMSGSIZE for "too big", ECONNREFUSED for port unreachable, ...
    pub errno: i32,
    pub origin: Origin,
    pub icmp_type: u8,
    pub icmp_code: u8,
    /// ee_info: the MTU for EMSGSIZE / fragmentation needed / packet too big.
    pub info: u32,
    /// The address that sent the ICMP (SO_EE_OFFENDER); None for local errors.
    pub offender: Option<IpAddr>,
    /// Bytes of the original datagram returned with the error: for ICMP errors only
    /// what the message quoted (an IPv4 router quotes up to 576 bytes in all).
    pub payload_len: usize,
}

/// Reads one entry from the error queue without blocking (`MSG_ERRQUEUE |
/// MSG_DONTWAIT`); `Ok(None)` when the queue is empty. Both IPv4 and IPv6 control
/// messages are accepted (a v6 socket gets IPv4 errors for mapped addresses), so `v6`
/// only documents the caller's family.
pub fn recv_err(fd: &impl AsFd, v6: bool) -> io::Result<Option<ErrQueueEntry>> {
    let _ = v6;
    let mut data = vec![0u8; 65_536];
    // u64 elements keep the control buffer aligned for cmsghdr.
    let mut control = [0u64; 64];
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    // SAFETY: msghdr is plain old data; all-zero (null pointers, zero lengths) is valid.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control);
    // SAFETY: `msg` points at `iov` (into `data`) and `control`, all alive and sized as
    // declared for the duration of the call.
    let n = unsafe {
        libc::recvmsg(
            fd.as_fd().as_raw_fd(),
            &raw mut msg,
            libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
        )
    };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::WouldBlock {
            Ok(None)
        } else {
            Err(e)
        };
    }
    let payload_len = n as usize;
    // SAFETY: `msg` was filled by recvmsg; CMSG_FIRSTHDR/NXTHDR stay within
    // msg_controllen, which the kernel set to the bytes it wrote.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(&raw const msg) };
    while !cmsg.is_null() {
        // SAFETY: non-null headers from CMSG_FIRSTHDR/NXTHDR are inside `control`.
        let hdr = unsafe { cmsg.read_unaligned() };
        let is_err = (hdr.cmsg_level == libc::SOL_IP && hdr.cmsg_type == libc::IP_RECVERR)
            || (hdr.cmsg_level == libc::SOL_IPV6 && hdr.cmsg_type == libc::IPV6_RECVERR);
        if is_err {
            // SAFETY: CMSG_LEN(0) is a pure size computation.
            let header = unsafe { libc::CMSG_LEN(0) } as usize;
            let len = hdr.cmsg_len.saturating_sub(header);
            // SAFETY: CMSG_DATA points `len` bytes inside `control` (cmsg_len as set by
            // the kernel), and `control` outlives this borrow.
            let bytes = unsafe { std::slice::from_raw_parts(libc::CMSG_DATA(cmsg), len) };
            if let Some(entry) = parse_extended_err(bytes, payload_len) {
                return Ok(Some(entry));
            }
        }
        // SAFETY: `cmsg` is a valid header of `msg`.
        cmsg = unsafe { libc::CMSG_NXTHDR(&raw const msg, cmsg) };
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "error queue entry without IP_RECVERR data",
    ))
}

/// Parses `struct sock_extended_err` followed by the offender sockaddr.
pub(crate) fn parse_extended_err(b: &[u8], payload_len: usize) -> Option<ErrQueueEntry> {
    if b.len() < EE_LEN {
        return None;
    }
    let u32_at = |off: usize| Some(u32::from_ne_bytes(b.get(off..off + 4)?.try_into().ok()?));
    let origin = match *b.get(4)? {
        libc::SO_EE_ORIGIN_LOCAL => Origin::Local,
        libc::SO_EE_ORIGIN_ICMP => Origin::Icmp,
        libc::SO_EE_ORIGIN_ICMP6 => Origin::Icmp6,
        o => Origin::Other(o),
    };
    Some(ErrQueueEntry {
        errno: u32_at(0)? as i32,
        origin,
        icmp_type: *b.get(5)?,
        icmp_code: *b.get(6)?,
        info: u32_at(8)?,
        offender: b.get(EE_LEN..).and_then(sockaddr_ip),
        payload_len,
    })
}

/// The address of a sockaddr_in / sockaddr_in6 given as bytes (AF_UNSPEC: None).
fn sockaddr_ip(sa: &[u8]) -> Option<IpAddr> {
    let family = i32::from(u16::from_ne_bytes(sa.get(..2)?.try_into().ok()?));
    match family {
        libc::AF_INET => {
            let a: [u8; 4] = sa.get(4..8)?.try_into().ok()?;
            Some(IpAddr::V4(Ipv4Addr::from(a)))
        }
        libc::AF_INET6 => {
            let a: [u8; 16] = sa.get(8..24)?.try_into().ok()?;
            Some(IpAddr::V6(Ipv6Addr::from(a)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sockopt::{set_pmtu_discover, set_recverr, PmtuMode};
    use std::net::UdpSocket;
    use std::time::Duration;

    fn ee(errno: i32, origin: u8, ty: u8, code: u8, info: u32, offender: &[u8]) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(&(errno as u32).to_ne_bytes());
        b.extend_from_slice(&[origin, ty, code, 0]);
        b.extend_from_slice(&info.to_ne_bytes());
        b.extend_from_slice(&0u32.to_ne_bytes());
        b.extend_from_slice(offender);
        b
    }

    fn sin(a: [u8; 4]) -> Vec<u8> {
        let mut s = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        s.extend_from_slice(&[0, 0]);
        s.extend_from_slice(&a);
        s.extend_from_slice(&[0; 8]);
        s
    }

    fn sin6(a: Ipv6Addr) -> Vec<u8> {
        let mut s = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        s.extend_from_slice(&[0; 6]);
        s.extend_from_slice(&a.octets());
        s.extend_from_slice(&[0; 4]);
        s
    }

    #[test]
    fn parses_extended_errors() {
        let router6: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let unspec = vec![0u8; 16];
        let cases = [
            // A router's "fragmentation needed" (type 3 code 4) with next-hop MTU 1400.
            (
                ee(libc::EMSGSIZE, 2, 3, 4, 1400, &sin([198, 18, 0, 1])),
                Origin::Icmp,
                Some(IpAddr::from([198, 18, 0, 1])),
            ),
            // IPv6 Packet Too Big (type 2).
            (
                ee(libc::EMSGSIZE, 3, 2, 0, 1280, &sin6(router6)),
                Origin::Icmp6,
                Some(IpAddr::V6(router6)),
            ),
            // Local EMSGSIZE: own interface MTU, no offender.
            (
                ee(libc::EMSGSIZE, 1, 0, 0, 9000, &unspec),
                Origin::Local,
                None,
            ),
            // Truncated offender.
            (
                ee(libc::EMSGSIZE, 9, 0, 0, 1, &[2, 0, 0]),
                Origin::Other(9),
                None,
            ),
        ];
        for (i, (bytes, origin, offender)) in cases.into_iter().enumerate() {
            let e = parse_extended_err(&bytes, 100).unwrap();
            assert_eq!(
                (e.origin, e.offender, e.errno, e.payload_len),
                (origin, offender, libc::EMSGSIZE, 100),
                "case {i}"
            );
        }
        let frag = parse_extended_err(&ee(libc::EMSGSIZE, 2, 3, 4, 1400, &[]), 0).unwrap();
        assert_eq!((frag.icmp_type, frag.icmp_code, frag.info), (3, 4, 1400));
        assert_eq!(parse_extended_err(&[0; 15], 0), None);
    }

    /// A UDP port on `ip` that nothing listens on (bound, then closed).
    fn closed_port(ip: &str) -> std::net::SocketAddr {
        UdpSocket::bind((ip, 0)).unwrap().local_addr().unwrap()
    }

    #[test]
    fn port_unreachable_arrives_on_the_error_queue() {
        for (ip, v6) in [("127.0.0.1", false), ("::1", true)] {
            let dst = closed_port(ip);
            let s = UdpSocket::bind((ip, 0)).unwrap();
            s.connect(dst).unwrap();
            set_recverr(&s, v6).unwrap();
            set_pmtu_discover(&s, v6, PmtuMode::Probe).unwrap();
            assert_eq!(recv_err(&s, v6).unwrap(), None, "{ip}: queue starts empty");
            s.send(b"probe").unwrap();
            let mut entry = None;
            for _ in 0..200 {
                entry = recv_err(&s, v6).unwrap();
                if entry.is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let e = entry.unwrap_or_else(|| panic!("{ip}: no error queued"));
            assert_eq!(e.errno, libc::ECONNREFUSED, "{ip}: {e:?}");
            assert_eq!(
                e.origin,
                if v6 { Origin::Icmp6 } else { Origin::Icmp },
                "{ip}"
            );
            // Port unreachable: ICMP 3/3, ICMPv6 1/4.
            assert_eq!(
                (e.icmp_type, e.icmp_code),
                if v6 { (1, 4) } else { (3, 3) },
                "{ip}"
            );
            assert_eq!(e.offender, Some(ip.parse().unwrap()), "{ip}");
            assert_eq!(e.payload_len, 5, "{ip}");
            assert_eq!(
                recv_err(&s, v6).unwrap(),
                None,
                "{ip}: one error, read once"
            );
        }
    }
}
