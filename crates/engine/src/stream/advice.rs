//! What to do about a stream's limit, checked against the setup it speaks of: the
//! rules that turn a cause into fixes ([`fixes`]) and the run-wide advice
//! ([`Advice`]). Typed, carrying numbers and places; `report` words them and names
//! the flags.
//!
//! No fix contradicts the setup: no jumbo frames where the sender's interface already
//! carries 9000 or more, or on loopback; no bigger buffer where the buffer already
//! holds what the path needs (link speed × min RTT: the window then filled because the
//! receiver did not empty it in time); no link-speed figure from a virtual link.

use serde::{Deserialize, Serialize};

use super::cause::LimitCause;
use super::End;

/// The interconnect MTU jumbo frames mean.
pub const JUMBO_MTU: u32 = 9000;
/// Writes at least this large gain little from a larger --block.
pub const LARGE_BLOCK: u32 = 64 * 1024;

/// One fix, with what it changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fix", rename_all = "snake_case")]
pub enum Fix {
    /// Spread a CPU-bound end over more connections (threads): `streams` of them.
    MoreStreams { streams: u32 },
    /// Larger writes than `block` bytes: fewer system calls per byte.
    LargerBlock { block: u32 },
    /// Jumbo frames: the sender's interface is at `mtu`, below 9000 (fewer packets
    /// per byte, so less CPU per byte).
    JumboFrames { mtu: u32 },
    /// `--window` fixed the buffers at `window` bytes: raise it.
    RaiseWindow { window: u32 },
    /// Autotuned buffers capped by `sysctl`'s maximum on `end`, below what the path
    /// needs: raise it.
    RaiseSysctlMax { sysctl: String, end: End },
    /// The buffer already holds what the path needs, so the window filled because
    /// `end` did not read in time: its CPU or its application, not its buffer.
    DrainFaster { end: End },
}

/// The setup the fixes are checked against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Setup {
    /// `--window`, when the user fixed the socket buffers.
    pub window: Option<u32>,
    pub block: u32,
    /// Connections of the direction.
    pub conns: u32,
    /// The sender's interface MTU and kind ("veth", "loopback", "ether", ...).
    pub sender_mtu: Option<u32>,
    pub sender_kind: Option<String>,
    pub sender: Option<End>,
    pub receiver: Option<End>,
}

/// The buffers against what the path needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Buffers {
    pub receiver: Option<u32>,
    pub sender: Option<u32>,
    /// Link speed × min RTT, bytes (None: a virtual link or an unknown speed).
    pub needed: Option<f64>,
}

impl Buffers {
    /// The buffer holds at least what the path needs (false when either is unknown).
    fn enough(b: Option<u32>, needed: Option<f64>) -> bool {
        matches!((b, needed), (Some(b), Some(n)) if f64::from(b) >= n)
    }
}

/// Fewer CPU per byte: more connections, larger writes, jumbo frames, each only where
/// the setup leaves room for it.
pub fn cpu_fixes(s: &Setup) -> Vec<Fix> {
    let mut out = Vec::new();
    let next = s.conns.max(1).saturating_mul(2);
    if next <= crate::config::bounds::MAX_STREAMS {
        out.push(Fix::MoreStreams { streams: next });
    }
    if s.block < LARGE_BLOCK {
        out.push(Fix::LargerBlock { block: s.block });
    }
    let loopback = s.sender_kind.as_deref() == Some("loopback");
    if let Some(mtu) = s.sender_mtu.filter(|m| *m < JUMBO_MTU && !loopback) {
        out.push(Fix::JumboFrames { mtu });
    }
    out
}

/// A window or buffer that held the sender: raise it where it is below what the path
/// needs (or the need is unknown), else name the slow reader.
fn window_fixes(cause: LimitCause, s: &Setup, b: &Buffers) -> Vec<Fix> {
    let (buffer, end, sysctl) = match cause {
        LimitCause::ReceiveWindow => (b.receiver, s.receiver, "net.ipv4.tcp_rmem"),
        _ => (b.sender, s.sender, "net.ipv4.tcp_wmem"),
    };
    let Some(end) = end else { return Vec::new() };
    if Buffers::enough(buffer, b.needed) {
        return if cause == LimitCause::ReceiveWindow {
            vec![Fix::DrainFaster { end }]
        } else {
            Vec::new()
        };
    }
    match s.window {
        Some(window) => vec![Fix::RaiseWindow { window }],
        None => vec![Fix::RaiseSysctlMax {
            sysctl: sysctl.into(),
            end,
        }],
    }
}

