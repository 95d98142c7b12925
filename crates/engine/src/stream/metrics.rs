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
use mtuperf_proto::msg::{ConnReport, EndReport, IntervalSample, StreamLimit};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::advice::{cpu_fixes, Setup};
pub use super::advice::{Advice, Fix};
pub use super::ends::{EndMetrics, IfaceMetrics};
use super::limits::shares;
use super::verdict::{decide, Evidence, LimitVerdict};
use super::{End, StreamResult};

const MIB: f64 = 1_048_576.0;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// Receive coalescing's sleeps, or a polling receiver's blocks, after a read that
    /// drained the socket, summed over the receiving connections.
    pub receiver_waits: u64,
    /// The longest time one receiving connection spent in those waits, s.
    pub receiver_wait_s: f64,
    /// Receive polling: reads that found the socket empty, summed over the receiving
    /// connections (0 without polling).
    pub receiver_empty_reads: u64,
    /// The longest time one receiving connection spent in those empty reads, s.
    pub receiver_empty_s: f64,
    /// TCP_INFO of the sending connections at their end.
    pub sender_tcp: Vec<TcpInfo>,
    /// Sending connections that sent with `sendfile` (zero-copy; `writes` then counts
    /// those calls). 0 unless the request asked for zero-copy sends.
    pub sender_zerocopy: u32,
    /// When the receiver's report never came: the bytes the sender's kernel saw
    /// acknowledged, and the rate over the part of the run that moved them.
    pub acked: Option<Acked>,
    /// What limited this direction (see `verdict`); None when the receiver's report
    /// never came (the sender's clocks then describe a dead path, not a limit).
    pub limit: Option<LimitVerdict>,
}

/// A direction measured by its sender alone (the receiver's report never came).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Acked {
    /// tcpi_bytes_acked of the sending connections, summed.
    pub bytes: u64,
    /// From Go to the end of the last interval in which this end sent bytes, s.
    pub over_s: f64,
    pub bps: f64,
}

/// Which count a partial headline rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CountedBy {
    /// The receivers' reads (first → last byte).
    Receiver,
    /// The bytes the sender's kernel saw acknowledged (the receiver never reported).
    SenderAcked,
}

/// The headline of an interrupted run: computed over the part that was measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Partial {
    /// Seconds the headline covers (the longest direction's).
    pub over_s: f64,
    pub counted_by: CountedBy,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamMetrics {
    #[schemars(length(min = 1))]
    pub directions: Vec<DirectionMetrics>,
    #[schemars(length(equal = 2))]
    pub ends: Vec<EndMetrics>,
    /// Sum of all directions' goodput (first→last byte; for a direction whose
    /// receiver never reported, what its sender saw acknowledged), the headline.
    pub headline_bps: f64,
    /// Set when the run was interrupted: the headline covers only what was measured.
    pub partial: Option<Partial>,
    pub advice: Vec<Advice>,
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
    let perl = perl_figures(reads, read, network_ns, total_ns);
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
        receiver_empty_reads: receiver.iter().map(|c| c.empty_reads).sum(),
        receiver_empty_s: secs(receiver.iter().map(|c| c.empty_ns).max().unwrap_or(0)),
        sender_tcp: sender.iter().filter_map(|c| c.tcp_info).collect(),
        sender_zerocopy: sender.iter().filter(|c| c.zerocopy).count() as u32,
        acked: None,
        limit: None,
    }
}

