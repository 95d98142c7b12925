//! The limiting-factor verdict of one direction of a stream: CPU, the receive window,
//! the send buffer, the network or the application, from evidence on both ends (the
//! sender's `tcp_info` limit clocks, both ends' CPU, the granted socket buffers), and
//! the fixes that apply to this setup ([`advice`](super::advice)). Typed: `report`
//! words it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::advice::{self, Fix, Setup};
pub use super::cause::LimitCause;
use super::ends::EndMetrics;
use super::limits::LimitShares;
use super::window_eq::{self, WindowBound};
use super::End;

/// A share of time at or above this names its cause on its own.
pub const DOMINANT: f64 = 0.5;
/// The receive window and the send buffer together held the sender at least this
/// share of its busy time: the window is the limit. Calibrated in the lab
/// (`bench/window_sweep.sh`, BENCHMARKS.md §11): over the 44 `--window` settings of
/// three sweeps, within the range (29–35%) that best separates the windows a larger
/// one beat by ≥ 20% from those it did not (the recorded splits are
/// `verdict_tests.rs`'s table; fixed windows at small writes cost CPU no clock counts).
pub const WINDOW_SHARE: f64 = 0.35;
/// Writes below this size under a fixed `--window` cost the sender CPU that no
/// kernel clock counts (see [`WindowEvidence::SenderCpuAtSmallWrites`]).
pub const SMALL_WRITE: u32 = 64 * 1024;
/// Under a fixed `--window` and writes below [`SMALL_WRITE`], a sending process at
/// least this many times as busy as the receiving one, yet not saturated, names the
/// buffer. Calibrated in the lab (BENCHMARKS.md §11, sweeps 3 to 5, 8K writes): every
/// window a larger one beat by ≥ 20% had its sender 1.13–3.3× as busy as its
/// receiver and below 90% of a core; every window none beat had 0.78–0.98×, or a
/// sender at 93–95% (a quiet host, where 8K writes take a core with any window).
pub const SENDER_BUSIER: f64 = 1.1;
/// A process at or above this % of a core (per connection it runs) is saturated.
pub const CPU_SATURATED_PCT: f64 = 90.0;

/// Which evidence named a receive window or send buffer cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WindowEvidence {
    /// The kernel's clocks (tcpi_rwnd_limited + tcpi_sndbuf_limited) held at least
    /// [`WINDOW_SHARE`] of the busy time.
    LimitClock,
    /// The window equation: the goodput was at least half of the buffer ÷ min RTT and
    /// the link could carry at least 4× that (see `window_eq`).
    WindowEquation,
    /// A fixed `--window` under writes below [`SMALL_WRITE`], the sending process at
    /// least [`SENDER_BUSIER`] times as busy as the receiving one: a small fixed send
    /// buffer wakes the writer at nearly every ACK, CPU the kernel's clocks do not
    /// count (they read 2–20% in the lab while a larger window gave 40–120% more).
    SenderCpuAtSmallWrites,
}

/// The sender or the receiver of the direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Sender,
    Receiver,
}

/// Which CPU was saturated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CpuWhat {
    /// mtuperf's process on that end, at `pct` % of a core.
    Process { role: Role, end: End },
    /// Softirq on that end's host.
    Softirq { role: Role, end: End },
    /// Every CPU of that end's host busy (other programs count too).
    Host { role: Role, end: End, ncpu: u32 },
    /// A software link (veth, loopback): both processes and softirq together took a
    /// core's worth; such a link has no wire, its rate is the CPU time it takes.
    SoftwareLink {
        link: String,
        sender_pct: f64,
        receiver_pct: f64,
        softirq_pct: f64,
    },
}

/// A saturated CPU: which, and how busy (% of a core).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CpuLoad {
    pub what: CpuWhat,
    /// % of a core.
    pub pct: f64,
}

/// What else the evidence showed behind a CPU verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CpuBecause {
    /// The receiver could not drain the receive window, which held the sender `share`
    /// of its busy time.
    ReceiveWindowFull { share: f64 },
    /// The sender had nothing queued `share` of its life.
    SenderIdle { share: f64 },
}

