//! A minimal rtnetlink client: one request, one reply, and attribute walking.
//!
//! Written by hand on libc rather than pulling in netlink-packet-route/netlink-sys:
//! mtuperf needs exactly two unicast requests (RTM_GETROUTE for one destination,
//! RTM_GETLINK for one interface) and a handful of attributes, which is ~100 lines,
//! while those crates bring a large, often-breaking API surface.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const NLMSG_HDRLEN: usize = 16;
const RTA_HDRLEN: usize = 4;
/// Attribute type bits without NLA_F_NESTED / NLA_F_NET_BYTEORDER.
const NLA_TYPE_MASK: u16 = 0x3fff;

/// Sends one `NLM_F_REQUEST` message of `msg_type` with `payload` (family header +
/// attributes) and returns the payload of the reply of `reply_type`.
pub(crate) fn request(msg_type: u16, payload: &[u8], reply_type: u16) -> io::Result<Vec<u8>> {
    // SAFETY: socket() takes no pointers; the result is checked before use.
    let raw = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a freshly created descriptor that nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let timeout = libc::timeval {
        tv_sec: 2,
        tv_usec: 0,
    };
    // SAFETY: `timeout` is a valid timeval for the length passed; a failure only means
    // no timeout, so the result is ignored.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&raw const timeout).cast(),
            size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    let seq: u32 = 1;
    let mut msg = Vec::with_capacity(NLMSG_HDRLEN + payload.len());
    msg.extend_from_slice(&((NLMSG_HDRLEN + payload.len()) as u32).to_ne_bytes());
    msg.extend_from_slice(&msg_type.to_ne_bytes());
    msg.extend_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    msg.extend_from_slice(&seq.to_ne_bytes());
    msg.extend_from_slice(&0u32.to_ne_bytes()); // pid 0: addressed to the kernel
    msg.extend_from_slice(payload);
    // SAFETY: sockaddr_nl is plain old data; zero is a valid value (pid 0 = kernel).
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: `msg` and `kernel` are valid for the lengths passed and outlive the call.
    let sent = unsafe {
        libc::sendto(
            fd.as_raw_fd(),
            msg.as_ptr().cast(),
            msg.len(),
            0,
            (&raw const kernel).cast(),
            size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        // SAFETY: `buf` is writable for `buf.len()` bytes and outlives the call.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        for (ty, msg_seq, body) in messages(&buf[..n]) {
            if msg_seq != seq {
                continue;
            }
            if ty == libc::NLMSG_ERROR as u16 {
                let code = body
                    .get(..4)
                    .map_or(0, |b| i32::from_ne_bytes(b.try_into().unwrap_or_default()));
                let errno = if code == 0 { libc::EPROTO } else { -code };
                return Err(io::Error::from_raw_os_error(errno));
            }
            if ty == reply_type {
                return Ok(body.to_vec());
            }
        }
    }
}

/// Splits a datagram into netlink messages: (type, seq, payload). Stops at the first
/// truncated or malformed header.
pub(crate) fn messages(mut buf: &[u8]) -> Vec<(u16, u32, &[u8])> {
    let mut out = Vec::new();
    while buf.len() >= NLMSG_HDRLEN {
        let len = u32_at(buf, 0).unwrap_or(0) as usize;
        if len < NLMSG_HDRLEN || len > buf.len() {
            break;
        }
        let ty = u16::from_ne_bytes([buf[4], buf[5]]);
        let seq = u32_at(buf, 8).unwrap_or(0);
        out.push((ty, seq, &buf[NLMSG_HDRLEN..len]));
        buf = &buf[align(len).min(buf.len())..];
    }
    out
}

/// Walks a run of route attributes: (type without flag bits, value).
pub(crate) fn attrs(mut buf: &[u8]) -> Vec<(u16, &[u8])> {
    let mut out = Vec::new();
    while buf.len() >= RTA_HDRLEN {
        let len = usize::from(u16::from_ne_bytes([buf[0], buf[1]]));
        if len < RTA_HDRLEN || len > buf.len() {
            break;
        }
        let ty = u16::from_ne_bytes([buf[2], buf[3]]) & NLA_TYPE_MASK;
        out.push((ty, &buf[RTA_HDRLEN..len]));
        buf = &buf[align(len).min(buf.len())..];
    }
    out
}

/// Appends one attribute, padded to 4 bytes.
pub(crate) fn push_attr(out: &mut Vec<u8>, ty: u16, value: &[u8]) {
    let len = RTA_HDRLEN + value.len();
    out.extend_from_slice(&(len as u16).to_ne_bytes());
    out.extend_from_slice(&ty.to_ne_bytes());
    out.extend_from_slice(value);
    out.resize(out.len() + (align(len) - len), 0);
}

/// A native-endian u32 at `off`, if the buffer is long enough.
pub(crate) fn u32_at(buf: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(buf.get(off..off + 4)?.try_into().ok()?))
}

fn align(len: usize) -> usize {
    (len + 3) & !3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attrs_round_trip_and_stop_on_garbage() {
        let mut buf = Vec::new();
        push_attr(&mut buf, 1, &[1, 2, 3]);
        push_attr(&mut buf, 0x8000 | 2, &7u32.to_ne_bytes());
        assert_eq!(buf.len(), 16);
        let got = attrs(&buf);
        assert_eq!(
            got,
            vec![(1, &[1u8, 2, 3][..]), (2, &7u32.to_ne_bytes()[..])]
        );
        // A length running past the end, and one shorter than the header.
        assert!(attrs(&[200, 0, 1, 0, 9]).is_empty());
        assert!(attrs(&[2, 0, 1, 0]).is_empty());
        assert!(attrs(&[]).is_empty());
    }

    #[test]
    fn messages_stop_on_truncation() {
        let mut m = Vec::new();
        m.extend_from_slice(&20u32.to_ne_bytes());
        m.extend_from_slice(&24u16.to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&5u32.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        m.extend_from_slice(&[9, 9, 9, 9]);
        m.extend_from_slice(&[99, 0, 0, 0, 1]); // truncated second header
        assert_eq!(messages(&m), vec![(24, 5, &[9u8, 9, 9, 9][..])]);
    }
}
