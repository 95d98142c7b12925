//! The receiving half of a requester thread: reads answers (UDP datagrams, or TCP
//! messages in pieces), checks them against the client's outstanding request and
//! records the block's latency. Each answer touches only its own client's slot.

use std::io::{ErrorKind, Read};
use std::net::{TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
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
                sock.recv(&mut self.recvbuf)
            } else {
                nix::sys::socket::recv(
                    sock.as_raw_fd(),
                    &mut self.recvbuf,
                    nix::sys::socket::MsgFlags::MSG_DONTWAIT,
                )
                .map_err(std::io::Error::from)
            };
            block = false;
            let n = match got {
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return,
                Err(_) => continue,
            };
            let p = self.p;
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
                if a.take(s, i, h.seq, corrupt) {
                    self.waiting -= 1;
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
    /// the one message in flight.
    pub(super) fn recv_tcp(&mut self, i: usize, mut sock: &TcpStream) {
        let p = self.p;
        let mut fail = None;
        {
            let Run {
                slots,
                sched,
                counts,
                hist,
                recvbuf,
                waiting,
                ..
            } = self;
            let Some(s) = slots.get_mut(i) else { return };
            if s.dead {
                return;
            }
            loop {
                // The header and the block in one read where they both arrived (one
                // message in flight per connection: nothing follows the block).
                let res = if s.hdr_got < HEADER_LEN {
                    let want = (HEADER_LEN - s.hdr_got + p.block as usize).min(recvbuf.len());
                    sock.read(recvbuf.get_mut(..want).unwrap_or_default())
                } else {
                    let want = usize::try_from(s.body_left)
                        .unwrap_or(usize::MAX)
                        .min(recvbuf.len());
                    sock.read(recvbuf.get_mut(..want).unwrap_or_default())
                };
                let n = match res {
                    Ok(0) => {
                        fail = Some("the agent closed a data connection".to_string());
                        break;
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => {
                        fail = Some(format!("reading a block: {e}"));
                        break;
                    }
                };
                let mut body = recvbuf.get(..n).unwrap_or_default();
                if s.hdr_got < HEADER_LEN {
                    let h = (HEADER_LEN - s.hdr_got).min(n);
                    if let (Some(dst), Some(src)) =
                        (s.hdr.get_mut(s.hdr_got..s.hdr_got + h), body.get(..h))
                    {
                        dst.copy_from_slice(src);
                    }
                    s.hdr_got += h;
                    body = body.get(h..).unwrap_or_default();
                    if s.hdr_got == HEADER_LEN {
                        s.body_left = u64::from(p.block);
                        s.fnv = FNV_INIT;
                    }
                }
                if !body.is_empty() {
                    if p.verify {
                        s.fnv = fnv_update(s.fnv, body);
                    }
                    s.body_left -= body.len() as u64;
                }
                if s.hdr_got == HEADER_LEN && s.body_left == 0 {
                    s.hdr_got = 0;
                    match Header::read(&s.hdr) {
                        Ok(h)
                            if h.kind == Kind::RrResponse
                                && h.token == p.token
                                && h.len == p.block =>
                        {
                            let corrupt = p.verify && s.fnv != h.aux;
                            let mut a = Answer {
                                p,
                                sched,
                                counts,
                                hist,
                            };
                            if a.take(s, i as u32, h.seq, corrupt) {
                                *waiting -= 1;
                            }
                            // One request in flight per connection: nothing more to read.
                            break;
                        }
                        _ => {
                            counts.invalid += 1;
                            fail = Some("malformed block header on a TCP connection".into());
                            break;
                        }
                    }
                }
            }
        }
        if let Some(why) = fail {
            self.kill(i, why);
        }
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
    /// A block for request `seq` of slot `s` (client `i` of this thread) arrived;
    /// true when it completed the request the slot was waiting for, which frees the
    /// client (closed loop: it is ready at once; open loop: if its due time passed).
    fn take(&mut self, s: &mut Slot, i: u32, seq: u64, corrupt: bool) -> bool {
        let (p, counts) = (self.p, &mut *self.counts);
        let now = now_ns(p.t0);
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
        p.live.blocks.fetch_add(1, Ordering::Relaxed);
        p.live.lat_sum_ns.fetch_add(lat, Ordering::Relaxed);
        p.live.lat_max_ns.fetch_max(lat, Ordering::Relaxed);
        true
    }
}
