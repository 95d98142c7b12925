//! The data threads of one end: a paced sender or a counting receiver per index,
//! each on its own connected UDP socket (the kernel then delivers only the peer's
//! datagrams; the token and index in every header are checked on top). Counters are
//! atomics written by their one thread and read by the ticker. A sender or receiver
//! moves its datagrams as its socket's [`ConnIo`] says: one call per datagram here,
//! or batches (`batch`); the counting is the same either way.

use std::io::ErrorKind;
use std::net::UdpSocket;
use std::sync::atomic::Ordering::Relaxed;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use mtuperf_proto::msg::udp::{IoMode, UdpConnReport};

use super::batch::{self, RecvStats, Source};
use super::pace::{Pacer, Step};
use super::plan::{ns_since, report, Live, Plan, UNKNOWN};
use super::seq::{Arrival, SeqTracker};
use super::sockets::ConnIo;
use crate::payload::incompressible;

/// A receiver whose sender's count has come stops once nothing arrived for this long.
pub const QUIET: Duration = Duration::from_millis(300);
/// ... and in any case this long after the count came.
pub const DRAIN: Duration = Duration::from_secs(3);
/// Sends paced datagrams until the plan's end, its count, or a halt: one `send` per
/// datagram, or in batches.
pub fn send(sock: &UdpSocket, index: u32, plan: &Plan, live: &Live, io: ConnIo) -> UdpConnReport {
    if io.mode != IoMode::Plain {
        return batch::send(sock, index, plan, live, io);
    }
    let mut rep = report(index, sock, true, &io);
    let _ = sock.set_write_timeout(Some(Duration::from_millis(200)));
    let mut buf = incompressible(plan.block as usize, 0x6d74_7564_7000 + u64::from(index));
    let mut pacer = Pacer::new(plan.rate_bps, plan.block, ns_since(plan.t0));
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
        match pacer.step(rep.sent, ns_since(plan.t0)) {
            Step::SleepNs(ns) => {
                let left = plan.end.saturating_duration_since(Instant::now());
                thread::sleep(Duration::from_nanos(ns).min(left));
            }
            Step::Send(n) => {
                for _ in 0..n.min(limit - rep.sent) {
                    header.seq = rep.sent;
                    header.stamp = ns_since(plan.t0);
                    header.write(&mut buf);
                    match mtuperf_sys::sock::send(sock, &buf) {
                        Ok(_) => {
                            consecutive_errors = 0;
                            rep.calls += 1;
                            rep.messages += 1;
                            rep.sent += 1;
                            rep.sent_bytes += u64::from(plan.block);
                            rep.first_ns.get_or_insert(header.stamp);
                            rep.last_ns = Some(header.stamp);
                        }
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(e) => {
                            rep.send_errors += 1;
                            consecutive_errors += 1;
                            if consecutive_errors >= 1000 {
                                rep.error = Some(format!("sending: {e} (1000 times in a row)"));
                                plan.halt.store(true, Relaxed);
                            }
                            // ECONNREFUSED, ENOBUFS: give the path a moment.
                            thread::sleep(Duration::from_micros(200));
                            break;
                        }
                    }
                }
                live.sent.store(rep.sent, Relaxed);
                live.sent_bytes.store(rep.sent_bytes, Relaxed);
            }
        }
    }
    rep
}

/// Whether a datagram of `n` bytes in `buf` belongs to this test's index.
fn accept(buf: &[u8], n: usize, plan: &Plan, index: u32) -> Option<Header> {
    if n != plan.block as usize || n < HEADER_LEN {
        return None;
    }
    let h = Header::read(buf.get(..n)?).ok()?;
    (h.kind == Kind::StreamData && h.token == plan.token && h.aux == index && h.len == plan.block)
        .then_some(h)
}

