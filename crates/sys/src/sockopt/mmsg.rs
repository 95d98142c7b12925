//! Many datagrams per system call. [`RecvBatch`]: one `recvmmsg` fills fixed slots,
//! each with its source address and its control messages (the UDP_GRO segment size
//! of a coalesced receive). [`SendBatch`]: one `sendmmsg` sends datagrams that are
//! each a header of their own followed by a body they all share, one or several to a
//! message (a message of several is cut back into its datagrams by the kernel at the
//! socket's UDP_SEGMENT size: UDP GSO).
//!
//! Written on libc rather than on nix's `recvmmsg`/`sendmmsg`: nix's `MultiHeaders`
//! does not restore `msg_controllen` and `msg_namelen` between calls (the kernel
//! overwrites both with what it wrote; nix-rust/nix#2813), so once a slot received a
//! datagram without a control message, every later receive in that slot loses its
//! UDP_GRO size and a coalesced receive would be counted as one datagram. Here
//! everything is allocated once; each call rewrites only the headers' fields.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::{AsFd, AsRawFd};

/// UDP_GRO (linux/udp.h; not in the libc crate for glibc targets): as a socket
/// option it turns receive coalescing on; as a control message it carries the size
/// of the datagrams a receive holds.
const UDP_GRO: libc::c_int = 104;

/// Control bytes per slot: room for a UDP_GRO and two more int-sized messages.
const CONTROL: usize = 64;

/// One slot's control buffer, aligned for `cmsghdr`.
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct Control([u8; CONTROL]);

/// Fixed receive slots for `recvmmsg`.
pub struct RecvBatch {
    cap: usize,
    data: Box<[u8]>,
    iovs: Box<[libc::iovec]>,
    hdrs: Box<[libc::mmsghdr]>,
    names: Box<[libc::sockaddr_storage]>,
    control: Box<[Control]>,
    filled: usize,
}

/// One received message.
#[derive(Debug, Clone, Copy)]
pub struct Received<'a> {
    /// Its bytes (at most the slot's capacity).
    pub data: &'a [u8],
    /// The datagram was longer than the slot and was cut (MSG_TRUNC).
    pub truncated: bool,
    /// UDP_GRO: the receive holds several datagrams of this size (the last may be
    /// shorter); None for a single datagram.
    pub segment: Option<usize>,
    /// Where it came from.
    pub from: Option<SocketAddr>,
}

impl<'a> Received<'a> {
    /// The datagrams this receive holds: one, or its coalesced datagrams cut at the
    /// UDP_GRO size.
    pub fn datagrams(&self) -> Segments<'a> {
        Segments {
            rest: Some(self.data),
            size: self.segment.unwrap_or(usize::MAX).max(1),
        }
    }
}

/// The datagrams of one receive ([`Received::datagrams`]).
#[derive(Debug, Clone)]
pub struct Segments<'a> {
    rest: Option<&'a [u8]>,
    size: usize,
}

impl<'a> Iterator for Segments<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        if rest.len() <= self.size {
            self.rest = None;
            return Some(rest);
        }
        let (one, more) = rest.split_at(self.size);
        self.rest = Some(more);
        Some(one)
    }
}

impl RecvBatch {
    /// `slots` receive slots of `cap` bytes each (a UDP_GRO socket needs 65535).
    pub fn new(slots: usize, cap: usize) -> RecvBatch {
        let slots = slots.max(1);
        // SAFETY: iovec, mmsghdr and sockaddr_storage are plain old data for which
        // all-zero (null pointers, zero lengths) is a valid value.
        let (iov, hdr, name) = unsafe {
            (
                std::mem::zeroed::<libc::iovec>(),
                std::mem::zeroed::<libc::mmsghdr>(),
                std::mem::zeroed::<libc::sockaddr_storage>(),
            )
        };
        RecvBatch {
            cap: cap.max(1),
            data: vec![0u8; slots * cap.max(1)].into_boxed_slice(),
            iovs: vec![iov; slots].into_boxed_slice(),
            hdrs: vec![hdr; slots].into_boxed_slice(),
            names: vec![name; slots].into_boxed_slice(),
            control: vec![Control([0; CONTROL]); slots].into_boxed_slice(),
            filled: 0,
        }
    }