/// What the path needs a window to hold, and how that was reckoned.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum Needed {
    /// The sender's real link speed × min RTT: the bandwidth-delay product.
    Link {
        bytes: f64,
        link_bps: f64,
        min_rtt_us: u32,
    },
    /// No real link speed (a virtual link, or unknown): four times what the run's own
    /// rate keeps in flight over its smoothed RTT. A buffer holds about half its size
    /// in payload (the rest is the kernel's bookkeeping), and a window-bound flow runs
    /// at window ÷ RTT, so a buffer of four times that was not what held it. Used
    /// only for autotuned buffers: with `--window` the kernel's clocks decide alone
    /// (a small fixed buffer holds a sender back while a slow reader drains it in
    /// bursts, at an average rate below window ÷ RTT: BENCHMARKS.md §11).
    Rate {
        bytes: f64,
        goodput_bps: f64,
        srtt_us: u32,
    },
}

impl Needed {
    pub fn bytes(&self) -> f64 {
        match self {
            Needed::Link { bytes, .. } | Needed::Rate { bytes, .. } => *bytes,
        }
    }

    /// What a buffer is held against: always the link's bandwidth-delay product;
    /// the run-rate estimate only for autotuned buffers (see [`Needed::Rate`]).
    fn applies(&self, window: Option<u32>) -> bool {
        matches!(self, Needed::Link { .. }) || window.is_none()
    }

    fn of(ev: &Evidence<'_>) -> Option<Needed> {
        match (ev.link_bps, ev.min_rtt_us, ev.goodput_bps, ev.srtt_us) {
            (Some(l), Some(r), _, _) => Some(Needed::Link {
                bytes: l / 8.0 * f64::from(r) / 1e6,
                link_bps: l,
                min_rtt_us: r,
            }),
            (None, _, Some(g), Some(rtt)) if g > 0.0 && rtt > 0 => Some(Needed::Rate {
                bytes: 4.0 * g / 8.0 * f64::from(rtt) / 1e6,
                goodput_bps: g,
                srtt_us: rtt,
            }),
            _ => None,
        }
    }
}

/// What limited one direction, with the evidence behind it and the fixes that apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LimitVerdict {
    /// The direction: who sent, who received.
    pub sender: End,
    pub receiver: End,
    pub cause: LimitCause,
    /// Share of the time the cause held (of the sender's busy time for the window and
    /// buffer causes, of its lifetime for the application, of a core for CPU).
    pub share: Option<f64>,
    /// For CPU: which one, and how busy.
    pub cpu: Option<CpuLoad>,
    pub cpu_because: Option<CpuBecause>,
    pub shares: LimitShares,
    /// Smallest RTT the sender saw, µs.
    pub min_rtt_us: Option<u32>,
    /// Receive buffer (SO_RCVBUF) the receiver ended with and send buffer (SO_SNDBUF)
    /// the sender ended with, bytes, the largest over the connections.
    pub receiver_buffer: Option<u32>,
    /// SO_SNDBUF the sender ended with, bytes, the largest over the connections.
    pub sender_buffer: Option<u32>,
    /// Connections of the direction.
    pub conns: u32,
    /// The sender interface's link speed, bit/s (None on virtual links: veth, bridge,
    /// loopback report a speed they are not held to).
    pub link_bps: Option<f64>,
    /// That speed × min RTT, bytes: the buffer a connection needs to fill the link.
    pub link_bdp_bytes: Option<f64>,
    /// What a window must hold on this path (the link's bandwidth-delay product, or
    /// without a real link speed twice the run's rate × smoothed RTT): a buffer at
    /// least this large is not what held the sender.
    pub needed: Option<Needed>,
    /// The rate the connections last delivered at (tcpi_delivery_rate, summed), bit/s.
    pub delivery_rate_bps: Option<f64>,
    /// The direction's goodput, bit/s.
    pub goodput_bps: Option<f64>,
    /// For a receive window or send buffer verdict on autotuned buffers (no
    /// `--window`) below what the path needs: the sysctl whose maximum capped them,
    /// on the end named by `sysctl_end` (`doctor` quotes the run when it checks it).
    pub sysctl: Option<String>,
    /// The end whose sysctl that is.
    pub sysctl_end: Option<End>,
    /// For a receive window or send buffer verdict: which evidence named it.
    pub evidence: Option<WindowEvidence>,
    /// For a window-equation verdict: the buffers ÷ min RTT, bit/s, the most the
    /// buffer allows per round trip.
    pub window_allows_bps: Option<f64>,
    /// For a window-equation verdict on a virtual link: the speed it reports, which
    /// the equation took as an estimate of the room the path leaves (no real one).
    pub nominal_link_bps: Option<f64>,
    /// The fixes that apply to this setup, most useful first (none contradicts it:
    /// no jumbo frames on a path at 9000, no bigger buffer than the path needs).
    pub fixes: Vec<Fix>,
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
    /// The largest smoothed RTT of the sending connections at their end, µs.
    pub srtt_us: Option<u32>,
    pub receiver_buffer: Option<u32>,
    pub sender_buffer: Option<u32>,
    /// The sender's real link speed (None on a virtual link or when unknown).
    pub link_bps: Option<f64>,
    /// The speed a virtual link reports (a veth says 10 Gbit/s): no rate it is held
    /// to, only the window equation's estimate of the room the path leaves.
    pub nominal_link_bps: Option<f64>,
    pub delivery_rate_bps: Option<f64>,
    /// Goodput of the direction, bit/s.
    pub goodput_bps: Option<f64>,
    /// The sender's interface kind when it is a software link ("veth", "loopback"):
    /// such a link has no wire, its rate is the CPU time it takes.
    pub software_link: Option<String>,
    /// What the fixes are checked against: `--window`, the block, the MTU.
    pub setup: Setup,
}

