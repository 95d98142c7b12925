//! Figures of a UDP stream run, per direction: what the sender sent, what the
//! receiver got, loss by cause as far as the kernel tells it, and each end's kernel
//! counters and CPU over the run.

use mtuperf_proto::host::{IfaceCounters, SnmpCounters};
use mtuperf_proto::msg::udp::{IoFallback, IoMode, UdpConnReport, UdpEndReport};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::UdpStreamResult;
use crate::stream::End;

const MIB: f64 = 1024.0 * 1024.0;

/// Loss of one direction split by cause. `socket_buffer` is what the receiving
/// sockets' queues dropped (their own count, SO_MEMINFO; the receiving namespace's
/// Udp RcvbufErrors where a socket could not tell), `reassembly` the namespace's Ip
/// ReasmFails, both over the run and capped at what was lost; `never_arrived` is
/// the rest: dropped on the way (a link, a queue, a firewall), or fragments still
/// waiting for reassembly (the kernel counts those as ReasmTimeout only after
/// net.ipv4.ipfrag_time, 30 s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LossCauses {
    /// Datagrams the receiving sockets dropped (their own count, SO_MEMINFO; the receiving
    /// namespace's Udp RcvbufErrors where a socket could not tell), capped at lost.
    pub socket_buffer: u64,
    /// Datagrams lost to IP reassembly failures (ReasmFails), capped at lost.
    pub reassembly: u64,
    /// The rest of the lost datagrams: dropped on the way, or fragments still waiting for
    /// reassembly.
    pub never_arrived: u64,
    /// With UDP_GRO the kernel drops (and counts) a coalesced bundle of datagrams as
    /// one packet: each drop is then taken as this many datagrams (the most one
    /// bundle held), so `socket_buffer` is an upper bound and `never_arrived` a
    /// lower one. Null when every drop is one datagram.
    pub datagrams_per_drop: Option<u32>,
}

/// How one end of a direction moved its datagrams (summed over its sockets).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndIo {
    /// plain, batch, gso (senders) or gro (receivers); the least any socket used
    /// (null: no socket reported one).
    pub mode: Option<IoMode>,
    /// The most datagrams one call could move.
    pub batch: u32,
    /// GSO: datagrams per message at most; GRO: the most one receive held.
    pub segments: u32,
    /// System calls that moved data, and messages as the kernel counts them
    /// (Udp OutDatagrams / InDatagrams count a GSO send or a GRO receive once).
    pub calls: u64,
    pub messages: u64,
    /// Datagrams per call on average.
    pub datagrams_per_call: Option<f64>,
    /// Why a socket used less than `--udp-io` allowed (the first that did).
    pub fallback: Option<IoFallback>,
}

/// Socket buffers of one direction: asked (`--window`, or the default) and what the
/// kernel granted (SO_SNDBUF/SO_RCVBUF: twice the request, capped at
/// net.core.wmem_max/rmem_max unless forced), the smallest over the sockets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Buffers {
    /// Bytes of send and receive buffer asked per socket: `--window`, or the default 4 MiB.
    pub asked: u32,
    /// The sender's SO_SNDBUF as granted (twice the request, capped at net.core.wmem_max
    /// unless forced), smallest over its sockets.
    pub sndbuf: Option<u32>,
    /// The receiver's SO_RCVBUF as granted (twice the request, capped at net.core.rmem_max
    /// unless forced), smallest over its sockets.
    pub rcvbuf: Option<u32>,
}

/// The sender's and the receiver's I/O of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DirectionIo {
    pub sender: EndIo,
    pub receiver: EndIo,
}

fn end_io(conns: &[&UdpConnReport], datagrams: u64) -> EndIo {
    let calls = conns.iter().map(|c| c.calls).sum();
    EndIo {
        mode: conns.iter().map(|c| c.io).min().flatten(),
        batch: conns.iter().map(|c| c.batch).max().unwrap_or(0),
        segments: conns.iter().map(|c| c.segments).max().unwrap_or(0),
        calls,
        messages: conns.iter().map(|c| c.messages).sum(),
        datagrams_per_call: per(datagrams, calls),
        fallback: conns.iter().find_map(|c| c.fallback),
    }
}

