//! One end's data phase: a thread per index, and on this thread a ticker that cuts
//! the end's counters (and the kernel's: /proc/net/snmp of this network namespace,
//! the route's interface) into intervals, tells the caller when this end's senders
//! are done (so it can send their counts), and ends when every thread has.

use std::net::UdpSocket;
use std::sync::atomic::Ordering::Relaxed;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::host::{IfaceCounters, SnmpCounters};
use mtuperf_proto::msg::udp::{UdpConnReport, UdpInterval};
use mtuperf_proto::msg::MAX_INTERVALS;

use mtuperf_proto::msg::udp::UdpIo;

use super::data;
use super::plan::{Live, Plan};
use super::sockets::{self, ConnIo};
use crate::sampler::Sampler;
use crate::tick::{Running, STEP};

pub struct Conn {
    pub index: u32,
    pub sock: UdpSocket,
    pub sending: bool,
    pub io: ConnIo,
}

/// This end's sockets as data connections (`sending(i)`: whether index `i` sends),
/// each with its I/O set up now, before the peer may send: a receiver's UDP_GRO must
/// be on when the first datagram arrives, or the kernel cuts that GSO send into
/// datagrams.
pub fn conns(
    socks: Vec<UdpSocket>,
    sending: impl Fn(u32) -> bool,
    asked: UdpIo,
    block: u32,
) -> Vec<Conn> {
    socks
        .into_iter()
        .zip(0u32..)
        .map(|(sock, index)| {
            let sending = sending(index);
            let io = sockets::io_for(&sock, sending, asked, block);
            Conn {
                index,
                sock,
                sending,
                io,
            }
        })
        .collect()
}

/// Counters at one instant: the sums over this end's indexes, and the kernel's.
#[derive(Default)]
struct Snap {
    at_ns: u64,
    sent: u64,
    sent_bytes: u64,
    received: u64,
    received_bytes: u64,
    duplicated: u64,
    reordered: u64,
    /// Σ (next sequence - distinct received) over the receiving indexes.
    gaps: u64,
    jitter_ns: u64,
    snmp: Option<SnmpCounters>,
    iface: Option<IfaceCounters>,
}

fn snap(lives: &[Live], plan: &Plan, sampler: &Sampler) -> Snap {
    let mut s = Snap {
        at_ns: plan.t0.elapsed().as_nanos() as u64,
        snmp: mtuperf_sys::snmp::read().ok(),
        iface: sampler
            .iface
            .as_ref()
            .and_then(|i| mtuperf_sys::netdev::counters(&i.name).ok()),
        ..Snap::default()
    };
    for l in lives {
        s.sent += l.sent.load(Relaxed);
        s.sent_bytes += l.sent_bytes.load(Relaxed);
        let received = l.received.load(Relaxed);
        s.received += received;
        s.received_bytes += l.received_bytes.load(Relaxed);
        s.duplicated += l.duplicated.load(Relaxed);
        s.reordered += l.reordered.load(Relaxed);
        s.gaps += l.next_seq.load(Relaxed).saturating_sub(received);
        s.jitter_ns = s.jitter_ns.max(l.jitter_ns.load(Relaxed));
    }
    s
}

fn interval(a: &Snap, b: &Snap) -> UdpInterval {
    UdpInterval {
        start_ns: a.at_ns,
        end_ns: b.at_ns,
        sent: b.sent - a.sent,
        sent_bytes: b.sent_bytes - a.sent_bytes,
        received: b.received - a.received,
        received_bytes: b.received_bytes - a.received_bytes,
        lost: b.gaps as i64 - a.gaps as i64,
        duplicated: b.duplicated - a.duplicated,
        reordered: b.reordered - a.reordered,
        jitter_ns: b.jitter_ns,
        snmp: b.snmp.zip(a.snmp).map(|(b, a)| b.delta(&a)),
        iface: b.iface.zip(a.iface).map(|(b, a)| b.delta(&a)),
    }
}

/// Merges adjacent pairs so a long run keeps at most [`MAX_INTERVALS`].
fn bound(v: &mut Vec<UdpInterval>) {
    if v.len() < MAX_INTERVALS {
        return;
    }
    let merged = v
        .chunks(2)
        .map(|c| {
            let mut m = c[0];
            if let Some(n) = c.get(1) {
                m.end_ns = n.end_ns;
                m.sent += n.sent;
                m.sent_bytes += n.sent_bytes;
                m.received += n.received;
                m.received_bytes += n.received_bytes;
                m.lost += n.lost;
                m.duplicated += n.duplicated;
                m.reordered += n.reordered;
                m.jitter_ns = n.jitter_ns;
                m.snmp = m.snmp.zip(n.snmp).map(|(a, b)| add_snmp(&a, &b));
                m.iface = m.iface.zip(n.iface).map(|(a, b)| add_iface(&a, &b));
            }
            m
        })
        .collect();
    *v = merged;
}

