//! `compare`: the same tests over several paths (e.g. MTU 1500 vs 9000), interleaved
//! A B A B … so that drift on the hosts hits every path alike, repeated a fixed number
//! of times or until each headline mean's 95% interval is narrow enough (netperf -I).
//!
//! The engine only measures: every finished repetition goes to the caller's
//! [`CompareObserver::finished`] (which stores it) before the next one starts, so an
//! interrupted comparison loses nothing and [`run`] can continue from the repetitions
//! already stored (`prior`).

mod check;
mod run;

use std::collections::BTreeMap;
use std::net::IpAddr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::placement::PlacementPolicy;
use crate::stream::StreamResult;

pub use check::{check_path, CheckFailed, CheckStep, PathCheck, Verdict};
pub use run::{headline, run, Outcome};

/// Plan version stored with the group; a resume refuses a plan it cannot read.
pub const PLAN_VERSION: u32 = 1;

/// One path to compare: a name for people ("std", "jumbo") and how to reach its agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PathSpec {
    #[schemars(length(min = 1))]
    pub name: String,
    /// HOST, HOST:PORT or [IPv6]:PORT.
    pub target: String,
    /// Local address to send from (chooses the interface).
    pub bind: Option<IpAddr>,
}

/// The tests a comparison can run.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    /// Bulk TCP, client → agent; headline: goodput (bit/s).
    Stream,
    /// UDP request/response, closed loop; headline: p50 block latency (ns).
    Rr,
    /// UDP datagram stream at the agent's maximum rate, client → agent; headline:
    /// received goodput (bit/s), with loss and fragments per datagram.
    Udp,
}

impl TestKind {
    pub fn name(self) -> &'static str {
        match self {
            TestKind::Stream => "stream",
            TestKind::Rr => "rr",
            TestKind::Udp => "udp",
        }
    }
}

/// How many repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Repeat {
    /// Exactly this many per path and cell.
    Fixed { n: u32 },
    /// Until every headline mean's 95% CI half-width is within ±`pct`% of the mean,
    /// checked from [`MIN_REPEAT_FOR_CI`] repetitions on, at most `max`.
    CiWidth { pct: f64, max: u32 },
}

/// Fewest repetitions before a confidence interval is trusted for stopping.
pub const MIN_REPEAT_FOR_CI: u32 = 3;

impl Repeat {
    /// The most repetitions this rule may run.
    pub fn max(self) -> u32 {
        match self {
            Repeat::Fixed { n } => n,
            Repeat::CiWidth { max, .. } => max,
        }
    }
}

/// Everything a comparison does; stored as the group's plan so `--resume` can continue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Plan {
    #[schemars(extend("const" = PLAN_VERSION))]
    pub version: u32,
    #[schemars(length(min = 2))]
    pub paths: Vec<PathSpec>,
    pub tests: Vec<TestKind>,
    /// Block sizes (bytes per write/read; per request in rr).
    pub blocks: Vec<u32>,
    /// Concurrent clients (rr only).
    pub clients: Vec<u32>,
    /// Length of each repetition, ms.
    pub time_ms: u64,
    pub repeat: Repeat,
    /// Compare even paths whose check failed.
    pub force: bool,
    /// This host's relevant sysctls when the comparison was planned.
    pub sysctls: BTreeMap<String, String>,
    /// `--placement`: where both ends' test threads run in every repetition (rr,
    /// stream, UDP stream).
    pub placement: PlacementPolicy,
}

/// One measured combination: a test at one block size (and, for rr, a client count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Cell {
    pub test: TestKind,
    pub block: u32,
    /// Concurrent closed-loop clients (rr); 1 for stream.
    pub clients: u32,
}

impl Plan {
    /// The cells in run order (tests, then blocks, then rr client counts).
    pub fn cells(&self) -> Vec<Cell> {
        let mut v = Vec::new();
        for &test in &self.tests {
            for &block in &self.blocks {
                if test == TestKind::Rr {
                    for &clients in &self.clients {
                        v.push(Cell {
                            test,
                            block,
                            clients,
                        });
                    }
                } else {
                    v.push(Cell {
                        test,
                        block,
                        clients: 1,
                    });
                }
            }
        }
        v
    }
}

/// One finished repetition of one cell over one path.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repetition {
    pub path: String,
    pub cell: Cell,
    /// 0-based round this repetition belongs to.
    pub round: u32,
    pub stream: Option<StreamResult>,
    /// UDP request/response, closed loop (rr cells).
    pub rr: Option<crate::rr::RrResult>,
    /// UDP datagram stream (udp cells).
    pub udp: Option<crate::stream::udp::UdpStreamResult>,
}

impl Repetition {
    pub fn interrupted(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.interrupted)
            || self.rr.as_ref().is_some_and(|r| r.interrupted)
            || self.udp.as_ref().is_some_and(|u| u.interrupted)
    }

    /// Why the repetition was interrupted (empty: it does not say).
    pub fn interrupted_by(&self) -> &[crate::Interrupt] {
        let causes = [
            self.stream.as_ref().map(|s| &s.interrupted_by[..]),
            self.rr.as_ref().map(|r| &r.interrupted_by[..]),
            self.udp.as_ref().map(|u| &u.interrupted_by[..]),
        ];
        causes
            .into_iter()
            .flatten()
            .find(|c| !c.is_empty())
            .unwrap_or_default()
    }
}

/// Progress and results, in order. `finished` must persist the repetition; an error
/// from it stops the comparison (nothing measured may go unstored).
pub trait CompareObserver {
    fn checked(&mut self, _check: &PathCheck) {}
    /// A repetition starts: `done` of at most `planned` are finished.
    fn starting(&mut self, _path: &PathSpec, _cell: Cell, _round: u32, _done: u32, _planned: u32) {}
    fn finished(&mut self, rep: &Repetition) -> Result<(), crate::EngineError>;
}

/// The sysctls that matter for a comparison (buffers, reassembly, PMTU, rp_filter).
pub const SYSCTLS: &[&str] = &[
    "net.core.rmem_max",
    "net.core.wmem_max",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.ip_no_pmtu_disc",
    "net.ipv4.ipfrag_high_thresh",
    "net.ipv4.conf.all.rp_filter",
];

/// Reads [`SYSCTLS`] on this host; unreadable ones are left out.
pub fn local_sysctls() -> BTreeMap<String, String> {
    SYSCTLS
        .iter()
        .filter_map(|n| {
            mtuperf_sys::sysctl::read(n)
                .ok()
                .map(|v| ((*n).to_string(), v.trim().to_string()))
        })
        .collect()
}