/// The most saturated CPU of either end, if any, and whether it is specific to
/// mtuperf (its process or softirq) rather than the whole host being busy: a process
/// at 90% of a core per connection it runs, softirq at 90% of a core, or every CPU of
/// a host 90% busy (which other programs on the host also cause, so it counts less).
fn cpu_saturation(ev: &Evidence<'_>) -> Option<(CpuLoad, bool)> {
    let mut best: Option<(CpuLoad, bool, f64)> = None;
    let cores = ev.conns.max(1) as f64;
    for (role, end) in [
        (Role::Sender, ev.sender_end),
        (Role::Receiver, ev.receiver_end),
    ] {
        let Some(m) = end else { continue };
        let ncpu = f64::from(m.ncpu.max(1));
        let e = m.end;
        let candidates = [
            (
                CpuWhat::Process { role, end: e },
                m.process_pct,
                CPU_SATURATED_PCT * cores.min(ncpu),
                true,
            ),
            (
                CpuWhat::Softirq { role, end: e },
                m.system_softirq_pct,
                CPU_SATURATED_PCT,
                true,
            ),
            (
                CpuWhat::Host {
                    role,
                    end: e,
                    ncpu: m.ncpu,
                },
                m.system_busy_pct,
                CPU_SATURATED_PCT * ncpu,
                false,
            ),
        ];
        for (what, pct, limit, specific) in candidates {
            let load = pct / limit;
            let better = best.as_ref().is_none_or(|b| (specific, load) > (b.1, b.2));
            if load >= 1.0 && better {
                best = Some((CpuLoad { what, pct }, specific, load));
            }
        }
    }
    best.map(|(c, specific, _)| (c, specific))
}

/// On a software link (veth, loopback) the two processes and softirq together using
/// at least a core's worth (90%) is the CPU limit: the packets that do not fit are
/// dropped in the host's backlog and show up as retransmissions, not as a busy core.
fn software_link_cpu(ev: &Evidence<'_>) -> Option<CpuLoad> {
    let link = ev.software_link.clone()?;
    let (snd, rcv) = (ev.sender_end?, ev.receiver_end?);
    let softirq = snd.system_softirq_pct.max(rcv.system_softirq_pct);
    let total = snd.process_pct + rcv.process_pct + softirq;
    (total >= CPU_SATURATED_PCT).then_some(CpuLoad {
        what: CpuWhat::SoftwareLink {
            link,
            sender_pct: snd.process_pct,
            receiver_pct: rcv.process_pct,
            softirq_pct: softirq,
        },
        pct: total,
    })
}

/// The cause and its share, before the details every verdict carries.
struct Named {
    cause: LimitCause,
    share: Option<f64>,
    cpu: Option<CpuLoad>,
    because: Option<CpuBecause>,
    evidence: Option<WindowEvidence>,
    bound: Option<WindowBound>,
}

impl Named {
    fn of(cause: LimitCause, share: Option<f64>) -> Named {
        Named {
            cause,
            share,
            cpu: None,
            because: None,
            evidence: None,
            bound: None,
        }
    }