fn add_snmp(a: &SnmpCounters, b: &SnmpCounters) -> SnmpCounters {
    // delta() of a sum: b + a = (a + b) - 0, field by field.
    let mut s = *b;
    s.ip_frag_creates += a.ip_frag_creates;
    s.ip_frag_oks += a.ip_frag_oks;
    s.ip_frag_fails += a.ip_frag_fails;
    s.ip_reasm_reqds += a.ip_reasm_reqds;
    s.ip_reasm_oks += a.ip_reasm_oks;
    s.ip_reasm_fails += a.ip_reasm_fails;
    s.ip_reasm_timeout += a.ip_reasm_timeout;
    s.udp_in_datagrams += a.udp_in_datagrams;
    s.udp_out_datagrams += a.udp_out_datagrams;
    s.udp_in_errors += a.udp_in_errors;
    s.udp_rcvbuf_errors += a.udp_rcvbuf_errors;
    s.udp_sndbuf_errors += a.udp_sndbuf_errors;
    s.tcp_retrans_segs += a.tcp_retrans_segs;
    s.tcp_out_segs += a.tcp_out_segs;
    s.tcp_in_segs += a.tcp_in_segs;
    s
}

fn add_iface(a: &IfaceCounters, b: &IfaceCounters) -> IfaceCounters {
    IfaceCounters {
        rx_packets: a.rx_packets + b.rx_packets,
        tx_packets: a.tx_packets + b.tx_packets,
        rx_bytes: a.rx_bytes + b.rx_bytes,
        tx_bytes: a.tx_bytes + b.tx_bytes,
        rx_errors: a.rx_errors + b.rx_errors,
        tx_errors: a.tx_errors + b.tx_errors,
        rx_dropped: a.rx_dropped + b.rx_dropped,
        tx_dropped: a.tx_dropped + b.tx_dropped,
    }
}

/// Runs this end's threads to their end. `on_interval` gets each interval as it
/// closes; `on_sent` once, when every sender of this end is done, the count each
/// index sent (0 for receiving indexes).
pub fn run(
    conns: Vec<Conn>,
    plan: &Plan,
    lives: &[Live],
    sampler: &Sampler,
    every: Duration,
    mut on_interval: impl FnMut(&UdpInterval),
    mut on_sent: impl FnMut(Vec<u64>),
) -> (Vec<UdpConnReport>, Vec<UdpInterval>) {
    let every = every.max(Duration::from_millis(10));
    let mut intervals = Vec::new();
    // Before any thread starts, so the intervals add up to the totals.
    let mut last = snap(lives, plan, sampler);
    // Every thread's end wakes this loop (the last sender's and the last thread's
    // matter), so it sleeps up to a step between interval boundaries.
    let all = Running::new(conns.len());
    let senders = Running::new(conns.iter().filter(|c| c.sending).count());
    let reports = thread::scope(|s| {
        let handles: Vec<_> = conns
            .into_iter()
            .map(|c| {
                let live = &lives[c.index as usize];
                let (all, senders) = (&all, &senders);
                let h = s.spawn(move || {
                    plan.pin.enter(if c.sending {
                        mtuperf_proto::placement::ThreadRole::Sender
                    } else {
                        mtuperf_proto::placement::ThreadRole::Receiver
                    });
                    let r = if c.sending {
                        let r = data::send(&c.sock, c.index, plan, live, c.io);
                        senders.finish_one();
                        r
                    } else {
                        data::receive(&c.sock, c.index, plan, live, c.io)
                    };
                    all.finish_one();
                    r
                });
                h
            })
            .collect();
        let mut next_tick = Instant::now() + every;
        let mut told = false;
        loop {
            let all_done = all.is_done();
            if !told && senders.is_done() {
                told = true;
                on_sent(lives.iter().map(|l| l.sent.load(Relaxed)).collect());
            }
            if all_done || Instant::now() >= next_tick {
                let now = snap(lives, plan, sampler);
                let i = interval(&last, &now);
                on_interval(&i);
                bound(&mut intervals);
                intervals.push(i);
                last = now;
                next_tick += every;
            }
            if all_done {
                break;
            }
            let left = next_tick.saturating_duration_since(Instant::now());
            thread::park_timeout(left.min(STEP));
        }
        let mut reports: Vec<UdpConnReport> =
            handles.into_iter().filter_map(|h| h.join().ok()).collect();
        reports.sort_by_key(|r| r.index);
        reports
    });
    (reports, intervals)
}