/// perl-sockets' figures of a receiver that made `reads` reads of `read` bytes in
/// all, inside its calls for `network_ns` of a `total_ns` life.
fn perl_figures(reads: u64, read: u64, network_ns: u64, total_ns: u64) -> PerlFigures {
    let mib = read as f64 / MIB;
    let net_s = secs(network_ns);
    let per_read = |x: f64| if reads > 0 { x / reads as f64 } else { 0.0 };
    PerlFigures {
        packets_received: reads,
        bytes_received: read,
        avg_packet_size: per_read(read as f64),
        network_elapsed_s: net_s,
        total_elapsed_s: secs(total_ns),
        average_ms: per_read(net_s * 1e3),
        avg_ms_per_mib: if mib > 0.0 { net_s * 1e3 / mib } else { 0.0 },
        avg_mib_per_s: if net_s > 0.0 { mib / net_s } else { 0.0 },
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
    let iface = sender_report.iface.as_ref();
    decide(&Evidence {
        sender: d.sender,
        receiver: d.receiver,
        shares: shares(tcp, lifetime_us),
        sender_end: ends.iter().find(|e| e.end == d.sender),
        receiver_end: ends.iter().find(|e| e.end == d.receiver),
        conns: sender.len().max(receiver.len()),
        min_rtt_us: tcp.iter().filter_map(|t| t.min_rtt_us).min(),
        srtt_us: tcp.iter().map(|t| t.rtt_us).max().filter(|r| *r > 0),
        receiver_buffer: receiver.iter().map(|c| c.rcvbuf).max().filter(|b| *b > 0),
        sender_buffer: sender.iter().map(|c| c.sndbuf).max().filter(|b| *b > 0),
        // A virtual link's speed (veth says 10 Gbit/s) is not a rate it is held to.
        link_bps: iface
            .and_then(mtuperf_proto::host::IfaceInfo::real_speed_mbps)
            .map(|m| f64::from(m) * 1e6),
        nominal_link_bps: iface
            .filter(|i| i.is_virtual())
            .and_then(|i| i.speed_mbps)
            .map(|m| f64::from(m) * 1e6),
        delivery_rate_bps: tcp
            .iter()
            .map(|t| t.delivery_rate_bps)
            .sum::<Option<u64>>()
            .filter(|_| !tcp.is_empty())
            .map(|b| b as f64 * 8.0),
        goodput_bps: d.goodput_first_last_bps.or(Some(d.goodput_wall_bps)),
        software_link: iface
            .map(|i| i.kind.clone())
            .filter(|k| k == "veth" || k == "loopback"),
        setup: setup(d, res, sender.len().max(receiver.len())),
    })
}

/// What the fixes of direction `d` are checked against.
fn setup(d: &DirectionMetrics, res: &StreamResult, conns: usize) -> Setup {
    let iface = match d.sender {
        End::Client => res.client.iface.as_ref(),
        End::Agent => res.agent.iface.as_ref(),
    };
    Setup {
        window: res.request.window,
        block: res.request.block,
        conns: u32::try_from(conns).unwrap_or(u32::MAX),
        sender_mtu: iface.map(|i| i.mtu),
        sender_kind: iface.map(|i| i.kind.clone()),
        sender: Some(d.sender),
        receiver: Some(d.receiver),
    }
}

/// What the sender's kernel saw acknowledged, over Go → the end of the last of
/// `intervals` in which this end sent bytes (the run's own clock), among those that
/// began before `until_ns` (the planned end: a last write after it is no progress).
fn acked(
    sender: &[&ConnReport],
    intervals: &[IntervalSample],
    wall_ns: u64,
    until_ns: u64,
) -> Option<Acked> {
    let bytes = sender
        .iter()
        .map(|c| c.tcp_info.and_then(|t| t.bytes_acked))
        .sum::<Option<u64>>()?;
    let over_ns = intervals
        .iter()
        .filter(|i| i.bytes_sent > 0 && i.start_ns < until_ns)
        .map(|i| i.end_ns)
        .max()
        .unwrap_or(wall_ns);
    let over_s = secs(over_ns);
    (over_s > 0.0).then(|| Acked {
        bytes,
        over_s,
        bps: bytes as f64 * 8.0 / over_s,
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
    let polled = res.request.rx_poll_us > 0;
    let working = super::ends::without_polling(&ends, polled, &res.client, &res.agent);
    for d in &mut directions {
        let (snd, rcv) = match d.sender {
            End::Client => (&res.client, &res.agent),
            End::Agent => (&res.agent, &res.client),
        };
        let s: Vec<&ConnReport> = snd.conns.iter().filter(|c| c.sending).collect();
        let r: Vec<&ConnReport> = rcv.conns.iter().filter(|c| !c.sending).collect();
        if r.is_empty() {
            // The receiver never reported: its side is unknown, and the sender's
            // clocks describe whatever stopped the run, not a limit.
            let until_ns = match res.request.limit {
                StreamLimit::Time { ms } => ms * 1_000_000,
                StreamLimit::Bytes { .. } => u64::MAX,
            };
            d.acked = acked(&s, &snd.intervals, snd.wall_ns, until_ns);
        } else {
            d.limit = Some(limit(d, &s, &r, &working, res));
        }
    }
    let headline_bps = directions.iter().map(goodput).sum();
    let missing = agent_report_missing(res);
    let mut advice = advice(&directions, &working, missing, res);
    if missing {
        advice.insert(0, Advice::AgentReportMissing);
    }
    StreamMetrics {
        partial: res.interrupted.then(|| partial(&directions)),
        directions,
        ends,
        headline_bps,
        advice,
    }
}

/// A direction's goodput: first → last byte at the receiver, its wall-time figure when
/// there is none, or what the sender saw acknowledged when the receiver never reported.
fn goodput(d: &DirectionMetrics) -> f64 {
    match (d.goodput_first_last_bps, d.acked) {
        (Some(g), _) => g,
        (None, Some(a)) => a.bps,
        (None, None) => d.goodput_wall_bps,
    }
}

/// What the headline of an interrupted run covers.
fn partial(dirs: &[DirectionMetrics]) -> Partial {
    let over_s = dirs
        .iter()
        .map(|d| match d.acked {
            Some(a) if d.goodput_first_last_bps.is_none() => a.over_s,
            _ => d.perl.total_elapsed_s,
        })
        .fold(0.0, f64::max);
    let acked = dirs
        .iter()
        .any(|d| d.acked.is_some() && d.goodput_first_last_bps.is_none());
    Partial {
        over_s,
        counted_by: if acked {
            CountedBy::SenderAcked
        } else {
            CountedBy::Receiver
        },
    }
}

/// True when the run holds only this end's side: the agent's report never came (it
/// went away, or a deadline gave up on it), so its connections are absent.
pub fn agent_report_missing(res: &StreamResult) -> bool {
    res.agent.conns.is_empty() && !res.client.conns.is_empty()
}

/// The run-wide advice: a process saturated, a run that did not end cleanly, a
/// congestion window below the bandwidth-delay product of a long path with buffers
/// below it too. Each fix is checked against the setup (`advice`).
fn advice(
    dirs: &[DirectionMetrics],
    ends: &[EndMetrics],
    agent_missing: bool,
    res: &StreamResult,
) -> Vec<Advice> {
    let mut out = Vec::new();
    for e in ends.iter().filter(|e| e.process_pct > 90.0) {
        let iface = match e.end {
            End::Client => res.client.iface.as_ref(),
            End::Agent => res.agent.iface.as_ref(),
        };
        let s = Setup {
            window: res.request.window,
            block: res.request.block,
            conns: res.request.streams,
            sender_mtu: iface.map(|i| i.mtu),
            sender_kind: iface.map(|i| i.kind.clone()),
            sender: None,
            receiver: None,
        };
        out.push(Advice::ProcessCpuBound {
            end: e.end,
            pct: e.process_pct,
            fixes: cpu_fixes(&s),
        });
    }
    for d in dirs {
        if !d.complete && !agent_missing {
            out.push(Advice::Incomplete {
                sender: d.sender,
                receiver: d.receiver,
                written: d.bytes_written,
                read: d.bytes_read,
            });
        }
        out.extend(cwnd_advice(d, res.request.window));
    }
    out
}

/// A congestion window below half the bandwidth-delay product on a long path (RTT
/// above 1 ms), when the send buffer is below that product too (a buffer already
/// above it is not what holds the window: that is congestion control, the verdict's).
fn cwnd_advice(d: &DirectionMetrics, window: Option<u32>) -> Option<Advice> {
    let rate = goodput(d) / 8.0;
    let n = d.sender_tcp.len().max(1) as f64;
    let buffer = d.limit.as_ref().and_then(|v| v.sender_buffer);
    d.sender_tcp.iter().find_map(|t| {
        let bdp = rate * f64::from(t.rtt_us) / 1e6 / n;
        let cwnd_bytes = f64::from(t.snd_cwnd) * f64::from(t.snd_mss);
        let buffer_short = buffer.is_none_or(|b| f64::from(b) < bdp);
        (t.rtt_us > 1000 && cwnd_bytes < 0.5 * bdp && buffer_short).then(|| {
            let end = d.sender;
            Advice::CwndBelowBdp {
                cwnd_bytes,
                bdp_bytes: bdp,
                fixes: vec![match window {
                    Some(window) => Fix::RaiseWindow { window },
                    None => Fix::RaiseSysctlMax {
                        sysctl: "net.ipv4.tcp_wmem".into(),
                        end,
                    },
                }],
            }
        })
    })
}