    fn cpu(c: CpuLoad, because: Option<CpuBecause>) -> Named {
        Named {
            share: Some(c.pct / 100.0),
            cpu: Some(c),
            because,
            ..Named::of(LimitCause::Cpu, None)
        }
    }
}

/// The window or buffer the kernel's clocks name: the receive window and the send
/// buffer together held the sender at least [`WINDOW_SHARE`] of its busy time, and
/// the buffer of the longer clock is below what the path needs (a full window that
/// holds that much filled because the reader did not empty it in time). A receive
/// window that is full because the receiving process is saturated is CPU.
fn by_clock(
    ev: &Evidence<'_>,
    cpu: Option<&(CpuLoad, bool)>,
    needed: Option<&Needed>,
) -> Option<Named> {
    let s = &ev.shares;
    let (r, b) = (
        s.rwnd_limited.unwrap_or(0.0),
        s.sndbuf_limited.unwrap_or(0.0),
    );
    if s.rwnd_limited.is_none() && s.sndbuf_limited.is_none() || r + b < WINDOW_SHARE {
        return None;
    }
    let buffer = if r >= b {
        ev.receiver_buffer
    } else {
        ev.sender_buffer
    };
    if matches!((buffer, needed), (Some(buf), Some(n)) if f64::from(buf) >= n.bytes()) {
        // Not the buffer's size: a full receive window the reader did not empty.
        if r < b {
            return None;
        }
        let full = Some(CpuBecause::ReceiveWindowFull { share: r });
        return Some(
            match cpu.map(|c| c.0.clone()).or_else(|| software_link_cpu(ev)) {
                Some(c) => Named::cpu(c, full),
                None => Named::of(LimitCause::Receiver, Some(r)),
            },
        );
    }
    let receiver_cpu = cpu.filter(|(c, specific)| {
        *specific
            && matches!(
                c.what,
                CpuWhat::Process {
                    role: Role::Receiver,
                    ..
                } | CpuWhat::Softirq {
                    role: Role::Receiver,
                    ..
                }
            )
    });
    if r >= b {
        if let Some((c, _)) = receiver_cpu {
            return Some(Named::cpu(
                c.clone(),
                Some(CpuBecause::ReceiveWindowFull { share: r }),
            ));
        }
    }
    let cause = if r >= b {
        LimitCause::ReceiveWindow
    } else {
        LimitCause::SendBuffer
    };
    Some(Named {
        evidence: Some(WindowEvidence::LimitClock),
        ..Named::of(cause, Some(if r >= b { r } else { b }))
    })
}

/// The send buffer a fixed `--window` imposed on small writes, named by the sender's
/// CPU (see [`WindowEvidence::SenderCpuAtSmallWrites`]).
fn by_sender_cpu(ev: &Evidence<'_>) -> Option<Named> {
    ev.setup.window?;
    if ev.setup.block >= SMALL_WRITE {
        return None;
    }
    let (snd, rcv) = (ev.sender_end?, ev.receiver_end?);
    if snd.process_pct <= 0.0 || snd.process_pct < SENDER_BUSIER * rcv.process_pct {
        return None;
    }
    // A saturated sender is the CPU whatever its buffer: on a quiet host an 8K-write
    // sender takes a whole core with any window (sweep 5: 93–95% at 1M, 4M and the
    // default, where no larger window gained), and 86–88% under the windows that
    // held it.
    if snd.process_pct >= CPU_SATURATED_PCT * ev.conns.max(1) as f64 {
        return None;
    }
    Some(Named {
        evidence: Some(WindowEvidence::SenderCpuAtSmallWrites),
        cpu: Some(CpuLoad {
            what: CpuWhat::Process {
                role: Role::Sender,
                end: snd.end,
            },
            pct: snd.process_pct,
        }),
        ..Named::of(LimitCause::SendBuffer, ev.shares.sndbuf_limited)
    })
}

