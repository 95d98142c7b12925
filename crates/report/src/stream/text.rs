//! Human text for stream runs.

use std::fmt::Write as _;

use mtuperf_engine::stream::metrics::{DirectionMetrics, EndMetrics};
use mtuperf_engine::stream::{End, StreamResult};
use mtuperf_proto::host::IfaceInfo;
use mtuperf_proto::msg::{Direction, IntervalSample, StreamLimit, StreamRequest};

use super::{Document, RepeatSummary, RunDoc};
use crate::fmt::{bytes, mibs, opt, rate};

fn end_name(e: End) -> &'static str {
    match e {
        End::Client => "client",
        End::Agent => "agent",
    }
}

fn iface(i: Option<&IfaceInfo>) -> String {
    i.map_or_else(
        || "iface ?".into(),
        |i| format!("{}, MTU {}", i.name, i.mtu),
    )
}

/// Header printed before the run starts (and again in `show`).
pub fn header(r: &StreamResult) -> String {
    let q = &r.request;
    let dir = match q.direction {
        Direction::Forward => "client → agent",
        Direction::Reverse => "agent → client",
        Direction::Bidir => "both directions",
    };
    let limit = match q.limit {
        StreamLimit::Time { ms } => format!("{} s", ms as f64 / 1000.0),
        StreamLimit::Bytes { total } => format!("{} per direction", bytes(total)),
    };
    let mss = r
        .client
        .conns
        .iter()
        .chain(&r.agent.conns)
        .find_map(|c| c.tcp_info)
        .map_or_else(String::new, |t| {
            format!(", MSS {}", t.snd_mss.max(t.rcv_mss))
        });
    format!(
        "mtuperf stream: {} ({}) → {} ({}){mss}\n  {} stream{}, {dir}, block {} B, {limit}, payload {}\n",
        r.local_addr,
        iface(r.client.iface.as_ref()),
        r.remote_addr,
        iface(r.agent.iface.as_ref()),
        q.streams,
        if q.streams == 1 { "" } else { "s" },
        q.block,
        r.source
    )
}

pub fn interval_header() -> String {
    format!(
        "  {:>13}  {:>6}  {:>26}  {:>5}  {}",
        "interval (s)", "end", "goodput", "retr", "sender limited by (of busy time)"
    )
}

/// One live interval of one end: what it sent and/or received (zero sides omitted).
pub fn interval_line(end: End, s: &IntervalSample, omit_ns: u64) -> String {
    let dur = (s.end_ns.saturating_sub(s.start_ns)) as f64 / 1e9;
    let r = |b: u64| {
        if dur > 0.0 {
            rate(b as f64 * 8.0 / dur)
        } else {
            "-".into()
        }
    };
    let mut parts = Vec::new();
    if s.bytes_sent > 0 {
        parts.push(format!("sent {}", r(s.bytes_sent)));
    }
    if s.bytes_received > 0 || s.bytes_sent == 0 {
        parts.push(format!("received {}", r(s.bytes_received)));
    }
    let limits = match (s.busy_us, s.rwnd_limited_us, s.sndbuf_limited_us) {
        (Some(b), Some(r), Some(w)) if b > 0 && s.bytes_sent > 0 => format!(
            "  rwnd {:.0}% sndbuf {:.0}%",
            r as f64 * 100.0 / b as f64,
            w as f64 * 100.0 / b as f64
        ),
        _ => String::new(),
    };
    format!(
        "  {:>6.2}-{:<6.2}  {:>6}  {:>26}  {:>5}{limits}{}",
        s.start_ns as f64 / 1e9,
        s.end_ns as f64 / 1e9,
        end_name(end),
        parts.join(", "),
        if s.bytes_sent > 0 {
            s.retransmits.to_string()
        } else {
            String::new()
        },
        if s.end_ns <= omit_ns {
            "  (omitted)"
        } else {
            ""
        }
    )
}

