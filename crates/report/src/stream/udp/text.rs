//! Human text for UDP streams. Every figure says what it counts (datagrams,
//! fragments, frames), on which end, over which interval.

use std::fmt::Write as _;

use mtuperf_engine::stream::udp::metrics::{EndIo, UdpDirection, UdpEndCpu};
use mtuperf_engine::stream::udp::UdpStreamResult;
use mtuperf_engine::stream::End;
use mtuperf_proto::msg::udp::{IoFallback, IoMode, IoOption, UdpInterval, UdpIo};
use mtuperf_proto::msg::{Direction, StreamLimit};

use super::{Document, RunDoc, Sweep};
use crate::fmt::{bytes, opt, rate};

fn end_name(e: End) -> &'static str {
    match e {
        End::Client => "client",
        End::Agent => "agent",
    }
}

fn asked(bps: u64) -> String {
    if bps == 0 {
        "max".into()
    } else {
        rate(bps as f64)
    }
}

/// Header printed before the results (and by `show`).
pub fn header(r: &UdpStreamResult) -> String {
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
    let mtu = |i: &Option<mtuperf_proto::host::IfaceInfo>| {
        i.as_ref().map_or_else(
            || "iface ?".into(),
            |i| format!("{}, MTU {}", i.name, i.mtu),
        )
    };
    format!(
        "udp stream {} → {}: {dir}, {} B datagrams, {} stream(s) per direction, asked {} (paced at {} per direction), {limit}\n  client {} ({}); agent {} ({})\n",
        r.local_addr,
        r.target,
        q.block,
        q.streams,
        asked(q.rate_bps),
        rate(r.paced_rate_bps as f64),
        r.client_host.hostname,
        mtu(&r.client.iface),
        r.agent_host.hostname,
        mtu(&r.agent.iface),
    )
}

pub fn interval_header() -> String {
    "end     interval (s)    sent   recv   lost  dup  reord  jitter µs  frag/dgram  reasm ok/fail  rcvbuf err  (datagrams this end sent/received; kernel counters of this end's namespace)".into()
}

/// One live interval line of one end.
pub fn interval_line(end: End, i: &UdpInterval) -> String {
    let s = i.snmp.unwrap_or_default();
    let frags = if i.sent > 0 {
        format!("{:.2}", s.ip_frag_creates as f64 / i.sent as f64)
    } else {
        "-".into()
    };
    let jitter = if i.received > 0 {
        format!("{:.1}", i.jitter_ns as f64 / 1e3)
    } else {
        "-".into()
    };
    format!(
        "{:<6} {:>6.2}-{:<6.2} {:>7} {:>6} {:>6} {:>4} {:>6} {:>10} {:>11} {:>7}/{:<6} {:>10}",
        end_name(end),
        i.start_ns as f64 / 1e9,
        i.end_ns as f64 / 1e9,
        i.sent,
        i.received,
        i.lost,
        i.duplicated,
        i.reordered,
        jitter,
        frags,
        s.ip_reasm_oks,
        s.ip_reasm_fails,
        s.udp_rcvbuf_errors,
    )
}

fn loss_causes_text(out: &mut String, d: &UdpDirection, rcv: &str) {
    let c = &d.loss_causes;
    let socket = match (d.socket_drops, c.datagrams_per_drop) {
        (Some(n), Some(k)) => format!(
            "≤ {} ({rcv}'s sockets dropped {n} GRO bundles of up to {k} datagrams; {rcv}'s Udp RcvbufErrors {})",
            c.socket_buffer,
            opt(d.rcvbuf_errors)
        ),
        (Some(n), None) => format!(
            "{} ({rcv}'s sockets dropped {n}; {rcv}'s Udp RcvbufErrors {})",
            c.socket_buffer,
            opt(d.rcvbuf_errors)
        ),
        (None, _) => format!("{} ({rcv}'s Udp RcvbufErrors)", c.socket_buffer),
    };
    let _ = writeln!(
        out,
        "  loss causes  socket buffer full {socket}  reassembly failed {} ({rcv}'s Ip ReasmFails)  never reached the socket {} (dropped on the way or by a firewall, or fragments still awaiting reassembly)",
        c.reassembly, c.never_arrived
    );
}

fn buffers_text(out: &mut String, d: &UdpDirection, snd: &str, rcv: &str) {
    let b = &d.buffers;
    if b.asked > 0 {
        let _ = writeln!(
            out,
            "  buffers      {snd}'s send buffer {}, {rcv}'s receive buffer {} per socket, as granted for {} asked (the kernel's SO_SNDBUF/SO_RCVBUF: twice the request, capped at net.core.wmem_max/rmem_max unless --window was forced past them)",
            opt(b.sndbuf.map(|v| bytes(v.into()))),
            opt(b.rcvbuf.map(|v| bytes(v.into()))),
            bytes(b.asked.into()),
        );
    }
}

