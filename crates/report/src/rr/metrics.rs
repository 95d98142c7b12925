//! Figures derived from an rr result. Every figure says what it counts, over which
//! interval and on which end.

use mtuperf_engine::cpu_res::CpuResolution;
use mtuperf_engine::rr::{RrCounts, RrResult};
use mtuperf_proto::host::{HostSnapshot, IfaceInfo, SnmpCounters, ThreadsCpu};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One end's host figures over its measured interval (its own before/after snapshots).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndFigures {
    /// Interface that carried the route to the peer.
    pub iface: Option<String>,
    pub mtu: Option<u32>,
    /// System-wide CPU busy (all CPUs, from /proc/stat) as % of the end's capacity.
    pub cpu_pct: Option<f64>,
    /// System-wide CPU busy time per block (µs of CPU per block served or received;
    /// under `--bidir` per block received plus served, since each end does both).
    pub cpu_us_per_block: Option<f64>,
    /// What `cpu_pct` and `cpu_us_per_block` rest on: /proc/stat ticks counted and
    /// their uncertainty (± one tick per CPU).
    pub cpu_resolution: Option<CpuResolution>,
    /// The tool's own CPU per block: time on CPU of the mtuperf threads that carried
    /// the traffic on this end (client: requester threads; agent: serving threads;
    /// plus the other role's threads under `--bidir`), each over its life, in ns from
    /// /proc/thread-self/schedstat (getrusage RUSAGE_THREAD's user + system when a
    /// thread could not read it), µs per block (same blocks as `cpu_us_per_block`).
    pub tool_cpu_us_per_block: Option<f64>,
    /// Those threads' CPU as % of their lifetimes summed (100: every thread busy all
    /// its life, the tool itself is the bottleneck).
    pub tool_cpu_pct: Option<f64>,
    /// How many threads those are.
    pub tool_threads: Option<u32>,
    pub rx_frames: Option<u64>,
    pub tx_frames: Option<u64>,
    /// Interface frames (rx + tx) per block of this end.
    pub frames_per_block: Option<f64>,
    /// Busier direction of the interface as % of its link speed (when known and real:
    /// none on veth, bridge or loopback, whose reported speed is no limit).
    pub nic_util_pct: Option<f64>,
    /// IP/UDP counter deltas of the whole host (/proc/net/snmp, v4 + v6).
    pub snmp: Option<SnmpCounters>,
    /// IP fragments this host created per block (FragCreates delta / blocks).
    pub frag_creates_per_block: Option<f64>,
}

/// Derived figures of one rr run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RrMetrics {
    /// Client's measured interval (Go → last client thread done), s.
    pub wall_s: f64,
    /// Blocks received by the client per second of its measured interval.
    pub blocks_per_s: f64,
    /// Block bytes (without headers) received per second, MiB/s.
    pub mib_per_s: f64,
    /// Requests counted lost, % of request datagrams sent (re-sends included).
    pub lost_pct: f64,
    /// Open loop: mean delay of the sends counted as behind schedule (ms).
    pub behind_mean_ms: Option<f64>,
    pub client: EndFigures,
    pub agent: EndFigures,
    /// `--bidir`: the agent → client direction, over the agent requester's measured
    /// interval (its Go → its last requester thread done); blocks received by the agent.
    pub reverse: Option<Direction>,
    /// When an end's own threads were (nearly) saturated: the knee may be the tool's.
    pub warnings: Vec<String>,
}

/// Threads busy this much of their lives make the tool the suspected bottleneck.
pub const TOOL_BUSY_WARN_PCT: f64 = 90.0;

/// One direction's throughput and loss, over its requester's measured interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Direction {
    pub wall_s: f64,
    /// Blocks received by the requester per second.
    pub blocks_per_s: f64,
    /// Block bytes (without headers) received per second, MiB/s.
    pub mib_per_s: f64,
    /// Requests counted lost, % of request datagrams sent (re-sends included).
    pub lost_pct: f64,
    /// Open loop: mean delay of the sends counted as behind schedule (ms).
    pub behind_mean_ms: Option<f64>,
}