/// The lines of a direction the agent's report is missing from: this end's count,
/// the other unknown (no zero), and what the sender saw acknowledged. True when that
/// is all there is to say (this end sent: the agent's figures are missing).
fn missing_lines(out: &mut String, d: &DirectionMetrics) -> bool {
    let (s, r) = (end_name(d.sender), end_name(d.receiver));
    let (known, n) = match d.sender {
        End::Client => (format!("written by {s}"), d.bytes_written),
        End::Agent => (format!("read by {r}"), d.bytes_read),
    };
    let unknown = match d.sender {
        End::Client => format!("read by {r}"),
        End::Agent => format!("written by {s}"),
    };
    let _ = writeln!(
        out,
        "  bytes {known} {n} ({}); {unknown}: unknown (the agent's report never came)",
        bytes(n)
    );
    if let Some(a) = &d.acked {
        let _ = writeln!(
            out,
            "  goodput ≈ {} over the first {:.1} s: {} the agent's kernel acknowledged (tcpi_bytes_acked)",
            rate(a.bps),
            a.over_s,
            bytes(a.bytes)
        );
    }
    d.sender == End::Client
}

fn direction_text(
    out: &mut String,
    d: &DirectionMetrics,
    req: &StreamRequest,
    agent_missing: bool,
) {
    let (s, r) = (end_name(d.sender), end_name(d.receiver));
    let _ = writeln!(out, "Summary {s} → {r}:");
    if agent_missing {
        if missing_lines(out, d) {
            return;
        }
    } else {
        let _ = writeln!(
            out,
            "  bytes written by {s} {} ({}), read by {r} {} ({}){}",
            d.bytes_written,
            bytes(d.bytes_written),
            d.bytes_read,
            bytes(d.bytes_read),
            if d.complete { ", equal" } else { ", NOT EQUAL" }
        );
    }
    if let Some(g) = d.goodput_first_last_bps {
        let _ = writeln!(
            out,
            "  goodput {} ({}) first→last byte at the {r}",
            rate(g),
            mibs(g)
        );
    }
    let _ = writeln!(
        out,
        "  goodput {} ({}) over the {r}'s wall time {:.3} s",
        rate(d.goodput_wall_bps),
        mibs(d.goodput_wall_bps),
        d.perl.total_elapsed_s
    );
    if let Some(g) = d.goodput_after_omit_bps {
        let _ = writeln!(
            out,
            "  goodput {} after the omitted warm-up ({} omitted)",
            rate(g),
            bytes(d.omitted_bytes)
        );
    }
    let p = &d.perl;
    let _ = writeln!(
        out,
        "  perl-sockets figures ({r} reads): Packets Received {}, Bytes Received {}, Avg Packet Size {:.1}, Network Elapsed Seconds {:.6}, Total Elapsed Seconds {:.6}, Average milliseconds {:.6}, Avg milliseconds/MiB {:.6}, Avg Megabytes/Second {:.3}",
        p.packets_received, p.bytes_received, p.avg_packet_size, p.network_elapsed_s, p.total_elapsed_s, p.average_ms, p.avg_ms_per_mib, p.avg_mib_per_s
    );
    io_text(out, d, req, s, r);
    sender_tcp_text(out, d, s);
}

/// How the senders sent (zero-copy, when asked) and how the receivers waited
/// (polling, coalescing, or neither).
fn io_text(out: &mut String, d: &DirectionMetrics, req: &StreamRequest, s: &str, r: &str) {
    let rx_coalesce_us = req.rx_coalesce_us;
    if req.zerocopy {
        let _ = writeln!(
            out,
            "  zero-copy sends asked: {} of the {s}'s {} connections sent with sendfile from a memory file{}",
            d.sender_zerocopy,
            req.streams,
            if d.sender_zerocopy < req.streams {
                " (the others wrote: that host could not send from a memory file)"
            } else {
                ""
            }
        );
    }
    if req.rx_poll_us > 0 {
        let _ = writeln!(
            out,
            "  receive polling up to {} µs: the {r}'s reads found the socket empty {} times ({:.3} s inside them), and it blocked {} times after polling in vain, {:.3} s in all; its CPU time includes the polling",
            req.rx_poll_us, d.receiver_empty_reads, d.receiver_empty_s, d.receiver_waits, d.receiver_wait_s
        );
    } else if rx_coalesce_us == 0 {
        let _ = writeln!(
            out,
            "  receive coalescing off: the {r} read again at once after draining the socket"
        );
    } else {
        let _ = writeln!(
            out,
            "  receive coalescing up to {rx_coalesce_us} µs: the {r} waited {} times after draining the socket, {:.3} s in all (outside reads)",
            d.receiver_waits, d.receiver_wait_s
        );
    }
}

