//! The receiving half of a requester thread: reads answers (UDP datagrams, or TCP
//! messages in pieces), checks them against the client's outstanding request and
//! records the block's latency. Each answer touches only its own client's slot.

use std::io::{ErrorKind, Read};
use std::net::{TcpStream, UdpSocket};
use std::sync::atomic::Ordering;

use hdrhistogram::Histogram;
use mtuperf_proto::dgram::{checksum, Header, Kind, HEADER_LEN};

use super::hot::{now_ns, Plan, Run, Shape, Transport};
use super::slots::{Schedule, Slot};
use crate::rr::hist::record;
use crate::rr::wire::{fnv_update, FNV_INIT};
use crate::rr::RrCounts;

impl Run<'_> {
    /// Reads every answer waiting on the socket. With `block_first` the first read
    /// blocks (up to the socket's read timeout) and the rest do not.
    pub(super) fn recv_udp(&mut self, sock: &UdpSocket, block_first: bool) {
        let mut block = block_first;
        loop {
            let got = if block {
                mtuperf_sys::sock::recv(sock, &mut self.recvbuf)
            } else {
                mtuperf_sys::sock::recv_now(sock, &mut self.recvbuf)
            };
            block = false;
            let n = match got {
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return,
                Err(_) => continue,
            };
            let p = self.p;
            // The block's arrival: right after the read, before this tool's checks.
            let now = now_ns(p.t0);
            let Some(dgram) = self.recvbuf.get(..n) else {
                return;
            };
            let ok = Header::read(dgram).ok().filter(|h| {
                h.kind == Kind::RrResponse
                    && h.token == p.token
                    && h.len == p.block
                    && n == HEADER_LEN + p.block as usize
                    && h.client >= p.base
                    && h.client < p.base + p.clients
            });
            let Some(h) = ok else {
                self.counts.invalid += 1;
                continue;
            };
            let corrupt = p.verify && dgram.get(HEADER_LEN..).map_or(0, checksum) != h.aux;
            let i = h.client - p.base;
            if let Some(s) = self.slots.get_mut(i as usize) {
                let mut a = Answer {
                    p,
                    sched: &mut self.sched,
                    counts: &mut self.counts,
                    hist: &mut self.hist,
                };
                if a.take(s, i, h.seq, corrupt, now) {
                    self.waiting -= 1;
                    if matches!(p.shape, Shape::Closed) {
                        self.arrived_ns = Some(now);
                    }
                    // Nothing else is due on this socket: skip the read that would
                    // only say so (one syscall less per block at low load).
                    if self.waiting == 0 {
                        return;
                    }
                }
            }
        }
    }

    /// Reads what connection `i` has (epoll said it is readable), up to the end of
    /// the one message in flight. The connection is edge-triggered: it is read until
    /// that message is whole or a read finds it empty (the rest of the message is a
    /// new edge). Nothing follows a block before this end's next request, so none is
    /// left unread; bytes an agent sent beyond its block are read as the next
    /// message's header with the next block, and fail the connection then.
    pub(super) fn recv_tcp(&mut self, i: usize, mut sock: &TcpStream) {
        let p = self.p;
        let fail = {
            let Run {
                slots,
                sched,
                counts,
                hist,
                recvbuf,
                waiting,
                arrived_ns,
                ..
            } = self;
            let Some(s) = slots.get_mut(i) else { return };
            if s.dead {
                return;
            }
            let mut a = Answer {
                p,
                sched,
                counts,
                hist,
            };
            loop {
                let want = s.want(p.block, recvbuf.len());
                let n = match sock.read(recvbuf.get_mut(..want).unwrap_or_default()) {
                    Ok(0) => break Some("the agent closed a data connection".to_string()),
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break None,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => break Some(format!("reading a block: {e}")),
                };
                if !s.absorb(recvbuf.get(..n).unwrap_or_default(), p.block, p.verify) {
                    continue;
                }
                let now = now_ns(p.t0);
                // One request in flight per connection: nothing follows its block.
                match a.message(s, i as u32, now) {
                    Ok(completed) => {
                        if completed {
                            *waiting -= 1;
                            if matches!(p.shape, Shape::Closed) {
                                *arrived_ns = Some(now);
                            }
                        }
                        break None;
                    }
                    Err(why) => break Some(why),
                }
            }
        };
        if let Some(why) = fail {
            self.kill(i, why);
        }
    }
}

impl Slot {
    /// What the next read of this TCP connection takes: the rest of the header and
    /// the block at once while the header is incomplete (both arrived together, one
    /// read), else the rest of the block; at most `cap`.
    fn want(&self, block: u32, cap: usize) -> usize {
        if self.hdr_got < HEADER_LEN {
            (HEADER_LEN - self.hdr_got + block as usize).min(cap)
        } else {
            usize::try_from(self.body_left)
                .unwrap_or(usize::MAX)
                .min(cap)
        }
    }