impl Direction {
    pub fn of(c: &RrCounts, wall_ns: u64, block: u32) -> Direction {
        let wall_s = wall_ns as f64 / 1e9;
        let blocks = c.blocks as f64;
        Direction {
            wall_s,
            blocks_per_s: if wall_s > 0.0 { blocks / wall_s } else { 0.0 },
            mib_per_s: if wall_s > 0.0 {
                blocks * f64::from(block) / wall_s / f64::from(1u32 << 20)
            } else {
                0.0
            },
            lost_pct: if c.requests_sent > 0 {
                c.lost as f64 / c.requests_sent as f64 * 100.0
            } else {
                0.0
            },
            behind_mean_ms: (c.behind_sends > 0)
                .then(|| c.behind_sum_ns as f64 / c.behind_sends as f64 / 1e6),
        }
    }
}

pub(super) fn end_figures(
    before: &HostSnapshot,
    after: &HostSnapshot,
    iface: Option<&IfaceInfo>,
    blocks: u64,
    tool: Option<ThreadsCpu>,
) -> EndFigures {
    let wall_ns = after.at_ns.saturating_sub(before.at_ns) as f64;
    let per_block = |v: f64| (blocks > 0).then(|| v / blocks as f64);
    let cpu = after.cpu.system.delta(&before.cpu.system);
    let busy = cpu.busy_ns() as f64;
    let ncpu = f64::from(after.cpu.ncpu.max(1));
    let cpu_ok = after.cpu.ncpu > 0 && wall_ns > 0.0;
    let ifd = match (&before.iface, &after.iface) {
        (Some(b), Some(a)) => Some(a.delta(b)),
        _ => None,
    };
    let snmp = match (&before.snmp, &after.snmp) {
        (Some(b), Some(a)) => Some(a.delta(b)),
        _ => None,
    };
    // No percentage of a virtual link's "speed" (veth says 10 Gbit/s, and carries more).
    let nic = match (&ifd, iface.and_then(IfaceInfo::real_speed_mbps)) {
        (Some(d), Some(mbps)) if mbps > 0 && wall_ns > 0.0 => {
            let bits = d.rx_bytes.max(d.tx_bytes) as f64 * 8.0;
            Some(bits / (wall_ns / 1e9) / (f64::from(mbps) * 1e6) * 100.0)
        }
        _ => None,
    };
    EndFigures {
        iface: iface.map(|i| i.name.clone()),
        mtu: iface.map(|i| i.mtu),
        cpu_pct: cpu_ok.then(|| busy / (wall_ns * ncpu) * 100.0),
        cpu_us_per_block: if cpu_ok {
            per_block(busy / 1000.0)
        } else {
            None
        },
        cpu_resolution: cpu_ok.then(|| CpuResolution::of(cpu.busy_ns(), after.cpu.ncpu)),
        tool_cpu_us_per_block: tool.and_then(|t| per_block(t.on_cpu_ns() as f64 / 1000.0)),
        tool_cpu_pct: tool
            .filter(|t| t.life_ns > 0)
            .map(|t| t.on_cpu_ns() as f64 / t.life_ns as f64 * 100.0),
        tool_threads: tool.map(|t| t.threads),
        rx_frames: ifd.as_ref().map(|d| d.rx_packets),
        tx_frames: ifd.as_ref().map(|d| d.tx_packets),
        frames_per_block: ifd
            .as_ref()
            .and_then(|d| per_block((d.rx_packets + d.tx_packets) as f64)),
        nic_util_pct: nic,
        frag_creates_per_block: snmp
            .as_ref()
            .and_then(|s| per_block(s.ip_frag_creates as f64)),
        snmp,
    }
}

/// Both CPU accounts summed (None when neither was measured).
fn both(a: Option<ThreadsCpu>, b: Option<ThreadsCpu>) -> Option<ThreadsCpu> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a.add(&b);
            Some(a)
        }
        (a, b) => a.or(b),
    }
}

/// A warning when `end`'s system-wide CPU figure is too coarse to trust.
fn cpu_resolution_warning(end: &str, r: &CpuResolution) -> Option<String> {
    r.is_coarse().then(|| {
        format!(
            "{end}: system-wide CPU rests on {}: the run is too short for /proc/stat's resolution; a longer --time narrows it (the tool's own thread CPU is finer)",
            r.text()
        )
    })
}

