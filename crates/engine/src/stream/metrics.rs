//! Derived figures of a stream run, computed once so every renderer shows the same
//! numbers. Definitions (also in the README):
//!
//! * goodput (first→last byte): bytes the receiver read after its first read returned,
//!   divided by the time from that first return to the last read's return;
//! * goodput (wall): all bytes read / the receiver's wall time from Go to EOF;
//! * perl-sockets figures, receiver side, under their own names: "packets" are
//!   application reads, network elapsed is the time spent inside read();
//! * CPU: process user+sys from getrusage and system-wide busy time from /proc/stat,
//!   as % of one core over this end's wall time; service demand is system-wide busy
//!   µs (all CPUs) per MiB moved by this end (netperf's definition, per MiB);
//! * frames per block: interface packets in the data direction (sender tx, receiver
//!   rx) per block-sized write. With TSO/GSO/GRO on, these are super-packets.

use mtuperf_proto::host::{HostSnapshot, IfaceInfo, TcpInfo};
use mtuperf_proto::msg::{ConnReport, EndReport, IntervalSample};
use serde::{Deserialize, Serialize};

pub use super::ends::{EndMetrics, IfaceMetrics};
use super::limits::shares;
use super::verdict::{decide, Evidence, LimitVerdict};
use super::{End, StreamResult};