    /// Slots per call.
    pub fn slots(&self) -> usize {
        self.hdrs.len()
    }

    /// Receives up to [`slots`](Self::slots) messages: blocks for the first (up to
    /// the socket's SO_RCVTIMEO; a timeout is `WouldBlock`), then takes whatever else
    /// is queued (MSG_WAITFORONE). Returns how many came; read them with
    /// [`get`](Self::get).
    pub fn recv(&mut self, fd: &impl AsFd) -> io::Result<usize> {
        self.filled = 0;
        let slots = self.hdrs.len();
        let parts = self
            .data
            .chunks_mut(self.cap)
            .zip(self.iovs.iter_mut())
            .zip(self.hdrs.iter_mut())
            .zip(self.names.iter_mut())
            .zip(self.control.iter_mut());
        for ((((buf, iov), h), name), control) in parts {
            iov.iov_base = buf.as_mut_ptr().cast();
            iov.iov_len = buf.len();
            h.msg_len = 0;
            let m = &mut h.msg_hdr;
            // In-out fields: the kernel overwrites the lengths, so every call restores
            // the capacities.
            m.msg_name = std::ptr::from_mut(name).cast();
            m.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            m.msg_iov = std::ptr::from_mut(iov);
            m.msg_iovlen = 1;
            m.msg_control = control.0.as_mut_ptr().cast();
            m.msg_controllen = CONTROL as _;
            m.msg_flags = 0;
        }
        // SAFETY: every header points at its own iovec (into `data`), address and
        // control buffer, all owned by `self`, alive and sized as declared; `slots`
        // is the length of `hdrs`; a null timeout is allowed.
        let n = unsafe {
            libc::recvmmsg(
                fd.as_fd().as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                libc::c_uint::try_from(slots).unwrap_or(libc::c_uint::MAX),
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        self.filled = usize::try_from(n).unwrap_or(0).min(slots);
        Ok(self.filled)
    }

    /// Message `i` of the last [`recv`](Self::recv).
    pub fn get(&self, i: usize) -> Option<Received<'_>> {
        if i >= self.filled {
            return None;
        }
        let h = self.hdrs.get(i)?;
        let len = (h.msg_len as usize).min(self.cap);
        let data = self.data.get(i * self.cap..i * self.cap + len)?;
        let m = &h.msg_hdr;
        Some(Received {
            data,
            truncated: m.msg_flags & libc::MSG_TRUNC != 0,
            segment: gro_segment(m),
            from: self
                .names
                .get(i)
                .and_then(|s| socket_addr(s, m.msg_namelen)),
        })
    }
}

/// The UDP_GRO segment size among a received message's control messages.
fn gro_segment(m: &libc::msghdr) -> Option<usize> {
    // SAFETY: `m` was filled by recvmmsg: msg_control points at the slot's control
    // buffer and msg_controllen holds the bytes the kernel wrote there, which
    // CMSG_FIRSTHDR/NXTHDR stay within.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(m) };
    while !cmsg.is_null() {
        // SAFETY: a non-null header from CMSG_FIRSTHDR/NXTHDR lies inside the buffer.
        let hdr = unsafe { cmsg.read_unaligned() };
        if hdr.cmsg_level == libc::SOL_UDP && hdr.cmsg_type == UDP_GRO {
            // SAFETY: a UDP_GRO message carries one int (CMSG_DATA is inside the
            // buffer; the read is unaligned-safe).
            let size = unsafe { libc::CMSG_DATA(cmsg).cast::<libc::c_int>().read_unaligned() };
            return usize::try_from(size).ok().filter(|&s| s > 0);
        }
        // SAFETY: `cmsg` is a valid header of `m`.
        cmsg = unsafe { libc::CMSG_NXTHDR(m, cmsg) };
    }
    None
}

fn socket_addr(s: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<SocketAddr> {
    let len = len as usize;
    match libc::c_int::from(s.ss_family) {
        libc::AF_INET if len >= size_of::<libc::sockaddr_in>() => {
            // SAFETY: the family says the storage holds a sockaddr_in, which it is
            // large and aligned enough for.
            let a = unsafe { &*std::ptr::from_ref(s).cast::<libc::sockaddr_in>() };
            Some(SocketAddr::V4(SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
                u16::from_be(a.sin_port),
            )))
        }
        libc::AF_INET6 if len >= size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above, for sockaddr_in6.
            let a = unsafe { &*std::ptr::from_ref(s).cast::<libc::sockaddr_in6>() };
            Some(SocketAddr::V6(SocketAddrV6::new(
                Ipv6Addr::from(a.sin6_addr.s6_addr),
                u16::from_be(a.sin6_port),
                a.sin6_flowinfo,
                a.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// `addr` as a sockaddr_storage and its length.
fn storage(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain old data; all-zero is valid.
    let mut s: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            // SAFETY: sockaddr_storage is large and aligned enough for any sockaddr.
            let sin = unsafe { &mut *std::ptr::from_mut(&mut s).cast::<libc::sockaddr_in>() };
            sin.sin_family = libc::AF_INET as libc::sa_family_t;
            sin.sin_port = a.port().to_be();
            sin.sin_addr.s_addr = u32::from(*a.ip()).to_be();
            size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            // SAFETY: as above.
            let sin6 = unsafe { &mut *std::ptr::from_mut(&mut s).cast::<libc::sockaddr_in6>() };
            sin6.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_flowinfo = a.flowinfo();
            sin6.sin6_scope_id = a.scope_id();
            size_of::<libc::sockaddr_in6>()
        }
    };
    (s, len as libc::socklen_t)
}

/// The datagrams of one [`SendBatch::send`]: datagram `j` is the `head_len` bytes
/// at `heads[j * head_len..]` followed by `body`, and `per_message` consecutive
/// datagrams go in one message (more than one needs the socket's UDP_SEGMENT set to
/// `head_len + body.len()`).
#[derive(Debug, Clone, Copy)]
pub struct Datagrams<'a> {
    pub heads: &'a [u8],
    pub head_len: usize,
    pub body: &'a [u8],
    pub per_message: usize,
}

impl Datagrams<'_> {
    fn count(&self) -> usize {
        self.heads.len().checked_div(self.head_len).unwrap_or(0)
    }
}

/// Fixed message headers for `sendmmsg`.
pub struct SendBatch {
    hdrs: Box<[libc::mmsghdr]>,
    iovs: Box<[libc::iovec]>,
    names: Box<[libc::sockaddr_storage]>,
}

impl SendBatch {
    /// Room for `messages` messages and `datagrams` datagrams per call.
    pub fn new(messages: usize, datagrams: usize) -> SendBatch {
        // SAFETY: plain old data; all-zero is valid (see RecvBatch::new).
        let (iov, hdr, name) = unsafe {
            (
                std::mem::zeroed::<libc::iovec>(),
                std::mem::zeroed::<libc::mmsghdr>(),
                std::mem::zeroed::<libc::sockaddr_storage>(),
            )
        };
        SendBatch {
            hdrs: vec![hdr; messages.max(1)].into_boxed_slice(),
            iovs: vec![iov; 2 * datagrams.max(1)].into_boxed_slice(),
            names: vec![name; messages.max(1)].into_boxed_slice(),
        }
    }

    /// Sends as many of `d`'s datagrams as this batch holds, in one `sendmmsg`:
    /// message `m` to `to[m]` when `to` is given, else to the socket's connected
    /// peer. Returns the datagrams of the messages the kernel took (a failed first
    /// message is the error; the kernel reports an error after the first on the
    /// next call).
    pub fn send(
        &mut self,
        fd: &impl AsFd,
        d: &Datagrams<'_>,
        to: Option<&[SocketAddr]>,
    ) -> io::Result<usize> {
        let per = d.per_message.max(1);
        let datagrams = d.count().min(self.iovs.len() / 2);
        let messages = datagrams.div_ceil(per).min(self.hdrs.len());
        let messages = to.map_or(messages, |t| messages.min(t.len()));
        if messages == 0 {
            return Ok(0);
        }
        for (j, pair) in self.iovs.chunks_mut(2).take(datagrams).enumerate() {
            let head = d
                .heads
                .get(j * d.head_len..(j + 1) * d.head_len)
                .unwrap_or(&[]);
            pair[0] = libc::iovec {
                iov_base: head.as_ptr().cast_mut().cast(),
                iov_len: head.len(),
            };
            pair[1] = libc::iovec {
                iov_base: d.body.as_ptr().cast_mut().cast(),
                iov_len: d.body.len(),
            };
        }
        let iovs = self.iovs.as_mut_ptr();
        for (m, (h, name)) in self.hdrs.iter_mut().zip(self.names.iter_mut()).enumerate() {
            if m == messages {
                break;
            }
            let first = m * per;
            let n = per.min(datagrams - first);
            let msg = &mut h.msg_hdr;
            // SAFETY: `first + n <= datagrams`, so the 2n iovecs from 2*first are
            // inside `iovs` (2 per datagram, filled above).
            msg.msg_iov = unsafe { iovs.add(2 * first) };
            msg.msg_iovlen = (2 * n) as _;
            if let Some(&addr) = to.and_then(|t| t.get(m)) {
                let (s, len) = storage(addr);
                *name = s;
                msg.msg_name = std::ptr::from_mut(name).cast();
                msg.msg_namelen = len;
            } else {
                msg.msg_name = std::ptr::null_mut();
                msg.msg_namelen = 0;
            }
            msg.msg_control = std::ptr::null_mut();
            msg.msg_controllen = 0;
            msg.msg_flags = 0;
            h.msg_len = 0;
        }
        // SAFETY: the first `messages` headers point at iovecs in `self.iovs` whose
        // buffers are `d.heads` and `d.body` (borrowed for this call), and at
        // addresses in `self.names`; `messages <= hdrs.len()`.
        let sent = unsafe {
            libc::sendmmsg(
                fd.as_fd().as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                libc::c_uint::try_from(messages).unwrap_or(libc::c_uint::MAX),
                0,
            )
        };
        if sent < 0 {
            return Err(io::Error::last_os_error());
        }
        let sent = usize::try_from(sent).unwrap_or(0).min(messages);
        Ok((sent * per).min(datagrams))
    }
}

/// UDP_SEGMENT: from now on the kernel cuts every send on this socket longer than
/// `size` into datagrams of `size` bytes (UDP GSO, Linux 4.18+); 0 turns it off.
/// Fails with ENOPROTOOPT where the kernel has no UDP GSO.
pub fn set_udp_segment(fd: &impl AsFd, size: u16) -> io::Result<()> {
    super::set(fd, libc::SOL_UDP, libc::UDP_SEGMENT, size.into())
}

/// UDP_GRO: the kernel may hand this socket several datagrams of one flow in one
/// receive, their size in a UDP_GRO control message (Linux 5.0+). Receive buffers
/// must then hold 65535 bytes.
pub fn set_udp_gro(fd: &impl AsFd, on: bool) -> io::Result<()> {
    super::set(fd, libc::SOL_UDP, UDP_GRO, on.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::udp_pair;
    use std::net::UdpSocket;
    use std::time::Duration;

    fn heads(n: usize) -> Vec<u8> {
        (0..n).flat_map(|j| [j as u8; 4]).collect()
    }

    #[test]
    fn a_coalesced_receive_splits_at_its_segment_size() {
        let r = Received {
            data: &[1, 1, 1, 2, 2, 2, 3],
            truncated: false,
            segment: Some(3),
            from: None,
        };
        let parts: Vec<&[u8]> = r.datagrams().collect();
        assert_eq!(parts, [&[1, 1, 1][..], &[2, 2, 2], &[3]]);
        // One datagram (no UDP_GRO size), an empty one, and an exact multiple.
        let one = Received { segment: None, ..r };
        assert_eq!(one.datagrams().count(), 1);
        let empty = Received { data: &[], ..one };
        assert_eq!(empty.datagrams().collect::<Vec<_>>(), [&[] as &[u8]]);
        let whole = Received {
            data: &[5; 6],
            segment: Some(3),
            ..r
        };
        assert_eq!(
            whole.datagrams().map(<[u8]>::len).collect::<Vec<_>>(),
            [3, 3]
        );
    }

    #[test]
    fn batches_carry_each_datagram_whole_and_in_order() {
        let (tx, rx) = udp_pair();
        let body = [0xabu8; 96];
        let h = heads(10);
        let mut out = SendBatch::new(16, 16);
        let d = Datagrams {
            heads: &h,
            head_len: 4,
            body: &body,
            per_message: 1,
        };
        assert_eq!(out.send(&tx, &d, None).unwrap(), 10);
        let mut batch = RecvBatch::new(16, 101);
        let mut got = Vec::new();
        while got.len() < 10 {
            let n = batch.recv(&rx).unwrap();
            for i in 0..n {
                let m = batch.get(i).unwrap();
                assert_eq!(m.segment, None);
                assert!(!m.truncated);
                assert_eq!(m.from, Some(tx.local_addr().unwrap()));
                got.push(m.data.to_vec());
            }
        }
        for (j, g) in got.iter().enumerate() {
            assert_eq!(g.len(), 100);
            assert_eq!(&g[..4], &[j as u8; 4]);
            assert!(g[4..].iter().all(|&b| b == 0xab));
        }
    }

    #[test]
    fn gso_sends_are_cut_by_the_kernel_and_gro_hands_them_back_with_their_size() {
        let (tx, rx) = udp_pair();
        if set_udp_segment(&tx, 100).is_err() || set_udp_gro(&rx, true).is_err() {
            eprintln!("skipped: this kernel has no UDP GSO/GRO");
            return;
        }
        let body = [7u8; 96];
        let h = heads(25);
        let mut out = SendBatch::new(4, 25);
        // 25 datagrams, 10 to a message: messages of 10, 10 and 5.
        let d = Datagrams {
            heads: &h,
            head_len: 4,
            body: &body,
            per_message: 10,
        };
        assert_eq!(out.send(&tx, &d, None).unwrap(), 25);
        let mut batch = RecvBatch::new(4, 65_535);
        let mut seen = Vec::new();
        let mut messages = 0;
        while seen.len() < 25 {
            let n = batch.recv(&rx).unwrap();
            for i in 0..n {
                let m = batch.get(i).unwrap();
                messages += 1;
                for dgram in m.datagrams() {
                    assert_eq!(dgram.len(), 100);
                    seen.push(dgram[0]);
                }
            }
        }
        // Over loopback the GSO sends arrive whole: 3 receives, 25 datagrams in order.
        assert_eq!(messages, 3);
        assert_eq!(seen, (0..25).collect::<Vec<u8>>());
        // A second round through the same slots still carries the UDP_GRO size.
        assert_eq!(out.send(&tx, &d, None).unwrap(), 25);
        let n = batch.recv(&rx).unwrap();
        assert!(n >= 1);
        assert_eq!(batch.get(0).unwrap().segment, Some(100));
    }

    #[test]
    fn addressed_batches_go_to_each_messages_own_peer() {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("[::1]:0").ok();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let body = [1u8; 8];
        let h = heads(2);
        let d = Datagrams {
            heads: &h,
            head_len: 4,
            body: &body,
            per_message: 1,
        };
        let to = [a.local_addr().unwrap(), a.local_addr().unwrap()];
        assert_eq!(SendBatch::new(2, 2).send(&tx, &d, Some(&to)).unwrap(), 2);
        a.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut batch = RecvBatch::new(2, 64);
        let mut n = 0;
        while n < 2 {
            n += batch.recv(&a).unwrap();
        }
        // Source addresses of both families read back.
        let v4 = SocketAddr::from(([127, 0, 0, 1], 4242));
        let (s, len) = storage(v4);
        assert_eq!(socket_addr(&s, len), Some(v4));
        if let Some(b) = b {
            let v6 = b.local_addr().unwrap();
            let (s, len) = storage(v6);
            assert_eq!(socket_addr(&s, len), Some(v6));
        }
    }
}
