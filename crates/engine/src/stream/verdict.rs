//! The limiting-factor verdict of one direction of a stream: CPU, the receive window,
//! the send buffer, the network or the application, from evidence on both ends (the
//! sender's `tcp_info` limit clocks, both ends' CPU, the granted socket buffers).

use serde::{Deserialize, Serialize};

use super::ends::EndMetrics;
use super::limits::LimitShares;
use super::verdict_fmt::{line, more_streams, name, needs, pct, rate, size, small_pct, window_fix};
use super::window_eq::{self, WindowBound};
use super::End;

/// A share of time at or above this names its cause.
pub const DOMINANT: f64 = 0.5;
/// A process at or above this % of a core (per connection it runs) is saturated.
pub const CPU_SATURATED_PCT: f64 = 90.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitCause {
    Cpu,
    ReceiveWindow,
    SendBuffer,
    Network,
    Application,
    /// The kernel does not report the limit clocks and no CPU was saturated.
    Unknown,
}

/// Which evidence named a receive window or send buffer cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowEvidence {
    /// The kernel's clock (tcpi_rwnd_limited / tcpi_sndbuf_limited) held ≥ 50% of the
    /// busy time.
    LimitClock,
    /// The window equation: the goodput was at least half of the buffer ÷ min RTT and
    /// the link could carry at least 4× that (see `window_eq`).
    WindowEquation,
}

/// What limited one direction, with the evidence behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitVerdict {
    pub cause: LimitCause,
    /// Share of the time the cause held (of the sender's busy time for the window and
    /// buffer causes, of its lifetime for the application, of a core for CPU).
    pub share: Option<f64>,
    /// For CPU: which ("sender process", "receiver process", "receiver softirq", ...).
    pub cpu: Option<String>,
    pub shares: LimitShares,
    /// Smallest RTT the sender saw, µs.
    pub min_rtt_us: Option<u32>,
    /// Receive buffer (SO_RCVBUF) the receiver ended with and send buffer (SO_SNDBUF)
    /// the sender ended with, bytes, the largest over the connections.
    pub receiver_buffer: Option<u32>,
    pub sender_buffer: Option<u32>,
    /// The sender interface's link speed × min RTT, bytes: the buffer a connection
    /// needs to fill the link.
    pub link_bdp_bytes: Option<f64>,
    /// The rate the connections last delivered at (tcpi_delivery_rate, summed), bit/s.
    pub delivery_rate_bps: Option<f64>,
    /// One line for people: the cause, its share and the fix.
    pub line: String,
    /// For a receive window or send buffer verdict on autotuned buffers (no
    /// `--window`): the sysctl whose maximum capped them, on the end named by
    /// `sysctl_end` (`doctor` quotes the run when it checks that sysctl).
    #[serde(default)]
    pub sysctl: Option<String>,
    #[serde(default)]
    pub sysctl_end: Option<End>,
    /// For a receive window or send buffer verdict: which evidence named it.
    #[serde(default)]
    pub evidence: Option<WindowEvidence>,
    /// For a window-equation verdict: the buffers ÷ min RTT, bit/s, the most the
    /// buffer allows per round trip.
    #[serde(default)]
    pub window_allows_bps: Option<f64>,
}

/// Everything the verdict looks at for one direction.
#[derive(Debug, Clone)]
pub struct Evidence<'a> {
    pub sender: End,
    pub receiver: End,
    pub shares: LimitShares,
    pub sender_end: Option<&'a EndMetrics>,
    pub receiver_end: Option<&'a EndMetrics>,
    /// Connections of this direction (each a thread on both ends).
    pub conns: usize,
    pub min_rtt_us: Option<u32>,
    pub receiver_buffer: Option<u32>,
    pub sender_buffer: Option<u32>,
    pub link_bps: Option<f64>,
    pub delivery_rate_bps: Option<f64>,
    /// Goodput of the direction, bit/s.
    pub goodput_bps: Option<f64>,
    /// The sender's interface kind when it is a software link ("veth", "loopback"):
    /// such a link has no wire, its rate is the CPU time it takes.
    pub software_link: Option<String>,
    /// `--window`, when the user fixed the socket buffers.
    pub window: Option<u32>,
}

