//! Watch mode (`mtuperf serve --watch`): the agent, on its own schedule with jitter,
//! checks the path toward each peer agent as a keyed client (the same check as
//! `mtuperf path PEER` with the key), plus an optional short rr probe. The peers of a
//! cycle are checked side by side, at most `fan_out` at once, and the cycle has a
//! deadline ([`cycle_deadline`]): a silent peer costs only its own check, cut at the
//! deadline. When the host is short of CPU the cycles come less often ([`pressure`]),
//! never less than once per [`pressure::MAX_FACTOR`] times `every`. Peer names are resolved again at every check. A check starts only when
//! the agent serves no test (see `agent::gate`); checks and cycles go to a sink (the
//! CLI logs, stores and exports them).

mod check;
pub mod pressure;
mod schedule;

use std::time::Duration;

use mtuperf_proto::failed::Failed;
use mtuperf_proto::msg::rr::RrCounts;

pub use check::check_peer;
pub use pressure::{CpuPressure, PressureKind, PressureSource, Rate};
pub use schedule::{run, run_with, said};

use crate::path::PathResult;
use crate::rr::RrResult;

/// Bounds of `--watch-every`: more often than every 10 s is a load test, not a watch.
pub const MIN_EVERY: Duration = Duration::from_secs(10);
pub const MAX_EVERY: Duration = Duration::from_hours(24);
/// Bounds of `--watch-rr`: a probe, not a benchmark.
pub const MIN_RR: Duration = Duration::from_secs(1);
pub const MAX_RR: Duration = Duration::from_secs(10);
/// Bounds of `--watch-rr-rate` (requests per second).
pub const MIN_RR_RATE: u64 = 10;
pub const MAX_RR_RATE: u64 = 100_000;
/// Each cycle starts within ±10% of `--watch-every` after the previous one.
pub const JITTER: f64 = 0.1;
/// Peers checked at once by default, and at most.
pub const FAN_OUT: usize = 8;
pub const MAX_FAN_OUT: usize = 64;
/// Room for a healthy check beside its rr probe: the handshake and the path search.
pub const CHECK_ROOM: Duration = Duration::from_secs(5);

/// The deadline of a cycle, from its start: the earliest the next cycle may start
/// (`every` less the jitter), but never less than a healthy check needs (its rr probe
/// and [`CHECK_ROOM`]).
pub fn cycle_deadline(cfg: &WatchConfig) -> Duration {
    cfg.every
        .mul_f64(1.0 - JITTER)
        .max(cfg.rr.unwrap_or_default() + CHECK_ROOM)
}

#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// Peer agents (HOST, HOST:PORT, [v6]:PORT): each address one check.
    pub peers: Vec<String>,
    pub every: Duration,
    /// IP packet size each path must carry (None: the local interface's MTU).
    pub expect: Option<u32>,
    /// Length of the rr probe after each path check (Cache Fusion's pattern, as the
    /// mesh's: 8 KiB UDP blocks for 128 B requests, one client, closed loop, a block
    /// lost after 500 ms); None: no probe.
    pub rr: Option<Duration>,
    /// The rr probe's requests per second (open loop), a bound on its bytes; None:
    /// closed loop (as fast as round trips allow: 250 to 430 MB per 2 s probe
    /// on the lab's veth).
    pub rr_rate: Option<u64>,
    /// Peers checked at once (1 to [`MAX_FAN_OUT`]).
    pub fan_out: usize,
    /// Under CPU pressure, cycles come at most this many times less often than
    /// `every` (1: never less often; at most [`pressure::MAX_FACTOR`]).
    pub max_slowdown: u32,
}

/// The short rr probe's figures, from the checking node's end. No block answered:
/// no latency (None), never 0.
#[derive(Debug, Clone)]
pub struct RrProbe {
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub counts: RrCounts,
    /// IP reassembly failures the checking node's kernel counted while the probe ran
    /// (its Ip ReasmFails delta, whole host: the blocks come back to it as fragments
    /// on a path below their size). None when its counters could not be read.
    pub reasm_fails: Option<u64>,
    pub result: Box<RrResult>,
}

impl RrProbe {
    /// The probe's figures from an rr run's result.
    pub fn of(r: RrResult) -> RrProbe {
        let c = &r.client;
        let reasm_fails = match (&c.before.snmp, &c.after.snmp) {
            (Some(b), Some(a)) => Some(a.ip_reasm_fails.saturating_sub(b.ip_reasm_fails)),
            _ => None,
        };
        RrProbe {
            p50_ns: c.latency.p50,
            p99_ns: c.latency.p99,
            counts: c.counts,
            reasm_fails,
            result: Box::new(r),
        }
    }

    /// Blocks lost: unanswered within 500 ms (RAC's "gc block lost"), or never.
    pub fn lost(&self) -> u64 {
        self.counts.lost
    }

    /// Blocks answered in time during the probe.
    pub fn answered(&self) -> u64 {
        self.counts.blocks
    }

    /// Requests lost over requests sent (0 when none were sent).
    pub fn loss_ratio(&self) -> f64 {
        if self.counts.requests_sent == 0 {
            0.0
        } else {
            self.counts.lost as f64 / self.counts.requests_sent as f64
        }
    }
}

/// One check of one peer address.
#[derive(Debug, Clone)]
pub struct Check {
    /// The peer as given to --watch.
    pub peer: String,
    /// The address checked (ip:port), or the peer as given when it did not resolve.
    pub address: String,
    /// The local interface toward the peer ("unknown" without a route).
    pub network: String,
    pub started_unix_ms: i64,
    pub ended_unix_ms: i64,
    /// The path check, or why it could not run (unreachable, refused, not keyed; a
    /// refusal typed).
    pub path: Result<PathResult, Failed>,
    /// The rr probe when asked for and the path check could run.
    pub rr: Option<Result<RrProbe, Failed>>,
}

/// One cycle over every peer, once it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Cycle {
    pub started_unix_ms: i64,
    /// From its start to its last check's end, or to its deadline.
    pub duration: Duration,
    pub deadline: Duration,
    /// Peers whose check had not ended at the deadline (each also reported as a
    /// failed check).
    pub late: Vec<String>,
    /// The rate this cycle ran at (decided at its start) and the pressure read.
    pub rate: Rate,
    /// `every` times the rate's factor: the time to the next cycle, before jitter.
    pub interval: Duration,
}

/// What the watch reports: each check as it ends, each cycle once it ended.
#[derive(Debug, Clone)]
pub enum Event {
    Check(Box<Check>),
    Cycle(Cycle),
}

/// Rejects a peer list that would check nothing or the agent's open form.
pub fn validate_peers(peers: &[String]) -> Result<(), String> {
    if peers.is_empty() {
        return Err("no peer to watch".into());
    }
    if let Some(p) = peers.iter().find(|p| p.trim().is_empty()) {
        return Err(format!("empty peer name {p:?}"));
    }
    Ok(())
}