fn direction_text(out: &mut String, d: &UdpDirection) {
    let (snd, rcv) = (end_name(d.sender), end_name(d.receiver));
    let _ = writeln!(
        out,
        "{snd} → {rcv} (sender {snd}, receiver {rcv}), whole run:"
    );
    let _ = writeln!(
        out,
        "  datagrams    sent {} ({snd}'s count)  received {} ({rcv}, distinct)  lost {} ({:.3}%)  duplicated {}  reordered {}{}",
        d.sent,
        d.received,
        d.lost,
        d.loss_pct,
        d.duplicated,
        d.reordered,
        if d.exact {
            "  [exact: the sender's count reached the receiver]"
        } else {
            "  [the sender's count never reached the receiver: lost is a lower bound]"
        }
    );
    loss_causes_text(out, d, rcv);
    let _ = writeln!(
        out,
        "  goodput      {} of UDP payload received over {snd}'s first→last send (offered {}){}",
        rate(d.goodput_bps),
        rate(d.offered_bps),
        if d.send_errors > 0 {
            format!("; {} sends failed on {snd}", d.send_errors)
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "  jitter       {:.1} µs (RFC 3550, at {rcv})",
        d.jitter_us
    );
    buffers_text(out, d, snd, rcv);
    let _ = writeln!(
        out,
        "  fragments    {} IP fragments created per datagram ({snd}'s Ip FragCreates ÷ datagrams sent; 0 = not fragmented)",
        opt(d.fragments_per_datagram.map(|v| format!("{v:.2}")))
    );
    let _ = writeln!(
        out,
        "  reassembly   {rcv}: ReasmOKs {}  ReasmFails {}  ReasmTimeout {};  Udp RcvbufErrors {}  other InErrors {};  {snd}: Udp SndbufErrors {}",
        opt(d.reasm_oks),
        opt(d.reasm_fails),
        opt(d.reasm_timeout),
        opt(d.rcvbuf_errors),
        opt(d.other_in_errors),
        opt(d.sndbuf_errors),
    );
    if d.tx_frames_per_datagram.is_some() || d.rx_frames_per_datagram.is_some() {
        // Fewer frames than datagrams: the interfaces carried GSO sends whole.
        let bundled = [d.tx_frames_per_datagram, d.rx_frames_per_datagram]
            .into_iter()
            .flatten()
            .any(|f| f < 0.95);
        let _ = writeln!(
            out,
            "  frames       {} per datagram sent ({snd}'s interface tx packets)  {} per datagram that reached {rcv} ({rcv}'s interface rx packets ÷ received + socket-buffer drops){}",
            opt(d.tx_frames_per_datagram.map(|v| format!("{v:.2}"))),
            opt(d.rx_frames_per_datagram.map(|v| format!("{v:.2}"))),
            if bundled {
                "; an interface that does not cut GSO/GRO bundles (loopback, veth with offloads on) counts each once"
            } else {
                ""
            }
        );
    }
}

fn mode_words(m: IoMode, sending: bool) -> &'static str {
    match (m, sending) {
        (IoMode::Plain, true) => "plain (a send per datagram)",
        (IoMode::Plain, false) => "plain (a recv per datagram)",
        (IoMode::Batch, true) => "batch (sendmmsg)",
        (IoMode::Batch, false) => "batch (recvmmsg)",
        (IoMode::Gso, _) => "gso (sendmmsg of UDP GSO messages)",
        (IoMode::Gro, _) => "gro (recvmmsg with UDP_GRO)",
    }
}

/// Why a socket used less than `--udp-io` allowed, in words.
pub fn fallback_words(f: &IoFallback) -> String {
    match *f {
        IoFallback::AboveMtu { block, mtu } => format!(
            "{block} B datagrams with their IP and UDP headers exceed the path MTU {mtu}: sent whole for the kernel to fragment, without GSO"
        ),
        IoFallback::Unsupported { option, errno } => format!(
            "the kernel refused {} ({}): batches without it",
            match option {
                IoOption::UdpSegment => "UDP_SEGMENT (UDP GSO)",
                IoOption::UdpGro => "UDP_GRO",
                IoOption::IpMtu => "IP_MTU (the path MTU)",
            },
            std::io::Error::from_raw_os_error(errno)
        ),
        IoFallback::Refused { errno } => format!(
            "the kernel refused a GSO send on this route ({}): the rest went in batches without GSO",
            std::io::Error::from_raw_os_error(errno)
        ),
    }
}

fn end_io_text(who: &str, sending: bool, e: &EndIo) -> String {
    let (verb, messages) = if sending {
        ("sent", "sends (Udp OutDatagrams)")
    } else {
        ("received", "receives (Udp InDatagrams)")
    };
    let mode = e.mode.map_or("?", |m| mode_words(m, sending));
    let mut s = format!("{who} {verb} with {mode}");
    if e.mode.is_some_and(|m| m != IoMode::Plain) {
        let _ = write!(s, ", up to {} a call", e.batch);
    }
    if e.segments > 1 {
        let unit = if sending { "message" } else { "receive" };
        let _ = write!(s, ", up to {} datagrams a {unit}", e.segments);
    }
    let _ = write!(
        s,
        "; {} per call on average, {} {messages}",
        opt(e.datagrams_per_call.map(|v| format!("{v:.1}"))),
        e.messages
    );
    s
}