/// A saturated CPU on either end: (phrase, % of a core, whether it is specific to
/// mtuperf — its process or softirq — rather than the whole host being busy).
#[derive(Debug, Clone)]
struct CpuLoad {
    what: String,
    role: &'static str,
    pct: f64,
    specific: bool,
    load: f64,
}

/// The most saturated CPU of either end, if any: a process at 90% of a core per
/// connection it runs, softirq at 90% of a core, or every CPU of a host 90% busy
/// (which other programs on the host also cause, so it counts less).
fn cpu_saturation(ev: &Evidence<'_>) -> Option<CpuLoad> {
    let mut best: Option<CpuLoad> = None;
    let cores = ev.conns.max(1) as f64;
    for (role, end) in [("sender", ev.sender_end), ("receiver", ev.receiver_end)] {
        let Some(m) = end else { continue };
        let ncpu = f64::from(m.ncpu.max(1));
        let e = name(m.end);
        let candidates = [
            (
                format!(
                    "the {role} ({e}) process ran at {:.0}% of a core",
                    m.process_pct
                ),
                m.process_pct,
                CPU_SATURATED_PCT * cores.min(ncpu),
                true,
            ),
            (
                format!(
                    "softirq on the {role} ({e}) took {:.0}% of a core",
                    m.system_softirq_pct
                ),
                m.system_softirq_pct,
                CPU_SATURATED_PCT,
                true,
            ),
            (
                format!(
                    "all {} CPUs of the {role} ({e}) host were busy ({:.0}% of a core)",
                    m.ncpu, m.system_busy_pct
                ),
                m.system_busy_pct,
                CPU_SATURATED_PCT * ncpu,
                false,
            ),
        ];
        for (what, pct, limit, specific) in candidates {
            let load = pct / limit;
            let better = best
                .as_ref()
                .is_none_or(|b| (specific, load) > (b.specific, b.load));
            if load >= 1.0 && better {
                best = Some(CpuLoad {
                    what,
                    role,
                    pct,
                    specific,
                    load,
                });
            }
        }
    }
    best
}

/// On a software link (veth, loopback) the two processes and softirq together using
/// at least a core's worth (90%) is the CPU limit: the packets that do not fit are
/// dropped in the host's backlog and show up as retransmissions, not as a busy core.
fn software_link_cpu(ev: &Evidence<'_>) -> Option<CpuLoad> {
    ev.software_link.as_ref()?;
    let (snd, rcv) = (ev.sender_end?, ev.receiver_end?);
    let softirq = snd.system_softirq_pct.max(rcv.system_softirq_pct);
    let total = snd.process_pct + rcv.process_pct + softirq;
    (total >= CPU_SATURATED_PCT).then(|| CpuLoad {
        what: format!(
            "the sender process ({:.0}%), the receiver process ({:.0}%) and softirq ({softirq:.0}%) took {total:.0}% of a core",
            snd.process_pct, rcv.process_pct
        ),
        role: "both",
        pct: total,
        specific: true,
        load: total / CPU_SATURATED_PCT,
    })
}