/// The sender's TCP_INFO per connection, and what limited the sender while it was busy.
fn sender_tcp_text(out: &mut String, d: &DirectionMetrics, s: &str) {
    for (i, t) in d.sender_tcp.iter().enumerate() {
        let _ = writeln!(
            out,
            "  TCP_INFO {s} conn {i}: snd_mss {} rcv_mss {} pmtu {} retrans {} rtt {} µs rttvar {} µs cwnd {} delivery {}",
            t.snd_mss,
            t.rcv_mss,
            t.pmtu,
            t.retransmits,
            t.rtt_us,
            t.rttvar_us,
            t.snd_cwnd,
            opt(t.delivery_rate_bps.map(|b| rate(b as f64 * 8.0)))
        );
    }
    if let Some(v) = &d.limit {
        let sh = &v.shares;
        let p = |x: Option<f64>| opt(x.map(|x| format!("{:.0}%", x * 100.0)));
        let _ = writeln!(
            out,
            "  {s} sender busy {} of its lifetime; of the busy time limited by: receive window {}, send buffer {}, congestion control {}; retransmitted {}, ECN-marked {}; min RTT {} µs",
            p(sh.busy_of_lifetime),
            p(sh.rwnd_limited),
            p(sh.sndbuf_limited),
            p(sh.cwnd_limited),
            opt(sh.retrans.map(|x| format!("{:.2}%", x * 100.0))),
            opt(sh.ce_marked.map(|x| format!("{:.2}%", x * 100.0))),
            opt(v.min_rtt_us)
        );
    }
}

fn ends_text(out: &mut String, ends: &[EndMetrics], agent_missing: bool) {
    let _ = writeln!(
        out,
        "  {:<6} {:>8} {:>8} {:>8} {:>11} {:>11}  {:<10} {:>5} {:>9} {:>9} {:>8} {:>9}",
        "end",
        "process",
        "sys-busy",
        "softirq",
        "µs CPU/MiB",
        "proc µs/MiB",
        "iface",
        "MTU",
        "tx pkts",
        "rx pkts",
        "frm/blk",
        "avg frame"
    );
    for e in ends {
        if agent_missing && e.end == End::Agent {
            let _ = writeln!(
                out,
                "  {:<6} unknown (the agent's report never came)",
                "agent"
            );
            continue;
        }
        let i = e.iface.as_ref();
        let _ = writeln!(
            out,
            "  {:<6} {:>7.1}% {:>7.1}% {:>7.1}% {:>11} {:>11}  {:<10} {:>5} {:>9} {:>9} {:>8} {:>9}",
            end_name(e.end),
            e.process_pct,
            e.system_busy_pct,
            e.system_softirq_pct,
            opt(e.service_demand_us_per_mib.map(|v| format!("{v:.1}"))),
            opt(e.process_us_per_mib.map(|v| format!("{v:.1}"))),
            i.map_or("?", |i| i.name.as_str()),
            opt(i.map(|i| i.mtu)),
            opt(i.map(|i| i.tx_packets)),
            opt(i.map(|i| i.rx_packets)),
            opt(i.and_then(|i| i.frames_per_block).map(|v| format!("{v:.2}"))),
            opt(i.and_then(|i| i.avg_frame_bytes).map(|v| format!("{v:.0}")))
        );
    }
    for e in ends
        .iter()
        .filter(|e| !(agent_missing && e.end == End::Agent))
    {
        if let Some(r) = &e.cpu_resolution {
            let why = if r.is_coarse() {
                ": too short a run for that resolution"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {} system CPU from /proc/stat: {}{why}",
                end_name(e.end),
                r.text()
            );
        }
    }
    for e in ends {
        if let Some(i) = e.iface.as_ref().filter(|i| i.counts_super_packets) {
            let _ = writeln!(
                out,
                "  note: {} on {} has segmentation offloads on (TSO/GSO/GRO): its counters count super-packets, not wire frames",
                i.name,
                end_name(e.end)
            );
        }
    }
    let _ = writeln!(
        out,
        "  (CPU % is of one core over each end's wall time; sys-busy and µs CPU/MiB count all CPUs of that host)"
    );
}

fn window_text(out: &mut String, r: &StreamResult) {
    let granted = |conns: &[mtuperf_proto::msg::ConnReport]| {
        conns.first().map_or_else(
            || "-".to_string(),
            |c| format!("snd {} rcv {}", c.sndbuf, c.rcvbuf),
        )
    };
    let _ = writeln!(
        out,
        "Socket buffers: requested {}; granted by the kernel: client {}, agent {}",
        r.request
            .window
            .map_or_else(|| "default".to_string(), |w| format!("{w} B")),
        granted(&r.client.conns),
        granted(&r.agent.conns)
    );
}