/// One direction's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UdpDirection {
    pub sender: End,
    pub receiver: End,
    /// Datagrams the sender handed to its kernel (sender's count).
    pub sent: u64,
    /// Distinct datagrams the receiver got, copies of one it had, and arrivals
    /// below the highest sequence seen (receiver's count).
    pub received: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// sent - received: exact when the sender's count reached the receiver.
    pub lost: u64,
    pub loss_pct: f64,
    pub loss_causes: LossCauses,
    /// The sender's count reached the receiver for every index (else `lost` is
    /// what the receiver could infer from sequence gaps, a lower bound).
    pub exact: bool,
    /// Send calls that failed on the sender (not counted as sent).
    pub send_errors: u64,
    /// UDP payload bit/s offered: sent bytes over the sender's first→last send.
    pub offered_bps: f64,
    /// Received UDP payload bits over the sender's first→last send.
    pub goodput_bps: f64,
    /// RFC 3550 interarrival jitter at the end, largest over the indexes, µs.
    pub jitter_us: f64,
    /// The sending namespace's Ip FragCreates over the run per datagram sent.
    pub fragments_per_datagram: Option<f64>,
    /// Receiving namespace's /proc/net/snmp over the run.
    pub reasm_oks: Option<u64>,
    pub reasm_fails: Option<u64>,
    pub reasm_timeout: Option<u64>,
    pub rcvbuf_errors: Option<u64>,
    /// Udp InErrors other than RcvbufErrors (checksum errors and the like).
    pub other_in_errors: Option<u64>,
    /// Sending namespace's Udp SndbufErrors (a full qdisc or buffer dropped it).
    pub sndbuf_errors: Option<u64>,
    /// Frames the sender's interface sent per datagram sent (None in bidir, where
    /// the interface carries both directions).
    pub tx_frames_per_datagram: Option<f64>,
    /// Frames the receiver's interface received per datagram that reached the
    /// receiving host (received, or dropped at its full socket buffer).
    pub rx_frames_per_datagram: Option<f64>,
    /// Packets the receiving sockets' queues dropped, by their own count
    /// (SO_MEMINFO; a GRO bundle counts once). Null where a socket could not tell.
    pub socket_drops: Option<u64>,
    /// How each end moved the datagrams (`--udp-io`).
    pub io: DirectionIo,
    /// The sender's send and the receiver's receive buffers.
    pub buffers: Buffers,
}

/// One end's CPU over its run (as for TCP streams).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UdpEndCpu {
    pub end: End,
    pub wall_s: f64,
    /// This process's user+sys as % of one core.
    pub process_pct: f64,
    /// All CPUs' busy time as % of one core.
    pub system_busy_pct: f64,
    /// UDP payload this end sent plus received.
    pub bytes_moved: u64,
    /// System busy µs per MiB moved (service demand), and this process's.
    pub service_demand_us_per_mib: Option<f64>,
    pub process_us_per_mib: Option<f64>,
    /// This process's CPU per GiB received (receivers), ms.
    pub process_ms_per_gib_received: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UdpMetrics {
    pub directions: Vec<UdpDirection>,
    pub ends: Vec<UdpEndCpu>,
    /// Received goodput summed over the directions.
    pub goodput_bps: f64,
}

fn snmp_delta(r: &UdpEndReport) -> Option<SnmpCounters> {
    r.after.snmp.zip(r.before.snmp).map(|(a, b)| a.delta(&b))
}

fn span_s(conns: &[&UdpConnReport]) -> f64 {
    let first = conns.iter().filter_map(|c| c.first_ns).min();
    let last = conns.iter().filter_map(|c| c.last_ns).max();
    match (first, last) {
        (Some(f), Some(l)) if l > f => (l - f) as f64 / 1e9,
        _ => 0.0,
    }
}