/// Decides the verdict. Order: a window or buffer that held the sender most of its
/// busy time (a receive window that is full because the receiving process is
/// saturated is CPU, not the window); then a saturated process or softirq; then a
/// sender with nothing queued for 10% of its life while a host's CPUs were all busy
/// (CPU) or for most of it (the application); then the window equation (a goodput
/// that is what the send or receive buffer allows per round trip on a path that
/// carries far more, see `window_eq`); then the congestion window (the network);
/// then all CPUs busy.
pub fn decide(ev: &Evidence<'_>) -> LimitVerdict {
    let s = &ev.shares;
    let cpu = cpu_saturation(ev);
    let dir = format!("{}→{}", name(ev.sender), name(ev.receiver));
    let idle = s.busy_of_lifetime.map(|b| 1.0 - b);
    let streams = more_streams(u32::try_from(ev.conns).unwrap_or(u32::MAX))
        .map_or(String::new(), |s| format!("{s}, "));
    let cpu_verdict = |c: &CpuLoad, why: String| {
        (
            LimitCause::Cpu,
            Some(c.pct / 100.0),
            Some(c.what.clone()),
            line(&dir, "CPU: ", &format!("{}{why}; try {streams}a larger --block or jumbo frames (fewer packets per byte)", c.what)),
        )
    };
    let mut by_equation: Option<WindowBound> = None;
    let (cause, share, cpu_what, text) = if let Some(r) = s.rwnd_limited.filter(|r| *r >= DOMINANT)
    {
        match cpu.as_ref().filter(|c| c.specific && c.role == "receiver") {
            Some(c) => cpu_verdict(
                c,
                format!(
                    " and could not drain the receive window, which limited the sender {} of the time",
                    pct(r)
                ),
            ),
            None => (
                LimitCause::ReceiveWindow,
                Some(r),
                None,
                line(
                    &dir,
                    "receive window limited the sender ",
                    &format!(
                        "{} of the time: the {}'s socket buffer reached {} B{}; {}",
                        pct(r),
                        name(ev.receiver),
                        ev.receiver_buffer.map_or("?".into(), |b| b.to_string()),
                        needs(ev.link_bps, ev.min_rtt_us, ev.receiver_buffer),
                        window_fix(ev.window, "net.ipv4.tcp_rmem", ev.receiver)
                    ),
                ),
            ),
        }
    } else if let Some(sb) = s.sndbuf_limited.filter(|x| *x >= DOMINANT) {
        (
            LimitCause::SendBuffer,
            Some(sb),
            None,
            line(
                &dir,
                "send buffer limited the sender ",
                &format!(
                    "{} of the time: the {}'s socket buffer reached {} B{}; {}",
                    pct(sb),
                    name(ev.sender),
                    ev.sender_buffer.map_or("?".into(), |b| b.to_string()),
                    needs(ev.link_bps, ev.min_rtt_us, None),
                    window_fix(ev.window, "net.ipv4.tcp_wmem", ev.sender)
                ),
            ),
        )
    } else if let Some(c) = cpu.as_ref().filter(|c| c.specific) {
        cpu_verdict(c, String::new())
    } else if let (Some(c), Some(i)) = (cpu.as_ref(), idle.filter(|i| *i >= 0.1)) {
        cpu_verdict(
            c,
            format!(
                ", and the sender had nothing queued to send {} of the time",
                pct(i)
            ),
        )
    } else if let Some(i) = idle.filter(|i| *i >= DOMINANT) {
        (
            LimitCause::Application,
            Some(i),
            None,
            line(
                &dir,
                "the application: ",
                &format!(
                    "the sender had nothing queued to send {} of the time (its writes, e.g. reading a file, were the limit)",
                    pct(i)
                ),
            ),
        )
    } else if let Some((send, b, end)) = equation(ev) {
        let text = equation_line(ev, &dir, send, &b, end);
        let clock = if send {
            s.sndbuf_limited
        } else {
            s.rwnd_limited
        };
        by_equation = Some(b);
        let cause = if send {
            LimitCause::SendBuffer
        } else {
            LimitCause::ReceiveWindow
        };
        (cause, clock, None, text)
    } else if let Some(c) = software_link_cpu(ev) {
        cpu_verdict(
            &c,
            format!(
                " moving data over a {} link, which has no wire: its rate is the CPU time it takes",
                ev.software_link.as_deref().unwrap_or("software")
            ),
        )
    } else if let Some(c) = s.cwnd_limited.filter(|c| *c >= DOMINANT) {
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
        (
            LimitCause::Network,
            Some(c),
            None,
            line(
                &dir,
                "the network: ",
                &format!(
                    "congestion control (its window or pacing) held the sender {} of the time ({}){}; no buffer or CPU was the limit",
                    pct(c),
                    why.join(", "),
                    ev.goodput_bps
                        .map(|d| format!("; the path carried ≈ {}", rate(d)))
                        .unwrap_or_default()
                ),
            ),
        )
    } else if let Some(c) = cpu.as_ref() {
        cpu_verdict(c, String::new())
    } else {
        (
            LimitCause::Unknown,
            None,
            None,
            line(
                &dir,
                "limiting factor unknown: ",
                "no window, buffer or CPU dominated, or this kernel does not report tcp_info's busy/rwnd/sndbuf-limited times (Linux 4.10+)",
            ),
        )
    };
    let (sysctl, sysctl_end) = match cause {
        LimitCause::ReceiveWindow => (Some("net.ipv4.tcp_rmem"), Some(ev.receiver)),
        LimitCause::SendBuffer => (Some("net.ipv4.tcp_wmem"), Some(ev.sender)),
        _ => (None, None),
    };
    LimitVerdict {
        cause,
        share,
        cpu: cpu_what,
        shares: s.clone(),
        min_rtt_us: ev.min_rtt_us,
        receiver_buffer: ev.receiver_buffer,
        sender_buffer: ev.sender_buffer,
        link_bdp_bytes: match (ev.link_bps, ev.min_rtt_us) {
            (Some(l), Some(r)) => Some(l / 8.0 * f64::from(r) / 1e6),
            _ => None,
        },
        delivery_rate_bps: ev.delivery_rate_bps,
        line: text,
        sysctl: sysctl.filter(|_| ev.window.is_none()).map(str::to_string),
        sysctl_end: sysctl_end.filter(|_| ev.window.is_none()),
        evidence: match (cause, &by_equation) {
            (LimitCause::ReceiveWindow | LimitCause::SendBuffer, Some(_)) => {
                Some(WindowEvidence::WindowEquation)
            }
            (LimitCause::ReceiveWindow | LimitCause::SendBuffer, None) => {
                Some(WindowEvidence::LimitClock)
            }
            _ => None,
        },
        window_allows_bps: by_equation.map(|b| b.allows_bps),
    }
}

