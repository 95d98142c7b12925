//! What to do about a stream's limit, checked against the setup it speaks of: the
//! rules that turn a cause into fixes ([`fixes`]) and the run-wide advice
//! ([`Advice`]). Typed, carrying numbers and places; `report` words them and names
//! the flags.
//!
//! No fix contradicts the setup: no jumbo frames where the sender's interface already
//! carries 9000 or more, or on loopback; no bigger buffer where the buffer already
//! holds what the path needs (link speed × min RTT: the window then filled because the
//! receiver did not empty it in time); no link-speed figure from a virtual link.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cause::LimitCause;
use super::End;

/// The interconnect MTU jumbo frames mean.
pub const JUMBO_MTU: u32 = 9000;
/// Writes at least this large gain little from a larger --block.
pub const LARGE_BLOCK: u32 = 64 * 1024;

/// One fix, with what it changes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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

    /// The four ways issue 29 found advice contradicting the setup it speaks of.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Contradiction {
        /// "…or jumbo frames" on a path already at 9000, and on loopback.
        Jumbo,
        /// "raise tcp_rmem's maximum" where the buffer already holds the BDP.
        Buffer,
        /// doctor --peer raising the peer while its cross-node check lowered this host.
        Direction,
        /// "NIC 102.5% of link speed" on a veth.
        LinkSpeed,
    }

    /// What a rule said: a stream's fixes, a doctor finding (status and fix command),
    /// the MTU a path diagnosis fixes toward, a link speed a figure may be taken of.
    #[derive(Debug, PartialEq)]
    enum Said {
        Fixes(Vec<Fix>),
        Doctor(Status, Option<doctor::Fix>),
        Status(Status),
        RaiseTo(u32),
        Speed(Option<u32>),
    }

    use crate::doctor::{
        self, Bdp, HostFacts, IfaceFacts, MtuScope, Options, Profile, RateFrom, RttFrom, Status,
    };
    use mtuperf_proto::host::IfaceInfo;

    fn iface(name: &str, kind: &str, mtu: u32, mbps: u32) -> IfaceFacts {
        IfaceFacts {
            info: IfaceInfo {
                name: name.into(),
                mtu,
                kind: kind.into(),
                speed_mbps: Some(mbps),
                ..IfaceInfo::default()
            },
            up: true,
            pause: None,
            counters: None,
            counters_delta: None,
            rp_filter: None,
            steering: None,
        }
    }

    /// A host with one interconnect NIC `net1` at `mtu` and the usual TCP maxima
    /// (tcp_rmem 6 MiB, tcp_wmem 4 MiB).
    fn host(name: &str, mtu: u32) -> HostFacts {
        let mut h = HostFacts {
            hostname: name.into(),
            ifaces: vec![iface("net1", "ether", mtu, 10_000)],
            ..HostFacts::default()
        };
        for (k, v) in [
            ("net.ipv4.tcp_rmem", "4096 131072 6291456"),
            ("net.ipv4.tcp_wmem", "4096 16384 4194304"),
        ] {
            h.sysctls.insert(k.into(), v.into());
        }
        h
    }

    /// Doctor's finding `id`: its status and fix.
    fn doctor_said(findings: &[doctor::Finding], id: &str) -> Said {
        findings.iter().find(|f| f.id == id).map_or_else(
            || Said::Fixes(Vec::new()),
            |f| Said::Doctor(f.status, f.remedy.clone()),
        )
    }

    /// The status of doctor's finding `id`.
    fn status_of(findings: &[doctor::Finding], id: &str) -> Said {
        match doctor_said(findings, id) {
            Said::Doctor(s, _) => Said::Status(s),
            other => other,
        }
    }

    /// Doctor's single-host check of `h` with a BDP of 10 Gbit/s × `rtt_ms`.
    fn doctor_host(h: &HostFacts, rtt_ms: u64) -> Vec<doctor::Finding> {
        let bdp = Bdp {
            bits_per_sec: 10e9,
            rtt: std::time::Duration::from_millis(rtt_ms),
            rate_from: RateFrom::Given,
            rtt_from: RttFrom::Given,
        };
        doctor::check_host(
            h,
            &Options {
                profile: Profile::Rac,
                bdp: Some(bdp),
                evidence: None,
            },
        )
    }

    /// The MTU `path`'s diagnosis of a 9000 host toward a 1500 one fixes toward.
    fn path_fix_target() -> Vec<u32> {
        use crate::diagnosis::pair::{decide, End, Pair, Way};
        use mtuperf_proto::msg::mesh::StopKind;
        let end = |a: [u8; 4], nic| End {
            addr: a.into(),
            nic_mtu: Some(nic),
            iface: None,
            first_router: None,
        };
        let way = |mtu, stop| Way {
            mtu,
            stop,
            icmp_from: None,
            vanish_after: None,
        };
        decide(&Pair {
            a: end([198, 18, 5, 1], 9000),
            b: end([198, 18, 5, 2], 1500),
            ab: Some(way(1500, StopKind::Silent)),
            ba: Some(way(1500, StopKind::Top)),
            expect: 9000,
        })
        .iter()
        .map(|d| d.expect)
        .collect()
    }

    /// Every advice rule against the setups issue 29 found it contradicting, in one
    /// table: no jumbo frames at 9000 or on loopback, no bigger buffer than the BDP
    /// needs, every MTU fix toward the expected MTU, no link speed from a virtual link.
    /// Each group also holds the case where the advice is due, so a rule that went
    /// silent altogether fails too.
    #[test]
    fn no_fix_contradicts_the_setup() {
        use Contradiction::{Buffer, Direction, Jumbo, LinkSpeed};
        let any = buffers(131_072, 131_072, None);
        let fixes_of = |cause, s: &Setup, b: &Buffers| Said::Fixes(fixes(cause, s, b));
        let rmem = || Fix::RaiseSysctlMax {
            sysctl: "net.ipv4.tcp_rmem".into(),
            end: End::Agent,
        };
        let (low, high) = (host("node1", 1500), host("node2", 9000));
        let set_mtu = |scope| doctor::Fix::SetMtu {
            iface: "net1".into(),
            mtu: 9000,
            scope,
        };
        let speed = |kind: &str| Said::Speed(iface("x", kind, 9000, 10_000).info.real_speed_mbps());
        let bdp_of = |ifaces: Vec<IfaceFacts>| {
            let check = doctor::run::Check {
                profile: Profile::Rac,
                sample: std::time::Duration::ZERO,
                ifaces: Vec::new(),
                selection: String::new(),
                bandwidth: None,
                rtt: None,
            };
            let h = HostFacts {
                ifaces,
                ..HostFacts::default()
            };
            let rtt = Some(std::time::Duration::from_millis(1));
            Said::Speed(
                doctor::run::choose_bdp(&check, &h, rtt).map(|b| (b.bits_per_sec / 1e6) as u32),
            )
        };
        let cases: Vec<(Contradiction, &str, Said, Said)> = vec![
            (
                Jumbo,
                "CPU on a path already at 9000: no jumbo frames",
                fixes_of(LimitCause::Cpu, &setup(9000, "veth", 128 * 1024, 1, None), &any),
                Said::Fixes(vec![Fix::MoreStreams { streams: 2 }]),
            ),
            (
                Jumbo,
                "CPU on loopback: no jumbo frames",
                fixes_of(LimitCause::Cpu, &setup(65_536, "loopback", 128 * 1024, 1, None), &any),
                Said::Fixes(vec![Fix::MoreStreams { streams: 2 }]),
            ),
            (
                Jumbo,
                "CPU on a 1500 NIC with 8K writes: more streams, larger writes, jumbo frames",
                fixes_of(LimitCause::Cpu, &setup(1500, "ether", 8192, 2, None), &any),
                Said::Fixes(vec![
                    Fix::MoreStreams { streams: 4 },
                    Fix::LargerBlock { block: 8192 },
                    Fix::JumboFrames { mtu: 1500 },
                ]),
            ),
            (
                Jumbo,
                "CPU at the most streams the tool runs: not more of them",
                fixes_of(LimitCause::Cpu, &setup(9000, "ether", 128 * 1024, 128, None), &any),
                Said::Fixes(vec![]),
            ),
            (
                Buffer,
                "a receive buffer of 4915228 B where the path needs 8 kB: no bigger buffer, the reader was slow",
                fixes_of(
                    LimitCause::ReceiveWindow,
                    &setup(9000, "ether", 128 * 1024, 1, None),
                    &buffers(4_915_228, 131_072, Some(8_000.0)),
                ),
                Said::Fixes(vec![Fix::DrainFaster { end: End::Agent }]),
            ),
            (
                Buffer,
                "a receive buffer below what the path needs: raise the sysctl that capped it",
                fixes_of(
                    LimitCause::ReceiveWindow,
                    &setup(9000, "ether", 128 * 1024, 1, None),
                    &buffers(131_072, 131_072, Some(1.6e6)),
                ),
                Said::Fixes(vec![rmem()]),
            ),
            (
                Buffer,
                "--window on a virtual link (need unknown): raise --window",
                fixes_of(
                    LimitCause::ReceiveWindow,
                    &setup(9000, "veth", 128 * 1024, 1, Some(16_384)),
                    &buffers(32_768, 32_768, None),
                ),
                Said::Fixes(vec![Fix::RaiseWindow { window: 16_384 }]),
            ),
            (
                Buffer,
                "a send buffer above what the path needs: no buffer advice",
                fixes_of(
                    LimitCause::SendBuffer,
                    &setup(9000, "ether", 128 * 1024, 1, None),
                    &buffers(131_072, 4_194_304, Some(1.6e6)),
                ),
                Said::Fixes(vec![]),
            ),
            (
                Buffer,
                "doctor: tcp_rmem's 6 MiB maximum above a 1.25 MB BDP: pass, nothing to raise",
                status_of(&doctor_host(&high, 1), "sysctl.net.ipv4.tcp_rmem"),
                Said::Status(Status::Pass),
            ),
            (
                Buffer,
                "doctor: tcp_wmem's 4 MiB maximum below a 5 MB BDP: raise it to the BDP",
                doctor_said(&doctor_host(&high, 4), "sysctl.net.ipv4.tcp_wmem"),
                Said::Doctor(
                    Status::Fail,
                    Some(doctor::Fix::sysctl("net.ipv4.tcp_wmem", "4096 16384 5000000")),
                ),
            ),
            (
                Direction,
                "doctor --peer from the 1500 host: the cross-node fix raises this host",
                doctor_said(&doctor::cross::compare(&low, &high, Profile::Rac), "cross.mtu"),
                Said::Doctor(Status::Fail, Some(set_mtu(MtuScope::Here))),
            ),
            (
                Direction,
                "doctor --peer from the 9000 host: the cross-node fix raises the peer, never lowers this host",
                doctor_said(&doctor::cross::compare(&high, &low, Profile::Rac), "cross.mtu"),
                Said::Doctor(
                    Status::Fail,
                    Some(set_mtu(MtuScope::Peer {
                        peer: "node1".into(),
                    })),
                ),
            ),
            (
                Direction,
                "doctor on the 1500 host itself: the same change as the cross-node fix",
                doctor_said(&doctor_host(&low, 1), "iface.mtu"),
                Said::Doctor(Status::Fail, Some(set_mtu(MtuScope::Interconnect))),
            ),
            (
                Direction,
                "path on a 9000/1500 mismatch: the fix raises the low NIC to 9000",
                Said::RaiseTo(path_fix_target().into_iter().min().unwrap_or(0)),
                Said::RaiseTo(9000),
            ),
            (LinkSpeed, "a veth's 10000 Mb/s is no link speed", speed("veth"), Said::Speed(None)),
            (LinkSpeed, "nor a bridge's", speed("bridge"), Said::Speed(None)),
            (LinkSpeed, "nor loopback's", speed("loopback"), Said::Speed(None)),
            (LinkSpeed, "a NIC's is", speed("ether"), Said::Speed(Some(10_000))),
            (
                LinkSpeed,
                "doctor's BDP: the real 1000 NIC, not the veth's 10000",
                bdp_of(vec![iface("veth0", "veth", 9000, 10_000), iface("eth1", "ether", 9000, 1000)]),
                Said::Speed(Some(1000)),
            ),
            (
                LinkSpeed,
                "doctor's BDP from a bridge alone: none",
                bdp_of(vec![iface("br0", "bridge", 9000, 10_000)]),
                Said::Speed(None),
            ),
        ];
        for c in [Jumbo, Buffer, Direction, LinkSpeed] {
            assert!(cases.iter().any(|x| x.0 == c), "{c:?} has no case");
        }
        for (c, what, got, want) in cases {
            assert_eq!(got, want, "{c:?}: {what}");
        }
    }
}