/// The warnings for ends whose own threads were nearly saturated.
fn tool_warnings(client: &EndFigures, agent: &EndFigures) -> Vec<String> {
    let mut out = Vec::new();
    for (end, f) in [("client", client), ("agent", agent)] {
        out.extend(
            f.cpu_resolution
                .and_then(|r| cpu_resolution_warning(end, &r)),
        );
    }
    if let Some(p) = client.tool_cpu_pct.filter(|p| *p >= TOOL_BUSY_WARN_PCT) {
        out.push(format!(
            "the client used {p:.0}% of its threads' CPU: the knee may be the client's; add --threads or a second client host"
        ));
    }
    if let Some(p) = agent.tool_cpu_pct.filter(|p| *p >= TOOL_BUSY_WARN_PCT) {
        out.push(format!(
            "the agent used {p:.0}% of its serving threads' CPU: the knee may be the agent's; add --workers (up to the agent's --max-workers) or cores"
        ));
    }
    out
}

pub fn compute(r: &RrResult) -> RrMetrics {
    let c = &r.client.counts;
    let mut fwd = Direction::of(c, r.client.wall_ns, r.request.block);
    // `rr --from`: each host's rate over its own measured phase, summed.
    if !r.from.is_empty() {
        fwd.blocks_per_s = r.from.iter().map(|h| h.blocks_per_s).sum();
        fwd.mib_per_s = fwd.blocks_per_s * f64::from(r.request.block) / f64::from(1u32 << 20);
    }
    let client = end_figures(
        &r.client.before,
        &r.client.after,
        r.client.iface.as_ref(),
        c.blocks + r.reverse.as_ref().map_or(0, |v| v.responder.responses),
        both(
            r.client.cpu,
            r.reverse.as_ref().and_then(|v| v.responder.cpu),
        ),
    );
    let agent = end_figures(
        &r.agent.before,
        &r.agent.after,
        r.agent.iface.as_ref(),
        r.agent.responses + r.reverse.as_ref().map_or(0, |v| v.requester.counts.blocks),
        r.agent.cpu,
    );
    RrMetrics {
        warnings: tool_warnings(&client, &agent),
        wall_s: fwd.wall_s,
        blocks_per_s: fwd.blocks_per_s,
        mib_per_s: fwd.mib_per_s,
        lost_pct: fwd.lost_pct,
        behind_mean_ms: fwd.behind_mean_ms,
        // Under --bidir each end both receives and serves blocks: its CPU and frames
        // cover both, so they are divided by both.
        client,
        agent,
        reverse: r
            .reverse
            .as_ref()
            .map(|v| Direction::of(&v.requester.counts, v.requester.wall_ns, r.request.block)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_proto::host::IfaceCounters;

    #[test]
    fn a_coarse_cpu_figure_is_warned_about_with_the_flag_that_narrows_it() {
        let short = CpuResolution::of(350_000_000, 2);
        let w = cpu_resolution_warning("client", &short).unwrap();
        assert!(
            w.starts_with("client: system-wide CPU rests on 35 ticks of 10 ms ± 2")
                && w.contains("too short")
                && w.contains("a longer --time narrows it"),
            "{w}"
        );
        let long = CpuResolution::of(20_000_000_000, 2);
        assert_eq!(cpu_resolution_warning("client", &long), None);
        assert!(cpu_resolution_warning("agent", &CpuResolution::of(0, 4)).is_some());
    }

    /// 1 s in which the interface sent 1.28 GB: 102.4% of a 10 Gbit/s "link".
    fn nic_pct(kind: &str) -> Option<f64> {
        let before = HostSnapshot::default();
        let after = HostSnapshot {
            iface: Some(IfaceCounters {
                tx_bytes: 1_280_000_000,
                ..IfaceCounters::default()
            }),
            at_ns: 1_000_000_000,
            ..HostSnapshot::default()
        };
        let before = HostSnapshot {
            iface: Some(IfaceCounters::default()),
            ..before
        };
        let iface = IfaceInfo {
            kind: kind.into(),
            speed_mbps: Some(10_000),
            ..IfaceInfo::default()
        };
        end_figures(&before, &after, Some(&iface), 100, None).nic_util_pct
    }

    #[test]
    fn no_link_speed_share_of_a_virtual_link() {
        // Issue 29: "NIC 102.5% of link speed" on a veth.
        for kind in ["veth", "bridge", "loopback"] {
            assert_eq!(nic_pct(kind), None, "{kind}");
        }
        let ether = nic_pct("ether").unwrap();
        assert!((ether - 102.4).abs() < 1e-9, "{ether}");
    }
}