fn io_text(out: &mut String, d: &UdpDirection, asked: UdpIo) {
    let io = &d.io;
    if io.sender.mode.is_none() && io.receiver.mode.is_none() {
        return;
    }
    let (snd, rcv) = (end_name(d.sender), end_name(d.receiver));
    let asked = match asked {
        UdpIo::Plain => "plain",
        UdpIo::Batch => "batch",
        UdpIo::Gso => "gso",
    };
    let _ = writeln!(
        out,
        "  I/O          --udp-io {asked}: {}  |  {}",
        end_io_text(snd, true, &io.sender),
        end_io_text(rcv, false, &io.receiver),
    );
    for (who, e) in [(snd, &io.sender), (rcv, &io.receiver)] {
        if let Some(f) = &e.fallback {
            let _ = writeln!(out, "  I/O fallback {who}: {}", fallback_words(f));
        }
    }
}

fn cpu_line(e: &UdpEndCpu) -> String {
    format!(
        "  {:<6} process {:.1}% of a core, all CPUs busy {:.1}% of a core over {:.2} s; {} µs/MiB service demand (system), {} µs/MiB this process{}",
        end_name(e.end),
        e.process_pct,
        e.system_busy_pct,
        e.wall_s,
        opt(e.service_demand_us_per_mib.map(|v| format!("{v:.1}"))),
        opt(e.process_us_per_mib.map(|v| format!("{v:.1}"))),
        e.process_ms_per_gib_received
            .map(|v| format!("; {v:.0} ms CPU per GiB received"))
            .unwrap_or_default()
    )
}

/// The whole run's figures.
pub fn summary_text(run: &RunDoc) -> String {
    let mut out = String::new();
    for d in &run.metrics.directions {
        direction_text(&mut out, d);
        io_text(&mut out, d, run.result.request.io);
    }
    let _ = writeln!(out, "CPU (each end's whole run):");
    for e in &run.metrics.ends {
        let _ = writeln!(out, "{}", cpu_line(e));
    }
    if let Some(l) = crate::placement::line(
        run.result.client_placement.as_ref(),
        run.result.agent.placement.as_ref(),
        run.placement.as_ref(),
    ) {
        let _ = writeln!(out, "{l}");
    }
    if let Some(d) = &run.result.diagnosis {
        let _ = writeln!(out, "{}", crate::explain::line(d, &run.result.target));
    }
    if let Some(why) = crate::interrupt::words(&run.result.interrupted_by) {
        let _ = writeln!(out, "interrupted: {why}");
    }
    if let Some(id) = run.run_id {
        let _ = writeln!(out, "stored as run {id}");
    }
    out
}

/// One line per repetition or sweep step.
pub fn run_line(i: usize, run: &RunDoc) -> String {
    format!(
        "run {:>3}: asked {:>12}  offered {:>13}  received {:>13}  loss {:>7.3}%  jitter {}",
        i + 1,
        asked(run.result.request.rate_bps),
        rate(run.offered_bps()),
        rate(run.metrics.goodput_bps),
        run.loss_pct(),
        run.metrics
            .directions
            .first()
            .map_or_else(|| "-".into(), |d| format!("{:.1} µs", d.jitter_us)),
    )
}

/// The sweep's verdict.
pub fn sweep_text(s: &Sweep) -> String {
    let mut out = format!(
        "rate sweep (a step passes when loss ≤ {}% and the sender offered ≥ 95% of the asked rate):\n",
        s.max_loss_pct
    );
    for st in &s.steps {
        let _ = writeln!(
            out,
            "  asked {:>12}  offered {:>13}  received {:>13}  loss {:>7.3}%  {}",
            asked(st.asked_bps),
            rate(st.offered_bps),
            rate(st.goodput_bps),
            st.loss_pct,
            if st.passed { "pass" } else { "fail" }
        );
    }
    match &s.knee {
        Some(k) => {
            let _ = writeln!(
                out,
                "knee: {} (highest rate with loss ≤ {}%)",
                rate(k.rate_bps()),
                s.max_loss_pct
            );
        }
        None => {
            let _ = writeln!(out, "knee: none (no rate passed)");
        }
    }
    out
}

/// A repeated run's summary.
pub fn text(doc: &Document) -> String {
    let mut out = String::new();
    if let Some(s) = &doc.summary {
        let _ = writeln!(
            out,
            "{} runs: received goodput median {} (min {}, max {}); loss median {:.3}%",
            s.runs,
            rate(s.goodput_bps.median),
            rate(s.goodput_bps.min),
            rate(s.goodput_bps.max),
            s.loss_pct.median
        );
    }
    if let Some(s) = &doc.sweep {
        out.push_str(&sweep_text(s));
    }
    out
}
