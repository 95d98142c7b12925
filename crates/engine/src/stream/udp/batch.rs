//! Batched datagram I/O: a sender that hands the kernel many datagrams per
//! `sendmmsg` (with UDP GSO, several to a message, cut back into datagrams by the
//! kernel), and a receiver's source that takes many per `recvmmsg` (with UDP_GRO, a
//! receive may hold several, split here at their segment size so every datagram is
//! counted on its own). Buffers are made once per thread: no allocation, lock or
//! atomic per datagram, only per call.

use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::Ordering::Relaxed;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use mtuperf_proto::msg::udp::{IoFallback, IoMode, UdpConnReport};
use mtuperf_sys::sockopt::mmsg::{self, Datagrams, RecvBatch, SendBatch};

use super::pace::{Pacer, Step};
use super::plan::{ns_since, report, Live, Plan};
use super::sockets::ConnIo;
use crate::payload::incompressible;

/// Datagrams per `sendmmsg` without GSO, and GSO messages per call.
const SEND_DATAGRAMS: usize = 64;
const GSO_MESSAGES: usize = 8;
/// A batch receiver's buffers: at most this many bytes and slots.
const RECV_BYTES: usize = 1 << 20;
const RECV_SLOTS: usize = 64;
/// A UDP_GRO receive holds up to a whole IPv4 datagram's worth.
const GRO_SLOT: usize = 65_535;

/// A batched sender's buffers: one header per datagram of a call, and the
/// message headers; `per` datagrams to a message (GSO) or one.
struct Batcher {
    heads: Vec<u8>,
    out: SendBatch,
    per: usize,
    most: usize,
}

impl Batcher {
    fn new(io: &ConnIo) -> Batcher {
        let per = if io.mode == IoMode::Gso {
            io.segments.max(1) as usize
        } else {
            1
        };
        let most = if per > 1 {
            GSO_MESSAGES * per
        } else {
            SEND_DATAGRAMS
        };
        Batcher {
            heads: vec![0u8; most * HEADER_LEN],
            out: SendBatch::new(most.div_ceil(per), most),
            per,
            most,
        }
    }

    /// Sends `n` datagrams from `header.seq` on, all stamped `header.stamp`, in one
    /// call; returns how many the kernel took.
    fn send(
        &mut self,
        sock: &UdpSocket,
        header: &mut Header,
        n: usize,
        body: &[u8],
    ) -> std::io::Result<usize> {
        let first = header.seq;
        for (j, h) in self.heads.chunks_mut(HEADER_LEN).take(n).enumerate() {
            header.seq = first + j as u64;
            header.write(h);
        }
        header.seq = first;
        let d = Datagrams {
            heads: self.heads.get(..n * HEADER_LEN).unwrap_or_default(),
            head_len: HEADER_LEN,
            body,
            per_message: self.per,
        };
        self.out.send(sock, &d, None)
    }

    /// The route takes no GSO (the path MTU fell below a datagram, or a tunnel):
    /// the rest go one datagram to a message, and the report says why.
    fn without_gso(&mut self, sock: &UdpSocket, errno: i32, rep: &mut UdpConnReport) {
        let _ = mmsg::set_udp_segment(sock, 0);
        self.per = 1;
        self.out = SendBatch::new(self.most, self.most);
        rep.io = Some(IoMode::Batch);
        rep.fallback = Some(IoFallback::Refused { errno });
        rep.segments = 1;
    }
}