    /// Takes the bytes just read into the message being read (its header, then the
    /// block's length and checksum); true when they completed it.
    fn absorb(&mut self, mut body: &[u8], block: u32, verify: bool) -> bool {
        if self.hdr_got < HEADER_LEN {
            let h = (HEADER_LEN - self.hdr_got).min(body.len());
            if let (Some(dst), Some(src)) = (
                self.hdr.get_mut(self.hdr_got..self.hdr_got + h),
                body.get(..h),
            ) {
                dst.copy_from_slice(src);
            }
            self.hdr_got += h;
            body = body.get(h..).unwrap_or_default();
            if self.hdr_got == HEADER_LEN {
                self.body_left = u64::from(block);
                self.fnv = FNV_INIT;
            }
        }
        if !body.is_empty() {
            if verify {
                self.fnv = fnv_update(self.fnv, body);
            }
            self.body_left -= body.len() as u64;
        }
        let whole = self.hdr_got == HEADER_LEN && self.body_left == 0;
        if whole {
            self.hdr_got = 0;
        }
        whole
    }
}

/// What taking an answer touches besides the client's slot.
struct Answer<'r, 'p> {
    p: &'p Plan<'p>,
    sched: &'r mut Schedule,
    counts: &'r mut RrCounts,
    hist: &'r mut Histogram<u64>,
}

impl Answer<'_, '_> {
    /// A whole message read on TCP connection `i` (its slot `s`): Ok(true) when its
    /// block completed the request waited for; a malformed header fails the
    /// connection, with the reason.
    fn message(&mut self, s: &mut Slot, i: u32, now: u64) -> Result<bool, String> {
        let p = self.p;
        match Header::read(&s.hdr) {
            Ok(h) if h.kind == Kind::RrResponse && h.token == p.token && h.len == p.block => {
                let corrupt = p.verify && s.fnv != h.aux;
                Ok(self.take(s, i, h.seq, corrupt, now))
            }
            _ => {
                self.counts.invalid += 1;
                Err("malformed block header on a TCP connection".into())
            }
        }
    }

    /// A block for request `seq` of slot `s` (client `i` of this thread) arrived;
    /// true when it completed the request the slot was waiting for, which frees the
    /// client (closed loop: it is ready at once; open loop: if its due time passed).
    /// `now`: when the read that brought it returned.
    fn take(&mut self, s: &mut Slot, i: u32, seq: u64, corrupt: bool, now: u64) -> bool {
        let (p, counts) = (self.p, &mut *self.counts);
        let udp = matches!(p.transport, Transport::Udp(_));
        if seq == 0 || seq > s.seq {
            counts.invalid += 1;
            return false;
        }
        if seq < s.highest_rx {
            counts.out_of_order += 1;
        }
        s.highest_rx = s.highest_rx.max(seq);
        let d = s.seq - seq;
        if d >= 64 {
            counts.late += 1;
            p.live.late.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        if s.done & (1 << d) != 0 {
            counts.duplicate += 1;
            return false;
        }
        s.done |= 1 << d;
        if corrupt {
            counts.corrupt += 1;
        }
        if d > 0 || !s.waiting {
            counts.late += 1;
            p.live.late.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        s.waiting = false;
        s.free_since_ns = now;
        match p.shape {
            Shape::Closed => {
                s.due_ns = now;
                self.sched.ready.push_back(i);
            }
            Shape::Open { .. } if s.overdue => self.sched.ready.push_back(i),
            Shape::Open { .. } => {}
        }
        let lat = now.saturating_sub(s.intended_ns);
        if !udp && lat > p.timeout_ns {
            counts.late += 1;
        }
        record(self.hist, lat);
        counts.blocks += 1;
        let live = p.live;
        // This thread is the only writer of its blocks and sum (the ticker reads
        // them): plain stores, no locked read-modify-write per block.
        live.blocks.store(counts.blocks, Ordering::Relaxed);
        let sum = live.lat_sum_ns.load(Ordering::Relaxed);
        live.lat_sum_ns
            .store(sum.wrapping_add(lat), Ordering::Relaxed);
        // The ticker resets the max: a locked update only when this one is larger.
        if lat > live.lat_max_ns.load(Ordering::Relaxed) {
            live.lat_max_ns.fetch_max(lat, Ordering::Relaxed);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tcp_message_read_in_pieces_completes_once_with_its_checksum() {
        let block: Vec<u8> = (0..100u8).collect();
        let mut msg = vec![7u8; HEADER_LEN];
        msg.extend_from_slice(&block);
        // Header split, then header tail with part of the block, then the rest.
        for cuts in [
            vec![10, 60],
            vec![HEADER_LEN, HEADER_LEN + 1],
            vec![1, 2, 3],
        ] {
            let mut s = Slot::default();
            let mut at = 0;
            let mut whole = 0;
            for end in cuts.iter().copied().chain([msg.len()]) {
                assert!(s.want(100, 65_536) >= end - at, "{cuts:?}");
                whole += usize::from(s.absorb(&msg[at..end], 100, true));
                at = end;
            }
            assert_eq!(whole, 1, "{cuts:?}");
            assert_eq!(s.fnv, checksum(&block), "{cuts:?}");
            assert_eq!(s.hdr, [7u8; HEADER_LEN]);
            // Ready for the next message: the header is read first again.
            assert_eq!(s.want(100, 65_536), HEADER_LEN + 100);
        }
        // Reads never take more than the message or the buffer.
        let mut s = Slot::default();
        assert_eq!(s.want(100, 64), 64);
        assert!(!s.absorb(&msg[..HEADER_LEN], 100, false));
        assert_eq!(s.want(100, 65_536), 100);
    }
}