/// Counts datagrams until the sender's count is reached, or quiet/drain deadlines
/// after it came, or the hard end.
pub fn receive(
    sock: &UdpSocket,
    index: u32,
    plan: &Plan,
    live: &Live,
    io: ConnIo,
) -> UdpConnReport {
    let mut rep = report(index, sock, false, &io);
    let _ = sock.set_read_timeout(Some(Duration::from_millis(20)));
    let mut source = Source::new(&io, plan.block);
    rep.batch = source.slots() as u32;
    let mut stats = RecvStats::default();
    let mut t = SeqTracker::default();
    let mut count_at: Option<Instant> = None;
    let mut last_arrival = Instant::now();
    loop {
        let now = Instant::now();
        let expected = live.expected.load(Relaxed);
        if expected != UNKNOWN {
            let at = *count_at.get_or_insert(now);
            if t.unique >= expected
                || now.saturating_duration_since(last_arrival.max(at)) >= QUIET
                || now >= at + DRAIN
            {
                rep.expected = Some(expected);
                break;
            }
        }
        if plan.abort.load(Relaxed) || now >= plan.hard_end {
            if expected == UNKNOWN {
                rep.error = Some("the sender's final count never came".into());
            }
            break;
        }
        let mut arrived = false;
        source.pull(sock, plan.t0, &mut stats, |dgram, now_ns| {
            let Some(h) = accept(dgram, dgram.len(), plan, index) else {
                rep.rejected += 1;
                return;
            };
            arrived = true;
            match t.arrive(h.seq, h.stamp, now_ns) {
                Arrival::Bogus => rep.rejected += 1,
                Arrival::Duplicate => {}
                Arrival::New | Arrival::Late => {
                    rep.received_bytes += dgram.len() as u64;
                    rep.first_ns.get_or_insert(now_ns);
                    rep.last_ns = Some(now_ns);
                }
            }
        });
        if !arrived {
            continue;
        }
        last_arrival = Instant::now();
        live.received.store(t.unique, Relaxed);
        live.received_bytes.store(rep.received_bytes, Relaxed);
        live.duplicated.store(t.duplicated, Relaxed);
        live.reordered.store(t.reordered, Relaxed);
        live.next_seq.store(t.next, Relaxed);
        live.jitter_ns.store(t.jitter_ns(), Relaxed);
    }
    rep.received = t.unique;
    rep.duplicated = t.duplicated;
    rep.reordered = t.reordered;
    rep.next_seq = t.next;
    rep.jitter_ns = t.jitter_ns();
    rep.calls = stats.calls;
    rep.messages = stats.messages;
    rep.segments = stats.segments;
    rep.drops = mtuperf_sys::sockopt::socket_drops(sock).ok().map(u64::from);
    rep
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn plan() -> Plan {
        let now = Instant::now();
        Plan {
            token: 0xfeed,
            block: 100,
            rate_bps: 0,
            count: None,
            t0: now,
            end: now,
            hard_end: now,
            halt: AtomicBool::new(false),
            abort: AtomicBool::new(false),
            pin: crate::placement::Pinning::new(None),
        }
    }

    fn datagram(kind: Kind, token: u64, index: u32, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        let h = Header {
            kind,
            client: 0,
            token,
            seq: 7,
            stamp: 1,
            aux: index,
            len: 100,
        };
        h.write(&mut b);
        b
    }

    #[test]
    fn only_this_tests_datagrams_are_accepted() {
        let p = plan();
        let ok = datagram(Kind::StreamData, 0xfeed, 3, 100);
        assert_eq!(accept(&ok, 100, &p, 3).map(|h| h.seq), Some(7));
        // Another session's token, another index, another kind, a wrong size, garbage.
        assert!(accept(&datagram(Kind::StreamData, 0xbeef, 3, 100), 100, &p, 3).is_none());
        assert!(accept(&ok, 100, &p, 4).is_none());
        assert!(accept(&datagram(Kind::RrRequest, 0xfeed, 3, 100), 100, &p, 3).is_none());
        assert!(accept(&datagram(Kind::StreamData, 0xfeed, 3, 101), 101, &p, 3).is_none());
        assert!(accept(&[0xff; 100], 100, &p, 3).is_none());
        assert!(accept(&ok, 30, &p, 3).is_none());
    }
}
