//! The UDP responder's batched loop: one `recvmmsg` takes up to `BATCH` requests
//! (blocking for the first, up to the socket's read timeout, then whatever else is
//! queued), one `sendmmsg` answers all that passed the checks. Each answer is two
//! pieces, its own 40-byte header and the block every answer shares, so nothing is
//! copied or allocated per block: the buffers are made once per worker.

use std::io::{IoSlice, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::Instant;

use mtuperf_proto::dgram::HEADER_LEN;
use nix::sys::socket::{
    recvmmsg, sendmmsg, ControlMessage, MsgFlags, MultiHeaders, SockaddrStorage,
};

use super::udp_allow::{accept, Allowed};
use super::{Block, Tally};
use crate::rr::wire::{flip, response_header};

/// Requests taken per recvmmsg at most.
const BATCH: usize = 32;

pub(super) fn worker(sock: &UdpSocket, a: &Allowed<'_>, deadline: Instant, block: &Block) -> Tally {
    let shared = a.shared;
    let fd = sock.as_raw_fd();
    let mut t = Tally::default();
    // One byte more than a request: a longer datagram shows as too long.
    let cap = a.expect_len + 1;
    let mut rx = vec![0u8; cap * BATCH];
    let mut heads = [[0u8; HEADER_LEN]; BATCH];
    let mut to: [Option<SockaddrStorage>; BATCH] = [None; BATCH];
    let mut got = [(0usize, None::<SocketAddr>); BATCH];
    let mut rhdrs = MultiHeaders::<SockaddrStorage>::preallocate(BATCH, None);
    let mut shdrs = MultiHeaders::<SockaddrStorage>::preallocate(BATCH, None);
    // The corrupt-response hook's answers go out one by one from a whole copy.
    let mut whole = block.response_buffer();
    let mut stalled = false;
    while !shared.stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        let n = {
            let mut chunks = rx.chunks_mut(cap);
            let mut iovs: [[IoSliceMut<'_>; 1]; BATCH] =
                std::array::from_fn(|_| [IoSliceMut::new(chunks.next().unwrap_or_default())]);
            match recvmmsg(
                fd,
                &mut rhdrs,
                iovs.iter_mut(),
                MsgFlags::MSG_WAITFORONE,
                None,
            ) {
                Ok(msgs) => {
                    let mut n = 0;
                    for (m, slot) in msgs.zip(got.iter_mut()) {
                        *slot = (m.bytes, m.address.as_ref().and_then(std_addr));
                        n += 1;
                    }
                    n
                }
                Err(_) => 0,
            }
        };
        let mut out = 0;
        for (j, &(len, from)) in got.iter().enumerate().take(n) {
            let dgram = rx.get(j * cap..(j + 1) * cap).unwrap_or_default();
            let Some((req, from)) = from.and_then(|f| accept(dgram, len, f, a).map(|h| (h, f)))
            else {
                t.rejected += 1;
                continue;
            };
            t.requests += 1;
            shared.maybe_stall(&mut stalled);
            if shared.next_response_corrupt() {
                response_header(&mut whole, &req, block.sum, shared.block);
                flip(&mut whole);
                if let Ok(sent) = sock.send_to(&whole, from) {
                    t.responses += 1;
                    t.bytes_sent += sent as u64;
                }
                flip(&mut whole);
                continue;
            }
            if let (Some(h), Some(dst)) = (heads.get_mut(out), to.get_mut(out)) {
                response_header(h, &req, block.sum, shared.block);
                *dst = Some(SockaddrStorage::from(from));
                out += 1;
            }
        }
        send_all(fd, &mut shdrs, &heads, &to, out, block.payload(), &mut t);
    }
    t
}

/// Sends the first `out` answers (header `heads[j]` + the block to `to[j]`), in as
/// many sendmmsg calls as the kernel needs; an error drops the rest (the requests
/// time out at their clients, as a failed send_to's would).
fn send_all(
    fd: i32,
    hdrs: &mut MultiHeaders<SockaddrStorage>,
    heads: &[[u8; HEADER_LEN]; BATCH],
    to: &[Option<SockaddrStorage>; BATCH],
    out: usize,
    payload: &[u8],
    t: &mut Tally,
) {
    let iovs: [[IoSlice<'_>; 2]; BATCH] = std::array::from_fn(|j| {
        [
            IoSlice::new(heads.get(j).map_or(&[], |h| h)),
            IoSlice::new(payload),
        ]
    });
    let mut done = 0;
    while done < out {
        let (Some(slices), Some(addrs)) = (iovs.get(done..out), to.get(done..out)) else {
            return;
        };
        let cmsgs: [ControlMessage<'_>; 0] = [];
        match sendmmsg(fd, hdrs, slices, addrs, cmsgs, MsgFlags::empty()) {
            Ok(sent) => {
                let k = sent.count();
                if k == 0 {
                    return;
                }
                done += k;
                t.responses += k as u64;
                t.bytes_sent += (k * (HEADER_LEN + payload.len())) as u64;
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return,
        }
    }
}

fn std_addr(a: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = a.as_sockaddr_in() {
        return Some(SocketAddr::from(*v4));
    }
    a.as_sockaddr_in6().map(|v6| SocketAddr::from(*v6))
}