/// Decides the cause. Order: a window or buffer that held the sender a large share
/// of its busy time ([`by_clock`]); then a fixed `--window` under small writes whose
/// sender worked harder than its receiver ([`by_sender_cpu`]); then a saturated process or softirq; then a
/// sender with nothing queued for 10% of its life while a host's CPUs were all busy
/// (CPU) or for most of it (the application); then the window equation (a goodput
/// that is what the send or receive buffer allows per round trip on a path that
/// carries far more, see `window_eq`); then a software link's CPU; then the
/// congestion window (the network); then all CPUs busy.
fn name_cause(ev: &Evidence<'_>, needed: Option<&Needed>) -> Named {
    let s = &ev.shares;
    let cpu = cpu_saturation(ev);
    let idle = s.busy_of_lifetime.map(|b| 1.0 - b);
    if let Some(n) = by_clock(ev, cpu.as_ref(), needed).or_else(|| by_sender_cpu(ev)) {
        return n;
    }
    if let Some((c, true)) = &cpu {
        return Named::cpu(c.clone(), None);
    }
    if let (Some((c, _)), Some(i)) = (&cpu, idle.filter(|i| *i >= 0.1)) {
        return Named::cpu(c.clone(), Some(CpuBecause::SenderIdle { share: i }));
    }
    if let Some(i) = idle.filter(|i| *i >= DOMINANT) {
        return Named::of(LimitCause::Application, Some(i));
    }
    if let Some((send, b, _)) = equation(ev) {
        let (cause, clock) = if send {
            (LimitCause::SendBuffer, s.sndbuf_limited)
        } else {
            (LimitCause::ReceiveWindow, s.rwnd_limited)
        };
        return Named {
            evidence: Some(WindowEvidence::WindowEquation),
            bound: Some(b),
            ..Named::of(cause, clock)
        };
    }
    if let Some(c) = software_link_cpu(ev) {
        return Named::cpu(c, None);
    }
    if let Some(c) = s.cwnd_limited.filter(|c| *c >= DOMINANT) {
        return Named::of(LimitCause::Network, Some(c));
    }
    match cpu {
        Some((c, _)) => Named::cpu(c, None),
        None => Named::of(LimitCause::Unknown, None),
    }
}

/// The verdict: the cause ([`name_cause`]), its evidence and the fixes that apply.
pub fn decide(ev: &Evidence<'_>) -> LimitVerdict {
    let needed = Needed::of(ev);
    let held_against = needed.filter(|n| n.applies(ev.setup.window));
    let n = name_cause(ev, held_against.as_ref());
    let link_bdp_bytes = match needed {
        Some(Needed::Link { bytes, .. }) => Some(bytes),
        _ => None,
    };
    let buffers = advice::Buffers {
        receiver: ev.receiver_buffer,
        sender: ev.sender_buffer,
        needed: held_against.map(|n| n.bytes()),
    };
    let fixes = advice::fixes(n.cause, &ev.setup, &buffers);
    let (sysctl, sysctl_end) = fixes
        .iter()
        .find_map(|f| match f {
            Fix::RaiseSysctlMax { sysctl, end } => Some((Some(sysctl.clone()), Some(*end))),
            _ => None,
        })
        .unwrap_or((None, None));
    LimitVerdict {
        sender: ev.sender,
        receiver: ev.receiver,
        cause: n.cause,
        share: n.share,
        cpu: n.cpu,
        cpu_because: n.because,
        shares: ev.shares.clone(),
        min_rtt_us: ev.min_rtt_us,
        receiver_buffer: ev.receiver_buffer,
        sender_buffer: ev.sender_buffer,
        conns: u32::try_from(ev.conns).unwrap_or(u32::MAX),
        link_bps: ev.link_bps,
        link_bdp_bytes,
        needed,
        delivery_rate_bps: ev.delivery_rate_bps,
        goodput_bps: ev.goodput_bps,
        sysctl,
        sysctl_end,
        evidence: n.evidence,
        window_allows_bps: n.bound.as_ref().map(|b| b.allows_bps),
        nominal_link_bps: n
            .bound
            .as_ref()
            .and(ev.nominal_link_bps)
            .filter(|_| ev.link_bps.is_none()),
        fixes,
    }
}

/// The window equation for the send buffer and the receive buffer (see `window_eq`).
fn equation(ev: &Evidence<'_>) -> Option<(bool, WindowBound, End)> {
    let link = ev.link_bps.or(ev.nominal_link_bps);
    let b = |buf| window_eq::bound(buf, ev.conns, ev.min_rtt_us, ev.goodput_bps, link);
    window_eq::pick(
        b(ev.sender_buffer),
        b(ev.receiver_buffer),
        (ev.shares.sndbuf_limited, ev.shares.rwnd_limited),
        ev.sender,
        ev.receiver,
    )
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
pub(crate) mod tests;