/// The fixes for a cause, checked against the setup.
pub fn fixes(cause: LimitCause, s: &Setup, b: &Buffers) -> Vec<Fix> {
    match cause {
        LimitCause::Cpu => cpu_fixes(s),
        LimitCause::ReceiveWindow | LimitCause::SendBuffer => window_fixes(cause, s, b),
        LimitCause::Receiver => s
            .receiver
            .map(|end| vec![Fix::DrainFaster { end }])
            .unwrap_or_default(),
        LimitCause::Network | LimitCause::Application | LimitCause::Unknown => Vec::new(),
    }
}

/// Run-wide advice of a stream, next to the per-direction verdicts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "advice", rename_all = "snake_case")]
pub enum Advice {
    /// The agent's report never came: its side (bytes it read or wrote, its CPU and
    /// counters) is unknown; this end's figures are complete.
    AgentReportMissing,
    /// A process took `pct` % of a core: the result is CPU-bound, not network-bound.
    ProcessCpuBound { end: End, pct: f64, fixes: Vec<Fix> },
    /// Bytes written and read differ: the run did not end cleanly.
    Incomplete {
        sender: End,
        receiver: End,
        written: u64,
        read: u64,
    },
    /// A connection's congestion window held less than half the bandwidth-delay
    /// product of a long path (RTT above 1 ms) while its send buffer was below it too.
    CwndBelowBdp {
        cwnd_bytes: f64,
        bdp_bytes: f64,
        fixes: Vec<Fix>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(mtu: u32, kind: &str, block: u32, conns: u32, window: Option<u32>) -> Setup {
        Setup {
            window,
            block,
            conns,
            sender_mtu: Some(mtu),
            sender_kind: Some(kind.into()),
            sender: Some(End::Client),
            receiver: Some(End::Agent),
        }
    }

    fn buffers(receiver: u32, sender: u32, needed: Option<f64>) -> Buffers {
        Buffers {
            receiver: Some(receiver),
            sender: Some(sender),
            needed,
        }
    }

    /// Every advice rule, with the cases issue 29 found contradicting the setup.
    #[test]
    fn no_fix_contradicts_the_setup() {
        let any = buffers(131_072, 131_072, None);
        let rmem = || Fix::RaiseSysctlMax {
            sysctl: "net.ipv4.tcp_rmem".into(),
            end: End::Agent,
        };
        let cases: Vec<(&str, LimitCause, Setup, Buffers, Vec<Fix>)> = vec![
            (
                "CPU on a path already at 9000: no jumbo frames",
                LimitCause::Cpu,
                setup(9000, "veth", 128 * 1024, 1, None),
                any,
                vec![Fix::MoreStreams { streams: 2 }],
            ),
            (
                "CPU on loopback: no jumbo frames",
                LimitCause::Cpu,
                setup(65_536, "loopback", 128 * 1024, 1, None),
                any,
                vec![Fix::MoreStreams { streams: 2 }],
            ),
            (
                "CPU on a 1500 NIC with 8K writes: more streams, larger writes, jumbo frames",
                LimitCause::Cpu,
                setup(1500, "ether", 8192, 2, None),
                any,
                vec![
                    Fix::MoreStreams { streams: 4 },
                    Fix::LargerBlock { block: 8192 },
                    Fix::JumboFrames { mtu: 1500 },
                ],
            ),
            (
                "CPU at the most streams the tool runs: not more of them",
                LimitCause::Cpu,
                setup(9000, "ether", 128 * 1024, 128, None),
                any,
                vec![],
            ),
            (
                "a receive buffer of 4915228 B where the path needs 8 kB: no bigger buffer, the reader was slow",
                LimitCause::ReceiveWindow,
                setup(9000, "ether", 128 * 1024, 1, None),
                buffers(4_915_228, 131_072, Some(8_000.0)),
                vec![Fix::DrainFaster { end: End::Agent }],
            ),
            (
                "a receive buffer below what the path needs: raise the sysctl that capped it",
                LimitCause::ReceiveWindow,
                setup(9000, "ether", 128 * 1024, 1, None),
                buffers(131_072, 131_072, Some(1.6e6)),
                vec![rmem()],
            ),
            (
                "--window on a virtual link (need unknown): raise --window",
                LimitCause::ReceiveWindow,
                setup(9000, "veth", 128 * 1024, 1, Some(16_384)),
                buffers(32_768, 32_768, None),
                vec![Fix::RaiseWindow { window: 16_384 }],
            ),
            (
                "a send buffer above what the path needs: no buffer advice",
                LimitCause::SendBuffer,
                setup(9000, "ether", 128 * 1024, 1, None),
                buffers(131_072, 4_194_304, Some(1.6e6)),
                vec![],
            ),
            (
                "the network: nothing of ours to raise",
                LimitCause::Network,
                setup(1500, "ether", 8192, 1, None),
                any,
                vec![],
            ),
        ];
        for (what, cause, s, b, want) in cases {
            assert_eq!(fixes(cause, &s, &b), want, "{what}");
        }
    }
}
