//! Comparisons: the `mtuperf.compare/3` document (per-path summaries, each path against
//! the first with a 95% interval, a plain verdict) and its text, legacy, HTML and
//! Markdown renderings.

pub mod answer;
mod build;
pub mod html;
pub mod md;
pub mod placement;
pub(crate) mod text;
mod verdict;

use std::collections::BTreeMap;

use mtuperf_engine::compare::{CheckStep, PathCheck, Plan, TestKind};
use mtuperf_engine::stream::limits::LimitShares;
use mtuperf_engine::stream::metrics::PerlFigures;
use mtuperf_engine::stream::verdict::LimitCause;
use mtuperf_stats::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use build::{build, Rep};
pub use text::{legacy, text};
pub use verdict::{fmt_rel, verdict_line};

pub const SCHEMA: &str = "mtuperf.compare/3";

/// Why a comparison was refused: each broken path and why, in one line.
pub fn refusal(checks: &[PathCheck]) -> String {
    checks
        .iter()
        .filter(|c| c.verdict == mtuperf_engine::compare::Verdict::Broken)
        .map(|c| format!("path {} ({}): {}", c.name, c.target, check_reason(c)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Why a path check concluded what it did, in one line: the `path` check's faults in
/// the diagnosis's words (or what the path carries), else the check's own reason.
pub fn check_reason(c: &PathCheck) -> String {
    let name = |a: std::net::IpAddr| a.to_string();
    let names = crate::diagnosis::Names {
        node: &name,
        on: String::new(),
    };
    let said: Vec<String> = c
        .faults
        .iter()
        .map(|d| {
            let s = crate::diagnosis::say(d, &names, crate::diagnosis::Scope::Pair);
            format!("{}; fix: {} (mtuperf path {})", s.summary, s.fix, c.target)
        })
        .collect();
    match (said.is_empty(), c.carries) {
        (false, _) => said.join("; "),
        (true, Some(m)) => {
            // The agent's address says the family (an IPv6 packet has 20 more header
            // bytes); a name that does not parse is taken as IPv4.
            let v6 = c
                .target
                .parse::<std::net::IpAddr>()
                .is_ok_and(|a| a.is_ipv6())
                || c.target
                    .parse::<std::net::SocketAddr>()
                    .is_ok_and(|a| a.is_ipv6());
            let o = mtuperf_engine::path::reading::udp_overhead(v6);
            format!(
                "carries MTU {m} end to end ({m} = {} + {o})",
                m.saturating_sub(o)
            )
        }
        (true, None) => match &c.failed {
            Some(f) => {
                let words = crate::refusal::failed(&f.failed);
                match f.step {
                    CheckStep::Reach => {
                        format!("cannot reach the agent at {}: {words}", c.target)
                    }
                    CheckStep::Path => format!("the path check failed: {words}"),
                }
            }
            None => String::new(),
        },
    }
}

/// One repetition, flattened: the figures the comparison summarises.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepRow {
    /// History id of the stored run, when stored.
    pub run_id: Option<i64>,
    pub path: String,
    pub test: TestKind,
    pub block: u32,
    /// Concurrent clients (rr; 1 for stream).
    pub clients: u32,
    pub round: u32,
    /// When the repetition started (RFC 3339, UTC, seconds).
    pub started: String,
    pub interrupted: bool,
    /// Stream goodput, first→last byte, bit/s.
    pub goodput_bps: Option<f64>,
    /// Receiver's system-wide CPU, µs per MiB moved.
    pub cpu_us_per_mib: Option<f64>,
    /// Receiver's interface frames per application block.
    pub frames_per_block: Option<f64>,
    /// perl-sockets' figures (receiver side), for `--format legacy`.
    pub perl: Option<PerlFigures>,
    /// rr: median and 99th percentile block latency (ns), blocks per second, the
    /// client's system-wide CPU per block (µs).
    pub p50_ns: Option<f64>,
    /// rr: 99th percentile block latency, ns.
    pub p99_ns: Option<f64>,
    /// rr: blocks answered per second.
    pub blocks_per_s: Option<f64>,
    /// rr: the client's system-wide CPU per block, µs.
    pub cpu_us_per_block: Option<f64>,
    /// Stream: what limited the first direction (the verdict's cause), and its shares.
    pub limited_by: Option<LimitCause>,
    /// Stream: the shares of the first direction's busy time by what limited it.
    pub limit_shares: Option<LimitShares>,
    /// Both ends' placement (null when neither end was sampled).
    pub placement: Option<crate::placement::PlacementSummary>,
    /// udp: datagrams lost as % of sent (`goodput_bps` is then the received goodput,
    /// `frames_per_block` the receiver's frames per datagram).
    pub loss_pct: Option<f64>,
    /// udp: the sender's IP fragments created per datagram.
    pub fragments_per_datagram: Option<f64>,
}

/// A figure the comparison summarises, with its unit and which direction is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    Goodput,
    P50,
    P99,
    BlocksPerS,
    CpuPerMib,
    CpuPerBlock,
    FramesPerBlock,
}

impl Figure {
    pub const ALL: [Figure; 7] = [
        Figure::Goodput,
        Figure::P50,
        Figure::P99,
        Figure::BlocksPerS,
        Figure::CpuPerMib,
        Figure::CpuPerBlock,
        Figure::FramesPerBlock,
    ];
    pub fn label(self) -> &'static str {
        match self {
            Figure::Goodput => "goodput",
            Figure::P50 => "p50",
            Figure::P99 => "p99",
            Figure::BlocksPerS => "blocks/s",
            Figure::CpuPerMib => "CPU per MiB",
            Figure::CpuPerBlock => "CPU per block",
            Figure::FramesPerBlock => "frames per block",
        }
    }
    pub fn unit(self) -> &'static str {
        match self {
            Figure::Goodput => "bit/s",
            Figure::P50 | Figure::P99 => "block latency, request sent to response received",
            Figure::BlocksPerS => "blocks/s answered",
            Figure::CpuPerMib => "µs CPU/MiB (receiver, system-wide)",
            Figure::CpuPerBlock => "µs CPU/block (client, system-wide)",
            Figure::FramesPerBlock => {
                "frames/block (stream: receiver iface; rr: client iface, both ways)"
            }
        }
    }
    /// What the figure measures in a test of kind `test`, as the HTML report's summary
    /// table and its chart axes both name it ("frames per block (client iface, both
    /// ways)" for rr).
    pub fn measured(self, test: TestKind) -> &'static str {
        match (self, test) {
            (Figure::Goodput, _) => "goodput (received)",
            (Figure::P50, _) => "p50 block latency",
            (Figure::P99, _) => "p99 block latency",
            (Figure::BlocksPerS, _) => "blocks/s answered",
            (Figure::CpuPerMib, _) => "CPU per MiB (receiver host)",
            (Figure::CpuPerBlock, _) => "CPU per block (client host)",
            (Figure::FramesPerBlock, TestKind::Rr) => "frames per block (client iface, both ways)",
            (Figure::FramesPerBlock, TestKind::Udp) => "frames per datagram (receiver iface)",
            (Figure::FramesPerBlock, TestKind::Stream) => "frames per block (receiver iface)",
        }
    }
    pub fn higher_is_better(self) -> bool {
        matches!(self, Figure::Goodput | Figure::BlocksPerS)
    }
    pub fn of(self, r: &RepRow) -> Option<f64> {
        match self {
            Figure::Goodput => r.goodput_bps,
            Figure::P50 => r.p50_ns,
            Figure::P99 => r.p99_ns,
            Figure::BlocksPerS => r.blocks_per_s,
            Figure::CpuPerMib => r.cpu_us_per_mib,
            Figure::CpuPerBlock => r.cpu_us_per_block,
            Figure::FramesPerBlock => r.frames_per_block,
        }
    }
}