/// The summary of one run (without the header and interval lines).
pub fn summary_text(run: &RunDoc) -> String {
    let mut out = String::new();
    window_text(&mut out, &run.result);
    for d in &run.metrics.directions {
        direction_text(
            &mut out,
            d,
            &run.result.request,
            mtuperf_engine::stream::metrics::agent_report_missing(&run.result),
        );
    }
    let _ = writeln!(out, "CPU and interface counters over the run:");
    ends_text(
        &mut out,
        &run.metrics.ends,
        mtuperf_engine::stream::metrics::agent_report_missing(&run.result),
    );
    if let Some(l) = crate::placement::line(
        run.result.client_placement.as_ref(),
        run.result.agent.placement.as_ref(),
        run.placement.as_ref(),
    ) {
        let _ = writeln!(out, "{l}");
    }
    for a in &run.metrics.advice {
        let _ = writeln!(out, "advice: {}", super::advice_line(a));
    }
    for v in run
        .metrics
        .directions
        .iter()
        .filter_map(|d| d.limit.as_ref())
    {
        let _ = writeln!(out, "limited by: {}", super::limit_line(v));
    }
    if let Some(d) = &run.result.diagnosis {
        let _ = writeln!(out, "{}", crate::explain::line(d, &run.result.target));
    }
    if run.result.interrupted {
        let _ = writeln!(out, "INTERRUPTED: partial result (stored as interrupted)");
        if let Some(why) = crate::interrupt::words(&run.result.interrupted_by) {
            let _ = writeln!(out, "  why: {why}");
        }
    }
    if let Some(id) = run.run_id {
        let _ = writeln!(out, "stored as run {id}");
    }
    out
}

/// One line per repeated run.
pub fn run_line(i: usize, run: &RunDoc) -> String {
    let causes: Vec<String> = run
        .metrics
        .directions
        .iter()
        .filter_map(|d| d.limit.as_ref())
        .map(|v| super::cause_label(v.cause).to_string())
        .collect();
    format!(
        "run {:>3}: {:>14}{}  receiver {:>9} µs CPU/MiB  limited by {}{}",
        i + 1,
        rate(run.metrics.headline_bps),
        super::partial(run.metrics.partial.as_ref()),
        opt(super::receiver_demand(run).map(|v| format!("{v:.1}"))),
        if causes.is_empty() {
            "-".to_string()
        } else {
            causes.join(", ")
        },
        if run.result.interrupted && run.metrics.partial.is_none() {
            "  (interrupted)"
        } else {
            ""
        }
    )
}

fn repeat_text(out: &mut String, s: &RepeatSummary) {
    let g = &s.goodput_bps;
    let _ = writeln!(out, "Over {} runs (goodput, first→last byte):", s.runs);
    let interval = match (g.ci95_low, g.ci95_high) {
        (Some(l), Some(h)) => format!(
            " {} (95% CI {} .. {}, {})",
            crate::fmt::ci(g),
            rate(l),
            rate(h),
            g.ci95_method
        ),
        _ => format!(
            " (no 95% CI: {})",
            g.ci95_note.as_deref().unwrap_or("too few runs")
        ),
    };
    let _ = writeln!(
        out,
        "  mean {}{interval}, median {}, stddev {}, min {}, max {}",
        rate(g.mean),
        rate(g.median),
        rate(g.stddev),
        rate(g.min),
        rate(g.max)
    );
    if let Some(d) = &s.receiver_us_per_mib {
        let _ = writeln!(
            out,
            "  receiver µs CPU/MiB: mean {:.1} ({}), median {:.1}, min {:.1}, max {:.1}",
            d.mean,
            match (d.ci95_low, d.ci95_high) {
                (Some(l), Some(h)) => format!("95% CI {l:.1} .. {h:.1}, {}", d.ci95_method),
                _ => "no 95% CI below 3 runs".into(),
            },
            d.median,
            d.min,
            d.max
        );
    }
}

/// Full text of a document (as `show` prints it).
pub fn text(doc: &Document) -> String {
    let mut out = String::new();
    for (i, run) in doc.runs.iter().enumerate() {
        if doc.runs.len() > 1 {
            let _ = writeln!(out, "{}", run_line(i, run));
        } else {
            out.push_str(&header(&run.result));
            out.push_str(&summary_text(run));
        }
    }
    if let Some(s) = &doc.summary {
        repeat_text(&mut out, s);
    }
    out
}