fn per(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Frames per datagram from an end's interface counters over the run (`f`), none in
/// bidir, where one interface carries both directions.
fn frames(
    end: &UdpEndReport,
    bidir: bool,
    f: impl Fn(&IfaceCounters) -> Option<f64>,
) -> Option<f64> {
    let delta = end
        .after
        .iface
        .zip(end.before.iface)
        .map(|(a, b)| a.delta(&b));
    delta.filter(|_| !bidir).and_then(|d| f(&d))
}

/// `lost` split by cause: the receiving sockets' drops (or the namespace's
/// RcvbufErrors where a socket could not tell), then failed reassembly, then the
/// rest.
fn causes(
    lost: u64,
    socket_drops: Option<u64>,
    rcvbuf_errors: Option<u64>,
    reasm_fails: Option<u64>,
    receiver: &EndIo,
) -> LossCauses {
    // A GRO drop is a bundle: take each as the most datagrams a bundle the receiver
    // got held (a path that cuts GSO sends before they arrive, or a device that
    // does not coalesce, makes no bundles, and then a drop is one datagram).
    let per_drop = (receiver.mode == Some(IoMode::Gro))
        .then_some(receiver.segments)
        .filter(|&n| n > 1);
    let socket_buffer = socket_drops
        .map_or(rcvbuf_errors.unwrap_or(0), |d| {
            d * u64::from(per_drop.unwrap_or(1))
        })
        .min(lost);
    let reassembly = reasm_fails.unwrap_or(0).min(lost - socket_buffer);
    LossCauses {
        socket_buffer,
        reassembly,
        never_arrived: lost - socket_buffer - reassembly,
        datagrams_per_drop: per_drop.filter(|_| socket_drops.is_some_and(|d| d > 0)),
    }
}

/// One direction's datagrams and bytes as its ends' sockets counted them.
struct Counted {
    /// Sent, as the sender counted (0 when its report is missing).
    by_sender: u64,
    /// Sent: the sender's count, or the receiver's count of it when the sender's
    /// report is missing.
    sent: u64,
    received: u64,
    sent_bytes: u64,
    received_bytes: u64,
    /// Datagrams the receiver's sockets dropped (None: no receiver's report, or a
    /// socket that could not tell).
    socket_drops: Option<u64>,
}

fn counted(s: &[&UdpConnReport], r: &[&UdpConnReport]) -> Counted {
    let by_sender: u64 = s.iter().map(|c| c.sent).sum();
    Counted {
        by_sender,
        sent: if s.is_empty() {
            r.iter().map(|c| c.expected.unwrap_or(c.next_seq)).sum()
        } else {
            by_sender
        },
        received: r.iter().map(|c| c.received).sum(),
        sent_bytes: s.iter().map(|c| c.sent_bytes).sum(),
        received_bytes: r.iter().map(|c| c.received_bytes).sum(),
        socket_drops: if r.is_empty() {
            None
        } else {
            r.iter().map(|c| c.drops).sum()
        },
    }
}

/// Bits per second of `bytes` over `span_s` seconds (0 over no time).
fn rate(bytes: u64, span_s: f64) -> f64 {
    if span_s > 0.0 {
        bytes as f64 * 8.0 / span_s
    } else {
        0.0
    }
}

fn direction(
    sender: End,
    snd: &UdpEndReport,
    rcv: &UdpEndReport,
    bidir: bool,
    asked_buffer: u32,
) -> Option<UdpDirection> {
    let s: Vec<&UdpConnReport> = snd.conns.iter().filter(|c| c.sending).collect();
    let r: Vec<&UdpConnReport> = rcv.conns.iter().filter(|c| !c.sending).collect();
    if s.is_empty() && r.is_empty() {
        return None;
    }
    let n = counted(&s, &r);
    let (sent, received, sent_by_sender) = (n.sent, n.received, n.by_sender);
    let lost = sent.saturating_sub(received);
    let sd = snmp_delta(snd);
    let rd = snmp_delta(rcv);
    let rcvbuf = rd.map(|d| d.udp_rcvbuf_errors);
    let reasm_fails = rd.map(|d| d.ip_reasm_fails);
    let io = DirectionIo {
        sender: end_io(&s, sent_by_sender),
        receiver: end_io(&r, received),
    };
    let socket_drops = n.socket_drops;
    let loss_causes = causes(lost, socket_drops, rcvbuf, reasm_fails, &io.receiver);
    let span = span_s(&s);
    Some(UdpDirection {
        sender,
        receiver: match sender {
            End::Client => End::Agent,
            End::Agent => End::Client,
        },
        sent,
        received,
        duplicated: r.iter().map(|c| c.duplicated).sum(),
        reordered: r.iter().map(|c| c.reordered).sum(),
        lost,
        loss_pct: per(lost * 100, sent).unwrap_or(0.0),
        loss_causes,
        exact: !s.is_empty() && !r.is_empty() && r.iter().all(|c| c.expected.is_some()),
        send_errors: s.iter().map(|c| c.send_errors).sum(),
        offered_bps: rate(n.sent_bytes, span),
        goodput_bps: rate(n.received_bytes, span),
        jitter_us: r.iter().map(|c| c.jitter_ns).max().unwrap_or(0) as f64 / 1e3,
        fragments_per_datagram: sd.and_then(|d| per(d.ip_frag_creates, sent_by_sender)),
        reasm_oks: rd.map(|d| d.ip_reasm_oks),
        reasm_fails,
        reasm_timeout: rd.map(|d| d.ip_reasm_timeout),
        rcvbuf_errors: rcvbuf,
        other_in_errors: rd.map(|d| d.udp_in_errors.saturating_sub(d.udp_rcvbuf_errors)),
        sndbuf_errors: sd.map(|d| d.udp_sndbuf_errors),
        tx_frames_per_datagram: frames(snd, bidir, |d| per(d.tx_packets, sent_by_sender)),
        // Datagrams that reached the receiving host: received, or dropped at its full
        // socket buffer after their frames arrived (in datagrams, not GRO bundles).
        rx_frames_per_datagram: frames(rcv, bidir, |d| {
            per(d.rx_packets, received + loss_causes.socket_buffer)
        }),
        socket_drops,
        io,
        buffers: Buffers {
            asked: asked_buffer,
            sndbuf: s.iter().map(|c| c.sndbuf).min(),
            rcvbuf: r.iter().map(|c| c.rcvbuf).min(),
        },
    })
}

fn cpu(end: End, r: &UdpEndReport) -> UdpEndCpu {
    let wall = r.after.at_ns.saturating_sub(r.before.at_ns).max(1);
    let sys = r.after.cpu.system.delta(&r.before.cpu.system);
    let p = &r.after.cpu.process;
    let q = &r.before.cpu.process;
    let proc_ns = p.user_ns.saturating_sub(q.user_ns) + p.system_ns.saturating_sub(q.system_ns);
    let received: u64 = r.conns.iter().map(|c| c.received_bytes).sum();
    let moved: u64 = r.conns.iter().map(|c| c.sent_bytes).sum::<u64>() + received;
    let mib = moved as f64 / MIB;
    let gib_received = received as f64 / MIB / 1024.0;
    UdpEndCpu {
        end,
        wall_s: wall as f64 / 1e9,
        process_pct: proc_ns as f64 * 100.0 / wall as f64,
        system_busy_pct: sys.busy_ns() as f64 * 100.0 / wall as f64,
        bytes_moved: moved,
        service_demand_us_per_mib: (mib > 0.0).then(|| sys.busy_ns() as f64 / 1e3 / mib),
        process_us_per_mib: (mib > 0.0).then(|| proc_ns as f64 / 1e3 / mib),
        process_ms_per_gib_received: (gib_received > 0.0)
            .then(|| proc_ns as f64 / 1e6 / gib_received),
    }
}

pub fn compute(res: &UdpStreamResult) -> UdpMetrics {
    let bidir = res.request.connections() > res.request.streams;
    let directions: Vec<UdpDirection> = [
        (End::Client, &res.client, &res.agent),
        (End::Agent, &res.agent, &res.client),
    ]
    .into_iter()
    .filter(|(e, _, _)| match e {
        End::Client => (0..res.request.connections()).any(|i| res.request.client_sends_on(i)),
        End::Agent => (0..res.request.connections()).any(|i| !res.request.client_sends_on(i)),
    })
    .filter_map(|(e, s, r)| {
        let asked = res.request.window.unwrap_or(super::sockets::DEFAULT_BUFFER);
        direction(e, s, r, bidir, asked)
    })
    .collect();
    UdpMetrics {
        goodput_bps: directions.iter().map(|d| d.goodput_bps).sum(),
        ends: vec![cpu(End::Client, &res.client), cpu(End::Agent, &res.agent)],
        directions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rx(mode: IoMode, segments: u32) -> EndIo {
        EndIo {
            mode: Some(mode),
            segments,
            ..EndIo::default()
        }
    }

    #[test]
    fn loss_splits_by_cause_each_capped_at_what_was_lost() {
        let plain = rx(IoMode::Batch, 1);
        // The sockets' own drops first, then reassembly, then the rest.
        let c = causes(100, Some(30), Some(99), Some(20), &plain);
        assert_eq!(
            (c.socket_buffer, c.reassembly, c.never_arrived),
            (30, 20, 50)
        );
        assert_eq!(c.datagrams_per_drop, None);
        // No socket count: the namespace's RcvbufErrors, capped at the loss.
        let c = causes(10, None, Some(99), Some(5), &plain);
        assert_eq!((c.socket_buffer, c.reassembly, c.never_arrived), (10, 0, 0));
        // Nothing lost: nothing to blame, whatever the counters say.
        assert_eq!(
            causes(0, Some(3), Some(3), Some(3), &plain),
            LossCauses::default()
        );
    }

    #[test]
    fn a_gro_drop_counts_as_the_largest_bundle_received_an_upper_bound() {
        // 10 bundles of up to 7 dropped, 65 lost: all at the socket (≤ 70).
        let c = causes(65, Some(10), Some(10), Some(0), &rx(IoMode::Gro, 7));
        assert_eq!((c.socket_buffer, c.never_arrived), (65, 0));
        assert_eq!(c.datagrams_per_drop, Some(7));
        // 100 lost: at most 70 at the socket, at least 30 never arrived.
        let c = causes(100, Some(10), Some(10), Some(0), &rx(IoMode::Gro, 7));
        assert_eq!((c.socket_buffer, c.never_arrived), (70, 30));
        // GRO on but nothing coalesced (offloads off): one datagram a drop.
        let c = causes(100, Some(10), Some(10), Some(0), &rx(IoMode::Gro, 1));
        assert_eq!((c.socket_buffer, c.never_arrived), (10, 90));
        assert_eq!(c.datagrams_per_drop, None);
        // No drop: no multiplier to report.
        let c = causes(5, Some(0), Some(0), Some(0), &rx(IoMode::Gro, 7));
        assert_eq!(
            (c.socket_buffer, c.never_arrived, c.datagrams_per_drop),
            (0, 5, None)
        );
    }
}
