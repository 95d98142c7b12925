//! Words for a stream's limiting-factor verdict, its fixes and its run-wide advice
//! (typed in `mtuperf_engine::stream::{verdict, advice}`): the cause with its share,
//! the evidence, and the flags or sysctls that fix it.

use mtuperf_engine::stream::advice::{Advice, Fix};
use mtuperf_engine::stream::verdict::{
    CpuBecause, CpuLoad, CpuWhat, LimitCause, LimitVerdict, Needed, Role, WindowEvidence,
    SENDER_BUSIER, SMALL_WRITE,
};
use mtuperf_engine::stream::End;

use crate::fmt::{bytes, rate};

fn name(e: End) -> &'static str {
    match e {
        End::Client => "client",
        End::Agent => "agent",
    }
}

fn role(r: Role) -> &'static str {
    match r {
        Role::Sender => "sender",
        Role::Receiver => "receiver",
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// A small positive share: "0.42%", or "<0.01%" rather than a misleading "0.00%".
fn small_pct(x: f64) -> String {
    if x * 100.0 < 0.005 {
        "<0.01%".into()
    } else {
        format!("{:.2}%", x * 100.0)
    }
}

/// One fix in words.
pub fn fix(f: &Fix) -> String {
    match f {
        Fix::MoreStreams { streams } => format!("--streams {streams}"),
        Fix::LargerBlock { block } => format!("a larger --block (now {block} B)"),
        Fix::JumboFrames { mtu } => {
            format!("jumbo frames (the sender's interface is at MTU {mtu}: fewer packets per byte)")
        }
        Fix::RaiseWindow { window } => format!("raise --window (now {window} B)"),
        Fix::RaiseSysctlMax { sysctl, end } => {
            format!("raise {sysctl}'s maximum on the {}", name(*end))
        }
        Fix::DrainFaster { end } => format!(
            "the {0} did not read in time: look at the {0}'s CPU and application, not its buffer",
            name(*end)
        ),
    }
}

/// "try --streams 2, a larger --block (now 8192 B) or jumbo frames (…)"; empty without
/// a fix.
fn try_fixes(fixes: &[Fix]) -> String {
    let words: Vec<String> = fixes.iter().map(fix).collect();
    match words.as_slice() {
        [] => String::new(),
        [one] => format!("; try {one}"),
        [init @ .., last] => format!("; try {} or {last}", init.join(", ")),
    }
}

/// The buffer and window fixes, which read as orders, not suggestions.
fn window_fixes(fixes: &[Fix]) -> String {
    let words: Vec<String> = fixes.iter().map(fix).collect();
    if words.is_empty() {
        String::new()
    } else {
        format!("; {}", words.join("; "))
    }
}

fn cpu_what(c: &CpuLoad) -> String {
    match &c.what {
        CpuWhat::Process { role: r, end } => format!(
            "the {} ({}) process ran at {:.0}% of a core",
            role(*r),
            name(*end),
            c.pct
        ),
        CpuWhat::Softirq { role: r, end } => format!(
            "softirq on the {} ({}) took {:.0}% of a core",
            role(*r),
            name(*end),
            c.pct
        ),
        CpuWhat::Host { role: r, end, ncpu } => format!(
            "all {ncpu} CPUs of the {} ({}) host were busy ({:.0}% of a core)",
            role(*r),
            name(*end),
            c.pct
        ),
        CpuWhat::SoftwareLink {
            link,
            sender_pct,
            receiver_pct,
            softirq_pct,
        } => format!(
            "the sender process ({sender_pct:.0}%), the receiver process ({receiver_pct:.0}%) and softirq ({softirq_pct:.0}%) took {:.0}% of a core moving data over a {link} link, which has no wire: its rate is the CPU time it takes",
            c.pct
        ),
    }
}

/// What the path needs against what the buffer reached: ", the path needs ≈ 1.5 MiB
/// (10.00 Gbit/s link × min RTT 1300 µs)", or that the buffer already holds it.
/// Without a real link speed (a virtual link) the estimate from the run's own rate,
/// said so; nothing when unknown.
fn needs(v: &LimitVerdict, buffer: Option<u32>) -> String {
    let fixed_window = v.fixes.iter().any(|f| matches!(f, Fix::RaiseWindow { .. }));
    let (bdp, what) = match v.needed {
        Some(Needed::Link {
            bytes: b,
            link_bps,
            min_rtt_us,
        }) => (
            b,
            format!("{} link × min RTT {min_rtt_us} µs", rate(link_bps)),
        ),
        // With --window the clocks decided alone: no estimate to hold it against.
        Some(Needed::Rate { .. }) if fixed_window => return String::new(),
        Some(Needed::Rate {
            bytes: b,
            goodput_bps,
            srtt_us,
        }) => (
            b,
            format!(
                "4 × the run's {} × smoothed RTT {srtt_us} µs: no real link speed on this link",
                rate(goodput_bps)
            ),
        ),
        None => return String::new(),
    };
    let bdp_s = bytes(bdp.ceil() as u64);
    match buffer {
        Some(b) if f64::from(b) >= bdp => {
            format!(", more than the ≈ {bdp_s} the path needs ({what})")
        }
        _ => format!(", the path needs ≈ {bdp_s} ({what})"),
    }
}

fn buffer_of(v: &LimitVerdict, send: bool) -> (Option<u32>, End) {
    if send {
        (v.sender_buffer, v.sender)
    } else {
        (v.receiver_buffer, v.receiver)
    }
}

/// The window or buffer named by the kernel's clocks.
fn by_clock(v: &LimitVerdict, send: bool) -> String {
    let s = &v.shares;
    let (buf, end) = buffer_of(v, send);
    format!(
        "{} limited the sender {} of the time (of its busy time: receive window {}, send buffer {}): the {}'s socket buffer reached {} B{}{}",
        if send { "send buffer" } else { "receive window" },
        v.share.map_or_else(|| "?".into(), pct),
        s.rwnd_limited.map_or_else(|| "?".into(), pct),
        s.sndbuf_limited.map_or_else(|| "?".into(), pct),
        name(end),
        buf.map_or_else(|| "?".into(), |b| b.to_string()),
        needs(v, buf),
        window_fixes(&v.fixes)
    )
}

/// The send buffer of a fixed `--window` under small writes, named by the sender's CPU.
fn by_sender_cpu(v: &LimitVerdict) -> String {
    let s = &v.shares;
    let (buf, end) = buffer_of(v, true);
    format!(
        "send buffer: the fixed --window under writes below {} held the sender: its process ran at {} of a core, at least {:.1}× the receiver's (a small fixed send buffer wakes the writer at nearly every ACK, CPU the kernel's clocks do not count: receive window {}, send buffer {}); the {}'s socket buffer was {} B{}",
        bytes(u64::from(SMALL_WRITE)),
        v.cpu.as_ref().map_or_else(|| "?".into(), |c| format!("{:.0}%", c.pct)),
        SENDER_BUSIER,
        s.rwnd_limited.map_or_else(|| "?".into(), pct),
        s.sndbuf_limited.map_or_else(|| "?".into(), pct),
        name(end),
        buf.map_or_else(|| "?".into(), |b| b.to_string()),
        window_fixes(&v.fixes)
    )
}

/// The window or buffer named by the window equation.
fn by_equation(v: &LimitVerdict, send: bool) -> String {
    let (buf, end) = buffer_of(v, send);
    let clock = if send {
        v.shares.sndbuf_limited
    } else {
        v.shares.rwnd_limited
    };
    let clock = clock.map_or("the kernel does not report its clock".to_string(), |c| {
        format!(
            "the kernel's {} clock read {}{}",
            if send { "sndbuf" } else { "rwnd" },
            pct(c),
            if send && c < 0.5 {
                " (a pacing sender, e.g. BBR, spreads the buffer over the round trip and the kernel books that as busy)"
            } else {
                ""
            }
        )
    });
    // A virtual link's own speed is no limit: the equation took it as an estimate.
    let (link, link_bps) = match (v.link_bps, v.nominal_link_bps) {
        (Some(l), _) => (format!("{} link", rate(l)), l),
        (None, Some(n)) => (
            format!(
                "link's nominal {} (a virtual link's speed, taken as an estimate)",
                rate(n)
            ),
            n,
        ),
        (None, None) => ("link".to_string(), 0.0),
    };
    let link_bdp = link_bps / 8.0 * f64::from(v.min_rtt_us.unwrap_or(0)) / 1e6;
    format!(
        "{} limited the sender: the {}'s socket buffer of {}{} B per {:.1} ms round trip (min RTT) allows ≈ {} (window ÷ RTT) and the run got {}, while the {} × min RTT needs ≈ {}; evidence: the window equation (rate ≤ window ÷ RTT); {clock}{}",
        if send { "send buffer" } else { "receive window" },
        name(end),
        if v.conns > 1 { format!("{} × ", v.conns) } else { String::new() },
        buf.unwrap_or(0),
        f64::from(v.min_rtt_us.unwrap_or(0)) / 1e3,
        rate(v.window_allows_bps.unwrap_or(0.0)),
        rate(v.goodput_bps.unwrap_or(0.0)),
        link,
        bytes(link_bdp.ceil() as u64),
        window_fixes(&v.fixes)
    )
}

fn network(v: &LimitVerdict) -> String {
    let s = &v.shares;
    let mut why = Vec::new();
    if let Some(r) = s.retrans.filter(|r| *r > 0.0) {
        why.push(format!("{} of bytes retransmitted", small_pct(r)));
    }
    if let Some(ce) = s.ce_marked.filter(|c| *c > 0.0) {
        why.push(format!("{} of segments ECN-marked", small_pct(ce)));
    }
    if why.is_empty() {
        why.push("no retransmissions or ECN marks".into());
    }
    format!(
        "the network: congestion control (its window or pacing) held the sender {} of the time ({}){}; no buffer or CPU was the limit",
        v.share.map_or_else(|| "?".into(), pct),
        why.join(", "),
        v.goodput_bps
            .map(|d| format!("; the path carried ≈ {}", rate(d)))
            .unwrap_or_default()
    )
}

/// One line for people: the direction, the cause with its share and evidence, and
/// the fixes that apply.
pub fn limit_line(v: &LimitVerdict) -> String {
    let dir = format!("{}→{}", name(v.sender), name(v.receiver));
    let rest = match v.cause {
        LimitCause::Cpu => {
            let what = v.cpu.as_ref().map_or_else(String::new, cpu_what);
            let because = match v.cpu_because {
                Some(CpuBecause::ReceiveWindowFull { share }) => format!(
                    " and could not drain the receive window, which limited the sender {} of the time",
                    pct(share)
                ),
                Some(CpuBecause::SenderIdle { share }) => format!(
                    ", and the sender had nothing queued to send {} of the time",
                    pct(share)
                ),
                None => String::new(),
            };
            format!("CPU: {what}{because}{}", try_fixes(&v.fixes))
        }
        LimitCause::ReceiveWindow | LimitCause::SendBuffer => {
            let send = v.cause == LimitCause::SendBuffer;
            match v.evidence {
                Some(WindowEvidence::WindowEquation) => by_equation(v, send),
                Some(WindowEvidence::SenderCpuAtSmallWrites) => by_sender_cpu(v),
                _ => by_clock(v, send),
            }
        }
        LimitCause::Network => network(v),
        LimitCause::Application => format!(
            "the application: the sender had nothing queued to send {} of the time (its writes, e.g. reading a file, were the limit)",
            v.share.map_or_else(|| "?".into(), pct)
        ),
        LimitCause::Receiver => format!(
            "the receiver: the receive window was full {} of the time (of the sender's busy time), though the {}'s socket buffer of {} B holds what the path needs{}; no CPU was saturated{}",
            v.share.map_or_else(|| "?".into(), pct),
            name(v.receiver),
            v.receiver_buffer.map_or_else(|| "?".into(), |b| b.to_string()),
            needs(v, v.receiver_buffer),
            window_fixes(&v.fixes)
        ),
        LimitCause::Unknown => "limiting factor unknown: no window, buffer or CPU dominated, or this kernel does not report tcp_info's busy/rwnd/sndbuf-limited times (Linux 4.10+)".into(),
    };
    format!("{dir}: {rest}")
}

/// One piece of run-wide advice in words.
pub fn advice_line(a: &Advice) -> String {
    match a {
        Advice::AgentReportMissing => "the agent's report never came: its side (bytes it read or wrote, its CPU and counters) is unknown; this end's figures are complete".into(),
        Advice::ProcessCpuBound { end, pct, fixes } => format!(
            "the {} process at {pct:.0}% of a core: the result is CPU-bound, not network-bound{}",
            name(*end),
            try_fixes(fixes)
        ),
        Advice::Incomplete {
            sender,
            receiver,
            written,
            read,
        } => format!(
            "{}→{}: {written} bytes written but {read} read: the run did not end cleanly",
            name(*sender),
            name(*receiver)
        ),
        Advice::CwndBelowBdp {
            cwnd_bytes,
            bdp_bytes,
            fixes,
        } => format!(
            "congestion window {} is below the bandwidth-delay product {}, and so is the send buffer{}",
            bytes(cwnd_bytes.ceil() as u64),
            bytes(bdp_bytes.ceil() as u64),
            window_fixes(fixes)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_engine::stream::advice::Setup;
    use mtuperf_engine::stream::limits::LimitShares;
    use mtuperf_engine::stream::metrics::EndMetrics;
    use mtuperf_engine::stream::verdict::{decide, Evidence};

    fn end(end: End, process: f64, softirq: f64, busy: f64) -> EndMetrics {
        EndMetrics {
            end,
            wall_s: 1.0,
            process_user_pct: 0.0,
            process_sys_pct: 0.0,
            process_pct: process,
            system_user_pct: 0.0,
            system_sys_pct: 0.0,
            system_irq_pct: 0.0,
            system_softirq_pct: softirq,
            system_busy_pct: busy,
            ncpu: 2,
            bytes_moved: 0,
            service_demand_us_per_mib: None,
            cpu_resolution: None,
            process_us_per_mib: None,
            iface: None,
        }
    }

    fn shares(busy: f64, rwnd: f64, sndbuf: f64) -> LimitShares {
        LimitShares {
            busy_of_lifetime: Some(busy),
            rwnd_limited: Some(rwnd),
            sndbuf_limited: Some(sndbuf),
            cwnd_limited: Some(1.0 - rwnd - sndbuf),
            retrans: Some(0.001),
            ce_marked: Some(0.0),
            busy_us: Some(1_000_000),
        }
    }

    fn ev<'a>(sh: LimitShares, snd: &'a EndMetrics, rcv: &'a EndMetrics) -> Evidence<'a> {
        Evidence {
            sender: End::Client,
            receiver: End::Agent,
            shares: sh,
            sender_end: Some(snd),
            receiver_end: Some(rcv),
            conns: 1,
            min_rtt_us: Some(1300),
            srtt_us: Some(1500),
            receiver_buffer: Some(131_072),
            sender_buffer: Some(65_536),
            link_bps: Some(10e9),
            nominal_link_bps: None,
            delivery_rate_bps: None,
            goodput_bps: Some(190e6),
            software_link: None,
            setup: Setup {
                window: None,
                block: 8192,
                conns: 1,
                sender_mtu: Some(1500),
                sender_kind: Some("ether".into()),
                sender: Some(End::Client),
                receiver: Some(End::Agent),
            },
        }
    }

    #[test]
    fn each_cause_in_words_with_its_fixes() {
        let idle = end(End::Client, 10.0, 5.0, 30.0);
        let busy_proc = end(End::Agent, 99.0, 5.0, 120.0);
        let all_busy = end(End::Agent, 30.0, 20.0, 199.0);
        let quiet = end(End::Agent, 10.0, 5.0, 30.0);
        let cases = [
            (shares(1.0, 0.71, 0.0), &idle, &quiet, "client→agent: receive window limited the sender 71% of the time (of its busy time: receive window 71%, send buffer 0%): the agent's socket buffer reached 131072 B, the path needs ≈ 1.5 MiB (10.00 Gbit/s link × min RTT 1300 µs); raise net.ipv4.tcp_rmem's maximum on the agent"),
            (shares(1.0, 0.71, 0.0), &idle, &busy_proc, "client→agent: CPU: the receiver (agent) process ran at 99% of a core and could not drain the receive window, which limited the sender 71% of the time; try --streams 2, a larger --block (now 8192 B) or jumbo frames (the sender's interface is at MTU 1500: fewer packets per byte)"),
            (shares(1.0, 0.0, 0.8), &idle, &quiet, "send buffer limited the sender 80% of the time (of its busy time: receive window 0%, send buffer 80%): the client's socket buffer reached 65536 B, the path needs ≈ 1.5 MiB"),
            (shares(0.8, 0.0, 0.0), &idle, &all_busy, "CPU: all 2 CPUs of the receiver (agent) host were busy (199% of a core), and the sender had nothing queued to send 20% of the time"),
            (shares(1.0, 0.0, 0.0), &idle, &all_busy, "the network: congestion control (its window or pacing) held the sender 100% of the time (0.10% of bytes retransmitted); the path carried ≈ 190.0 Mbit/s; no buffer or CPU was the limit"),
            (shares(0.3, 0.0, 0.0), &idle, &quiet, "the application: the sender had nothing queued to send 70% of the time"),
            (LimitShares::default(), &idle, &quiet, "limiting factor unknown"),
        ];
        for (sh, snd, rcv, text) in cases {
            let l = limit_line(&decide(&ev(sh, snd, rcv)));
            assert!(l.contains(text), "{l}\nlacks: {text}");
        }
    }

    /// A fixed `--window` under 8K writes whose sender worked harder than its
    /// receiver (BENCHMARKS.md §11, sweep 4's 128K window: 83% against 28%, the clocks
    /// at 7% and 0%) is the send buffer, in words with the sender's CPU and the fix;
    /// the same CPU split without `--window`, at 128K writes, or with the sender barely
    /// busier, or with a saturated sender, is not.
    #[test]
    fn a_fixed_window_under_small_writes_is_named_by_the_senders_cpu() {
        let (snd, rcv) = (
            end(End::Client, 83.0, 20.0, 150.0),
            end(End::Agent, 28.0, 20.0, 150.0),
        );
        let fixed = |block: u32| Setup {
            window: Some(128 * 1024),
            block,
            ..ev(shares(1.0, 0.0, 0.0), &snd, &rcv).setup
        };
        let v = decide(&Evidence {
            setup: fixed(8192),
            ..ev(shares(0.98, 0.07, 0.0), &snd, &rcv)
        });
        let l = limit_line(&v);
        assert_eq!(v.cause, LimitCause::SendBuffer, "{l}");
        assert_eq!(v.evidence, Some(WindowEvidence::SenderCpuAtSmallWrites));
        assert!(l.contains("send buffer: the fixed --window under writes below 64.0 KiB held the sender: its process ran at 83% of a core, at least 1.1× the receiver's"), "{l}");
        assert!(l.contains("receive window 7%, send buffer 0%"), "{l}");
        assert!(l.contains("--window"), "a fix names the flag: {l}");
        let not_named =
            |e: Evidence<'_>| decide(&e).evidence != Some(WindowEvidence::SenderCpuAtSmallWrites);
        assert!(
            not_named(ev(shares(0.98, 0.07, 0.0), &snd, &rcv)),
            "no --window"
        );
        assert!(
            not_named(Evidence {
                setup: fixed(128 * 1024),
                ..ev(shares(0.98, 0.07, 0.0), &snd, &rcv)
            }),
            "128K writes"
        );
        let even = end(End::Agent, 80.0, 20.0, 150.0);
        assert!(
            not_named(Evidence {
                setup: fixed(8192),
                ..ev(shares(0.98, 0.07, 0.0), &snd, &even)
            }),
            "83% against 80%"
        );
        // A saturated sender is the CPU whatever its window (sweep 5: 93-95% at 1M, 4M).
        let saturated = end(End::Client, 95.0, 20.0, 150.0);
        let v = decide(&Evidence {
            setup: fixed(8192),
            ..ev(shares(0.99, 0.0, 0.0), &saturated, &rcv)
        });
        assert_eq!(v.cause, LimitCause::Cpu, "{}", limit_line(&v));
    }

    #[test]
    fn a_buffer_above_what_the_path_needs_is_not_to_be_raised() {
        // Issue 29: "the agent's socket buffer reached 4915228 B, more than the ≈ 8 kB
        // the path needs … raise net.ipv4.tcp_rmem's maximum".
        let q = end(End::Agent, 10.0, 5.0, 30.0);
        let v = decide(&Evidence {
            receiver_buffer: Some(4_915_228),
            min_rtt_us: Some(7),
            ..ev(shares(1.0, 0.9, 0.0), &q, &q)
        });
        let l = limit_line(&v);
        assert_eq!(v.cause, LimitCause::Receiver, "{l}");
        assert!(l.contains("more than the ≈ 8.5 KiB the path needs"), "{l}");
        assert!(!l.contains("raise"), "{l}");
        assert!(l.ends_with("the agent did not read in time: look at the agent's CPU and application, not its buffer"), "{l}");
    }

    #[test]
    fn the_window_equation_in_words() {
        let (q, qa) = (
            end(End::Client, 1.0, 5.0, 30.0),
            end(End::Agent, 3.0, 5.0, 30.0),
        );
        let v = decide(&Evidence {
            min_rtt_us: Some(14_563),
            sender_buffer: Some(4096),
            receiver_buffer: Some(328_316),
            goodput_bps: Some(7.0e6),
            ..ev(shares(1.0, 0.0, 0.25), &q, &qa)
        });
        let l = limit_line(&v);
        for text in [
            "send buffer limited the sender: the client's socket buffer of 4096 B per 14.6 ms round trip (min RTT) allows ≈ 2.3 Mbit/s (window ÷ RTT) and the run got 7.0 Mbit/s, while the 10.00 Gbit/s link × min RTT needs ≈ 17.4 MiB",
            "evidence: the window equation (rate ≤ window ÷ RTT); the kernel's sndbuf clock read 25% (a pacing sender",
        ] {
            assert!(l.contains(text), "{l}\nlacks: {text}");
        }
        assert!(
            l.ends_with("raise net.ipv4.tcp_wmem's maximum on the client"),
            "{l}"
        );
    }

    #[test]
    fn advice_in_words() {
        let a = Advice::ProcessCpuBound {
            end: End::Agent,
            pct: 97.0,
            fixes: vec![Fix::MoreStreams { streams: 2 }],
        };
        assert_eq!(
            advice_line(&a),
            "the agent process at 97% of a core: the result is CPU-bound, not network-bound; try --streams 2"
        );
    }
}