const MIB: f64 = 1_048_576.0;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PerlFigures {
    pub packets_received: u64,
    pub bytes_received: u64,
    pub avg_packet_size: f64,
    pub network_elapsed_s: f64,
    pub total_elapsed_s: f64,
    pub average_ms: f64,
    pub avg_ms_per_mib: f64,
    pub avg_mib_per_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirectionMetrics {
    pub sender: End,
    pub receiver: End,
    pub bytes_written: u64,
    pub bytes_read: u64,
    /// Bytes written == bytes read.
    pub complete: bool,
    pub writes: u64,
    pub reads: u64,
    pub goodput_first_last_bps: Option<f64>,
    pub goodput_wall_bps: f64,
    /// Goodput after the omitted warm-up (None when nothing was omitted).
    pub goodput_after_omit_bps: Option<f64>,
    pub omitted_bytes: u64,
    pub perl: PerlFigures,
    /// Receive coalescing: waits after a read that drained the socket, summed over
    /// the receiving connections, and the longest time one of them spent waiting.
    #[serde(default)]
    pub receiver_waits: u64,
    #[serde(default)]
    pub receiver_wait_s: f64,
    /// TCP_INFO of the sending connections at their end.
    pub sender_tcp: Vec<TcpInfo>,
    /// What limited this direction (see `verdict`). Absent in documents stored before
    /// the verdict existed.
    #[serde(default)]
    pub limit: Option<LimitVerdict>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamMetrics {
    pub directions: Vec<DirectionMetrics>,
    pub ends: Vec<EndMetrics>,
    /// Sum of all directions' goodput (first→last byte), the headline figure.
    pub headline_bps: f64,
    pub advice: Vec<String>,
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn direction(
    sender_end: End,
    sender: &[&ConnReport],
    receiver: &[&ConnReport],
    receiver_report: &EndReport,
    omit_ns: u64,
) -> DirectionMetrics {
    let written: u64 = sender.iter().map(|c| c.bytes).sum();
    let read: u64 = receiver.iter().map(|c| c.bytes).sum();
    let reads: u64 = receiver.iter().map(|c| c.calls).sum();
    let first = receiver.iter().filter_map(|c| c.first_byte_ns).min();
    let last = receiver.iter().filter_map(|c| c.last_byte_ns).max();
    let first_bytes: u64 = receiver
        .iter()
        .filter(|c| c.first_byte_ns == first)
        .map(|c| c.first_read_bytes)
        .sum();
    let goodput_first_last_bps = match (first, last) {
        (Some(f), Some(l)) if l > f => Some((read - first_bytes) as f64 * 8.0 / secs(l - f)),
        _ => None,
    };
    let total_ns = receiver.iter().map(|c| c.end_ns).max().unwrap_or(0);
    let network_ns = receiver.iter().map(|c| c.in_call_ns).max().unwrap_or(0);
    let goodput_wall_bps = if total_ns > 0 {
        read as f64 * 8.0 / secs(total_ns)
    } else {
        0.0
    };
    let omitted_bytes = omitted(&receiver_report.intervals, omit_ns);
    let goodput_after_omit_bps = match last {
        Some(l) if omit_ns > 0 && l > omit_ns => {
            Some((read - omitted_bytes) as f64 * 8.0 / secs(l - omit_ns))
        }
        _ => None,
    };
    let mib = read as f64 / MIB;
    let net_s = secs(network_ns);
    let perl = PerlFigures {
        packets_received: reads,
        bytes_received: read,
        avg_packet_size: if reads > 0 {
            read as f64 / reads as f64
        } else {
            0.0
        },
        network_elapsed_s: net_s,
        total_elapsed_s: secs(total_ns),
        average_ms: if reads > 0 {
            net_s * 1e3 / reads as f64
        } else {
            0.0
        },
        avg_ms_per_mib: if mib > 0.0 { net_s * 1e3 / mib } else { 0.0 },
        avg_mib_per_s: if net_s > 0.0 { mib / net_s } else { 0.0 },
    };
    DirectionMetrics {
        sender: sender_end,
        receiver: match sender_end {
            End::Client => End::Agent,
            End::Agent => End::Client,
        },
        bytes_written: written,
        bytes_read: read,
        complete: written == read,
        writes: sender.iter().map(|c| c.calls).sum(),
        reads,
        goodput_first_last_bps,
        goodput_wall_bps,
        goodput_after_omit_bps,
        omitted_bytes,
        perl,
        receiver_waits: receiver.iter().map(|c| c.waits).sum(),
        receiver_wait_s: secs(receiver.iter().map(|c| c.wait_ns).max().unwrap_or(0)),
        sender_tcp: sender.iter().filter_map(|c| c.tcp_info).collect(),
        limit: None,
    }
}

/// The verdict of direction `d`, from its connections on both ends and both ends' CPU.
fn limit(
    d: &DirectionMetrics,
    sender: &[&ConnReport],
    receiver: &[&ConnReport],
    ends: &[EndMetrics],
    res: &StreamResult,
) -> LimitVerdict {
    let lifetime_us = sender.iter().map(|c| c.end_ns / 1000).sum();
    let sender_report = match d.sender {
        End::Client => &res.client,
        End::Agent => &res.agent,
    };
    let tcp = &d.sender_tcp;
    decide(&Evidence {
        sender: d.sender,
        receiver: d.receiver,
        shares: shares(tcp, lifetime_us),
        sender_end: ends.iter().find(|e| e.end == d.sender),
        receiver_end: ends.iter().find(|e| e.end == d.receiver),
        conns: sender.len().max(receiver.len()),
        min_rtt_us: tcp.iter().filter_map(|t| t.min_rtt_us).min(),
        receiver_buffer: receiver.iter().map(|c| c.rcvbuf).max().filter(|b| *b > 0),
        sender_buffer: sender.iter().map(|c| c.sndbuf).max().filter(|b| *b > 0),
        link_bps: sender_report
            .iface
            .as_ref()
            .and_then(|i| i.speed_mbps)
            .map(|m| f64::from(m) * 1e6),
        delivery_rate_bps: tcp
            .iter()
            .map(|t| t.delivery_rate_bps)
            .sum::<Option<u64>>()
            .filter(|_| !tcp.is_empty())
            .map(|b| b as f64 * 8.0),
        goodput_bps: d.goodput_first_last_bps.or(Some(d.goodput_wall_bps)),
        software_link: sender_report
            .iface
            .as_ref()
            .map(|i| i.kind.clone())
            .filter(|k| k == "veth" || k == "loopback"),
        window: res.request.window,
    })
}

/// Bytes received in intervals that end at or before the omit instant.
fn omitted(intervals: &[IntervalSample], omit_ns: u64) -> u64 {
    intervals
        .iter()
        .filter(|i| omit_ns > 0 && i.end_ns <= omit_ns)
        .map(|i| i.bytes_received)
        .sum()
}

fn pct(part_ns: u64, wall_ns: u64) -> f64 {
    if wall_ns == 0 {
        0.0
    } else {
        part_ns as f64 * 100.0 / wall_ns as f64
    }
}

fn iface_metrics(
    info: &IfaceInfo,
    before: &HostSnapshot,
    after: &HostSnapshot,
    r: &EndReport,
    block: u64,
) -> Option<IfaceMetrics> {
    let d = after.iface?.delta(&before.iface?);
    let sent: u64 = r.conns.iter().filter(|c| c.sending).map(|c| c.bytes).sum();
    let recv: u64 = r.conns.iter().filter(|c| !c.sending).map(|c| c.bytes).sum();
    // Data-direction packets: tx for what this end sent, rx for what it received.
    let (packets, bytes, blocks) = match (sent > 0, recv > 0) {
        (true, false) => (d.tx_packets, d.tx_bytes, sent as f64 / block as f64),
        (false, true) => (d.rx_packets, d.rx_bytes, recv as f64 / block as f64),
        _ => (
            d.tx_packets + d.rx_packets,
            d.tx_bytes + d.rx_bytes,
            (sent + recv) as f64 / block as f64,
        ),
    };
    Some(IfaceMetrics {
        name: info.name.clone(),
        mtu: info.mtu,
        kind: info.kind.clone(),
        tx_packets: d.tx_packets,
        rx_packets: d.rx_packets,
        tx_bytes: d.tx_bytes,
        rx_bytes: d.rx_bytes,
        errors: d.rx_errors + d.tx_errors,
        drops: d.rx_dropped + d.tx_dropped,
        frames_per_block: (blocks > 0.0).then(|| packets as f64 / blocks),
        avg_frame_bytes: (packets > 0).then(|| bytes as f64 / packets as f64),
        offloads: info.offloads,
        counts_super_packets: info.offloads.any_segmentation(),
    })
}

fn end_metrics(end: End, r: &EndReport, block: u64) -> EndMetrics {
    let wall = r.after.at_ns.saturating_sub(r.before.at_ns).max(1);
    let sys = r.after.cpu.system.delta(&r.before.cpu.system);
    let pu = r
        .after
        .cpu
        .process
        .user_ns
        .saturating_sub(r.before.cpu.process.user_ns);
    let ps = r
        .after
        .cpu
        .process
        .system_ns
        .saturating_sub(r.before.cpu.process.system_ns);
    let moved: u64 = r.conns.iter().map(|c| c.bytes).sum();
    let mib = moved as f64 / MIB;
    EndMetrics {
        end,
        wall_s: secs(wall),
        process_user_pct: pct(pu, wall),
        process_sys_pct: pct(ps, wall),
        process_pct: pct(pu + ps, wall),
        system_user_pct: pct(sys.user_ns + sys.nice_ns, wall),
        system_sys_pct: pct(sys.system_ns, wall),
        system_irq_pct: pct(sys.irq_ns, wall),
        system_softirq_pct: pct(sys.softirq_ns, wall),
        system_busy_pct: pct(sys.busy_ns(), wall),
        ncpu: r.after.cpu.ncpu,
        bytes_moved: moved,
        service_demand_us_per_mib: (mib > 0.0).then(|| sys.busy_ns() as f64 / 1e3 / mib),
        cpu_resolution: Some(crate::cpu_res::CpuResolution::of(
            sys.busy_ns(),
            r.after.cpu.ncpu,
        )),
        process_us_per_mib: (mib > 0.0).then(|| (pu + ps) as f64 / 1e3 / mib),
        iface: r
            .iface
            .as_ref()
            .and_then(|i| iface_metrics(i, &r.before, &r.after, r, block)),
    }
}

pub fn compute(res: &StreamResult) -> StreamMetrics {
    let omit_ns = res.request.omit_ms * 1_000_000;
    let mut directions = Vec::new();
    for (sender_end, snd, rcv) in [
        (End::Client, &res.client, &res.agent),
        (End::Agent, &res.agent, &res.client),
    ] {
        let s: Vec<&ConnReport> = snd.conns.iter().filter(|c| c.sending).collect();
        let r: Vec<&ConnReport> = rcv.conns.iter().filter(|c| !c.sending).collect();
        if !s.is_empty() || !r.is_empty() {
            directions.push(direction(sender_end, &s, &r, rcv, omit_ns));
        }
    }
    let block = u64::from(res.request.block.max(1));
    let ends = vec![
        end_metrics(End::Client, &res.client, block),
        end_metrics(End::Agent, &res.agent, block),
    ];
    for d in &mut directions {
        let (snd, rcv) = match d.sender {
            End::Client => (&res.client, &res.agent),
            End::Agent => (&res.agent, &res.client),
        };
        let s: Vec<&ConnReport> = snd.conns.iter().filter(|c| c.sending).collect();
        let r: Vec<&ConnReport> = rcv.conns.iter().filter(|c| !c.sending).collect();
        d.limit = Some(limit(d, &s, &r, &ends, res));
    }
    let headline_bps = directions
        .iter()
        .map(|d| d.goodput_first_last_bps.unwrap_or(d.goodput_wall_bps))
        .sum();
    let mut advice = advice(
        &directions,
        &ends,
        agent_report_missing(res),
        res.request.streams,
    );
    if agent_report_missing(res) {
        advice.insert(
            0,
            "the agent's report never came: its side (bytes it read or wrote, its CPU and counters) is unknown; this end's figures are complete".into(),
        );
    }
    StreamMetrics {
        directions,
        ends,
        headline_bps,
        advice,
    }
}

/// True when the run holds only this end's side: the agent's report never came (it
/// went away, or a deadline gave up on it), so its connections are absent.
pub fn agent_report_missing(res: &StreamResult) -> bool {
    res.agent.conns.is_empty() && !res.client.conns.is_empty()
}

fn advice(
    dirs: &[DirectionMetrics],
    ends: &[EndMetrics],
    agent_missing: bool,
    streams: u32,
) -> Vec<String> {
    let mut out = Vec::new();
    let more =
        super::verdict_fmt::more_streams(streams).map_or(String::new(), |s| format!("{s} or "));
    for e in ends {
        if e.process_pct > 90.0 {
            out.push(format!(
                "{:?} process at {:.0}% of a core: the result is CPU-bound, not network-bound; try {more}a larger --block",
                e.end, e.process_pct
            ));
        }
    }
    for d in dirs {
        if !d.complete && !agent_missing {
            out.push(format!(
                "{:?}→{:?}: {} bytes written but {} read: the run did not end cleanly",
                d.sender, d.receiver, d.bytes_written, d.bytes_read
            ));
        }
        let rate = d.goodput_first_last_bps.unwrap_or(d.goodput_wall_bps) / 8.0;
        for t in &d.sender_tcp {
            let bdp = rate * f64::from(t.rtt_us) / 1e6 / d.sender_tcp.len().max(1) as f64;
            let cwnd_bytes = f64::from(t.snd_cwnd) * f64::from(t.snd_mss);
            if t.rtt_us > 1000 && cwnd_bytes < 0.5 * bdp {
                out.push(format!(
                    "congestion window {cwnd_bytes:.0} B is below the bandwidth-delay product {bdp:.0} B: raise --window or the tcp_wmem/tcp_rmem maxima"
                ));
                break;
            }
        }
    }
    out
}