/// The window equation for the send buffer and the receive buffer (see `window_eq`).
fn equation(ev: &Evidence<'_>) -> Option<(bool, WindowBound, End)> {
    let b = |buf| window_eq::bound(buf, ev.conns, ev.min_rtt_us, ev.goodput_bps, ev.link_bps);
    window_eq::pick(
        b(ev.sender_buffer),
        b(ev.receiver_buffer),
        (ev.shares.sndbuf_limited, ev.shares.rwnd_limited),
        ev.sender,
        ev.receiver,
    )
}

/// "send buffer limited the sender: the client's socket buffer of 4096 B per 14.6 ms
/// round trip allows ≈ 2.3 Mbit/s …; evidence: the window equation; … raise …".
fn equation_line(ev: &Evidence<'_>, dir: &str, send: bool, b: &WindowBound, end: End) -> String {
    let s = &ev.shares;
    let (what, clock, sysctl) = if send {
        (
            "send buffer limited the sender: ",
            s.sndbuf_limited,
            "net.ipv4.tcp_wmem",
        )
    } else {
        (
            "receive window limited the sender: ",
            s.rwnd_limited,
            "net.ipv4.tcp_rmem",
        )
    };
    let clock = clock.map_or("the kernel does not report its clock".to_string(), |c| {
        format!(
            "the kernel's {} clock read {}{}",
            if send { "sndbuf" } else { "rwnd" },
            pct(c),
            if send && c < DOMINANT {
                " (a pacing sender, e.g. BBR, spreads the buffer over the round trip and the kernel books that as busy)"
            } else {
                ""
            }
        )
    });
    line(
        dir,
        what,
        &format!(
            "the {}'s socket buffer of {}{} B {}; evidence: the window equation (rate ≤ window ÷ RTT); {clock}; {}",
            name(end),
            if ev.conns > 1 { format!("{} × ", ev.conns) } else { String::new() },
            if send { ev.sender_buffer } else { ev.receiver_buffer }.unwrap_or(0),
            window_eq::describe(
                b,
                ev.min_rtt_us.unwrap_or(0),
                rate,
                size,
                ev.link_bps.unwrap_or(0.0)
            ),
            window_fix(ev.window, sysctl, end)
        ),
    )
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