/// Statistics of one figure over one path's repetitions of one cell.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CellSummary {
    pub path: String,
    pub test: TestKind,
    pub block: u32,
    pub clients: u32,
    /// The figure summarised: stream goodput, cpu_per_mib, frames_per_block; rr p50 and p99
    /// (ns), blocks_per_s, cpu_per_block (µs, client), frames_per_block.
    pub figure: Figure,
    pub summary: Summary,
}

/// One path against the first path, for one figure of one cell.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Diff {
    pub path: String,
    pub baseline: String,
    pub test: TestKind,
    pub block: u32,
    pub clients: u32,
    /// The figure compared (as in `summaries`).
    pub figure: Figure,
    /// mean_path / mean_baseline − 1, and its 95% interval: of the ratio on a log
    /// scale (delta method, Welch df; never below −100%), or none with fewer than 3
    /// repetitions per path (`no_interval` says why).
    #[schemars(range(min = -1.0))]
    pub rel: f64,
    /// Lower end of the 95% interval of `rel`: of the ratio of means on a log scale (never
    /// at or below -100%); null below 3 repetitions per path.
    pub low: Option<f64>,
    /// Upper end of the 95% interval of `rel`; null as `low`.
    pub high: Option<f64>,
    pub significant: bool,
    /// "log-ratio-welch" or "none".
    pub method: String,
    /// Why there is no interval (fewer than 3 repetitions per path); null when there is
    /// one.
    pub no_interval: Option<String>,
}