/// Sends paced datagrams in batches until the plan's end, its count, or a halt.
/// `io.mode` is Batch or Gso; a GSO send the kernel refuses on this route turns the
/// rest into plain batches (`fallback`), and nothing is counted for the refused call.
pub fn send(sock: &UdpSocket, index: u32, plan: &Plan, live: &Live, io: ConnIo) -> UdpConnReport {
    let block = plan.block as usize;
    let payload = incompressible(block, 0x6d74_7564_7000 + u64::from(index));
    let body = payload.get(HEADER_LEN..).unwrap_or_default();
    let mut b = Batcher::new(&io);
    let mut rep = report(index, sock, true, &io);
    rep.batch = b.most as u32;
    let _ = sock.set_write_timeout(Some(Duration::from_millis(200)));
    let mut pacer = Pacer::batched(plan.rate_bps, plan.block, ns_since(plan.t0), b.most as u64);
    let limit = plan.count.unwrap_or(u64::MAX);
    let mut header = Header {
        kind: Kind::StreamData,
        client: 0,
        token: plan.token,
        seq: 0,
        stamp: 0,
        aux: index,
        len: plan.block,
    };
    let mut consecutive_errors = 0u32;
    while rep.sent < limit && !plan.halt.load(Relaxed) && Instant::now() < plan.end {
        let n = match pacer.step(rep.sent, ns_since(plan.t0)) {
            Step::SleepNs(ns) => {
                let left = plan.end.saturating_duration_since(Instant::now());
                thread::sleep(Duration::from_nanos(ns).min(left));
                continue;
            }
            Step::Send(n) => {
                usize::try_from(n.min(limit - rep.sent)).map_or(b.most, |n| n.min(b.most))
            }
        };
        header.seq = rep.sent;
        header.stamp = ns_since(plan.t0);
        match b.send(sock, &mut header, n, body) {
            Ok(k) => {
                consecutive_errors = 0;
                rep.calls += 1;
                rep.messages += k.div_ceil(b.per) as u64;
                rep.sent += k as u64;
                rep.sent_bytes += (k * block) as u64;
                rep.first_ns.get_or_insert(header.stamp);
                rep.last_ns = Some(header.stamp);
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if b.per > 1 && matches!(e.raw_os_error(), Some(libc::EINVAL | libc::EIO)) => {
                b.without_gso(sock, e.raw_os_error().unwrap_or(0), &mut rep);
            }
            Err(e) => {
                rep.send_errors += 1;
                consecutive_errors += 1;
                if consecutive_errors >= 1000 {
                    rep.error = Some(format!("sending: {e} (1000 times in a row)"));
                    plan.halt.store(true, Relaxed);
                }
                // ECONNREFUSED, ENOBUFS: give the path a moment.
                thread::sleep(Duration::from_micros(200));
            }
        }
        live.sent.store(rep.sent, Relaxed);
        live.sent_bytes.store(rep.sent_bytes, Relaxed);
    }
    rep
}

/// What a receiver's calls moved: calls, messages (as the kernel counts them), and
/// the most datagrams one message held.
#[derive(Debug, Default, Clone, Copy)]
pub struct RecvStats {
    pub calls: u64,
    pub messages: u64,
    pub segments: u32,
}

/// Where a receiver's datagrams come from.
pub enum Source {
    /// One `recv` per datagram, into a buffer that holds any.
    Plain(Vec<u8>),
    /// `recvmmsg` into fixed slots (with UDP_GRO, slots that hold a coalesced
    /// receive).
    Batch(RecvBatch),
}

impl Source {
    pub fn new(io: &ConnIo, block: u32) -> Source {
        let slots = |cap: usize| RecvBatch::new((RECV_BYTES / cap).clamp(1, RECV_SLOTS), cap);
        match io.mode {
            IoMode::Plain | IoMode::Gso => Source::Plain(vec![0u8; 65_536]),
            // One byte more than a datagram: a longer one shows as too long.
            IoMode::Batch => Source::Batch(slots(block as usize + 1)),
            IoMode::Gro => Source::Batch(slots(GRO_SLOT)),
        }
    }

    /// Datagrams one call may take (a GRO slot may hold several).
    pub fn slots(&self) -> usize {
        match self {
            Source::Plain(_) => 1,
            Source::Batch(b) => b.slots(),
        }
    }

    /// One receive call, blocking up to the socket's read timeout: hands `each`
    /// every datagram it took, with the time (ns since `t0`) the call returned.
    pub fn pull(
        &mut self,
        sock: &UdpSocket,
        t0: Instant,
        stats: &mut RecvStats,
        mut each: impl FnMut(&[u8], u64),
    ) {
        match self {
            Source::Plain(buf) => {
                if let Ok(n) = mtuperf_sys::sock::recv(sock, buf) {
                    stats.calls += 1;
                    stats.messages += 1;
                    stats.segments = stats.segments.max(1);
                    each(buf.get(..n).unwrap_or_default(), ns_since(t0));
                }
            }
            Source::Batch(b) => {
                let Ok(n) = b.recv(sock) else {
                    return;
                };
                if n == 0 {
                    return;
                }
                let now = ns_since(t0);
                stats.calls += 1;
                stats.messages += n as u64;
                for m in (0..n).filter_map(|i| b.get(i)) {
                    let mut k = 0u32;
                    for d in m.datagrams() {
                        each(d, now);
                        k += 1;
                    }
                    stats.segments = stats.segments.max(k);
                }
            }
        }
    }
}