/// Cumulative distribution of rr block latency: `[latency µs, fraction ≤ it]` points,
/// thinned to at most one per 0.5% of the blocks, or per tenth of the blocks still
/// above in the tail (so p99.9 and p99.99 keep their own points), plus the maximum.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LatencyCdf {
    pub path: String,
    pub block: u32,
    pub clients: u32,
    pub blocks: u64,
    pub points: Vec<[f64; 2]>,
}

/// The hosts and settings the comparison ran on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    /// One line per end and path: host, kernel, interface, MTU, offloads.
    pub ends: Vec<EndEnv>,
    /// This (client) host's relevant sysctls.
    pub sysctls: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EndEnv {
    pub path: String,
    /// "client" or "agent".
    pub end: String,
    pub hostname: String,
    pub kernel: String,
    pub iface: Option<String>,
    pub mtu: Option<u32>,
    pub offloads: String,
}

/// The `mtuperf.compare/3` document: the same tests over several paths, interleaved and
/// repeated, with each figure's statistics per path and its difference to the first
/// path.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CompareDoc {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    /// History group id, when stored.
    pub group_id: Option<i64>,
    pub plan: Plan,
    pub checks: Vec<PathCheck>,
    /// Set when a path failed its check and nothing was run.
    pub refused: Option<String>,
    pub interrupted: bool,
    pub runs: Vec<RepRow>,
    pub summaries: Vec<CellSummary>,
    pub diffs: Vec<Diff>,
    /// The plain answer the text starts with (typed; `answer::line` words it).
    pub answer: Option<answer::Answer>,
    /// One plain sentence per compared path.
    pub verdicts: Vec<String>,
    /// Paths measured although their check failed (`--force`).
    pub flagged: Vec<String>,
    /// rr: block latency distribution per path and cell, all repetitions merged.
    pub latency: Vec<LatencyCdf>,
    pub environment: Environment,
    /// Placement per path (empty when no repetition recorded one).
    pub placement: Vec<placement::PathPlacement>,
    /// Set when the paths' repetitions differ in placement.
    pub placement_warning: Option<String>,
}

/// "8K" for 8192, "9000" otherwise.
pub fn block_label(b: u32) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{}K", b / 1024)
    } else {
        b.to_string()
    }
}

/// "stream 8K", "rr 8K", "rr 8K x4" (with 4 concurrent clients).
pub fn cell_label(test: TestKind, block: u32, clients: u32) -> String {
    if clients > 1 {
        format!("{} {} x{clients}", test.name(), block_label(block))
    } else {
        format!("{} {}", test.name(), block_label(block))
    }
}
