//! `mtuperf serve`'s flags for continuous verification: `--metrics` (the OpenMetrics
//! listener) and `--watch` (the agent checks its peers on a schedule), kept apart
//! from the agent's own flags.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use mtuperf_engine::config::bounds;
use mtuperf_engine::watch;

use crate::exit::Failure;
use crate::parse::duration_in;

/// The history label of watch results (what `--retain` prunes and `report --since` draws).
pub const WATCH_LABEL: &str = "watch";

#[derive(Debug, clap::Args)]
#[command(next_help_heading = crate::heading::WATCH)]
pub struct WatchArgs {
    /// Serve Prometheus metrics on http://ADDR:PORT/metrics (off unless given; no
    /// default address: e.g. 127.0.0.1:9464 or the management network's address).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<SocketAddr>,
    /// Peer agents to check on a schedule, comma-separated or repeated (HOST,
    /// HOST:PORT, [v6]:PORT; one check per address: give each network's address of a
    /// peer). Needs --key-file: only peers holding the key are checked.
    #[arg(long, value_name = "HOST[,HOST...]", value_delimiter = ',')]
    pub watch: Vec<String>,
    /// Peers to check, one per line (blank lines and # comments ignored).
    #[arg(long, value_name = "FILE")]
    pub watch_file: Option<PathBuf>,
    /// Peers checked at once, 1 to 64; each cycle ends by its deadline (the time
    /// between cycles less 10%), so a silent peer costs only its own check.
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub watch_parallel: u16,
    /// Time between watch cycles, 10s to 24h; each cycle starts within ±10% of it.
    #[arg(long, value_name = "TIME", default_value = "5m", value_parser = parse_every)]
    pub watch_every: Duration,
    /// While the host is short of CPU (PSI `some avg10` at 25% or more, or a load
    /// average 1.5 times the CPUs), cycles come up to N times less often (1 to 8; 1:
    /// never). The rate doubles back each cycle once the pressure has fallen.
    #[arg(long, value_name = "N", default_value_t = watch::pressure::MAX_FACTOR as u8, value_parser = clap::value_parser!(u8).range(1..=i64::from(watch::pressure::MAX_FACTOR)))]
    pub watch_max_slowdown: u8,
    /// After each path check, an rr probe this long (1s to 10s): Cache Fusion's
    /// pattern, as mesh's block test (UDP, 8 KiB blocks for 128 B requests, one
    /// client, closed loop, a block lost after 500 ms). Off unless given.
    #[arg(long, value_name = "TIME", value_parser = parse_rr)]
    pub watch_rr: Option<Duration>,
    /// The rr probe's requests per second, 10 to 100000 (open loop): bounds its bytes
    /// to about RATE x 8.5 KB per second of probe. Default: closed loop (one request
    /// in flight: 250 to 430 MB per 2 s probe on the lab's veth, see
    /// docs/production.md).
    #[arg(long, value_name = "PER_SEC", requires = "watch_rr", value_parser = clap::value_parser!(u64).range(watch::MIN_RR_RATE..=watch::MAX_RR_RATE))]
    pub watch_rr_rate: Option<u64>,
    /// IP packet size each watched path must carry both ways, 576 to 65535 (default:
    /// the local interface MTU toward the peer).
    #[arg(long, value_name = "MTU", value_parser = clap::value_parser!(u32).range(i64::from(bounds::MIN_EXPECT_MTU)..=i64::from(bounds::MAX_EXPECT_MTU)))]
    pub watch_expect: Option<u32>,
    /// Keep watch results in the history this long, 1h to 3650d; older ones are
    /// deleted (Prometheus keeps the long-term series).
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_long_duration)]
    pub retain: Duration,
}

fn parse_every(s: &str) -> Result<Duration, String> {
    duration_in(s, watch::MIN_EVERY, watch::MAX_EVERY)
}

fn parse_rr(s: &str) -> Result<Duration, String> {
    duration_in(s, watch::MIN_RR, watch::MAX_RR)
}

/// Days are the natural unit here ("30d"), which the test-time parser does not read.
pub(crate) fn parse_long_duration(s: &str) -> Result<Duration, String> {
    let (min, max) = (Duration::from_hours(1), Duration::from_hours(3650 * 24));
    let d = humantime::parse_duration(s.trim())
        .map_err(|e| format!("cannot read {s:?} as a duration such as 30d, 12h: {e}"))?;
    if d < min || d > max {
        return Err(format!("{s} is out of range: allowed 1h to 3650d"));
    }
    Ok(d)
}

impl WatchArgs {
    pub fn peers(&self) -> Result<Vec<String>, Failure> {
        let mut peers: Vec<String> = self.watch.iter().map(|p| p.trim().to_string()).collect();
        if let Some(f) = &self.watch_file {
            let text = std::fs::read_to_string(f).map_err(|e| {
                Failure::bad_value(
                    "--watch-file",
                    &f.display().to_string(),
                    "a readable file of peers, one per line",
                    &e.to_string(),
                )
            })?;
            peers.extend(
                text.lines()
                    .map(|l| l.split('#').next().unwrap_or("").trim())
                    .filter(|l| !l.is_empty())
                    .map(str::to_string),
            );
        }
        if peers.iter().any(String::is_empty) {
            return Err(Failure::bad_value(
                "--watch",
                &self.watch.join(","),
                "peer names (HOST, HOST:PORT)",
                "there is an empty name between commas: remove it",
            ));
        }
        // Each name must resolve now (a typo is said at start, not at the first
        // check); it is resolved again at every check, so a moved peer is followed.
        for p in &peers {
            if let Err(e) = mtuperf_engine::client::resolve(p) {
                let flag = if self.watch.iter().any(|w| w.trim() == p) {
                    "--watch"
                } else {
                    "--watch-file"
                };
                return Err(Failure::bad_value(
                    flag,
                    p,
                    "peer names that resolve (HOST, HOST:PORT, [v6]:PORT)",
                    &format!("{e}; check the name (or give the address)"),
                ));
            }
        }
        Ok(peers)
    }
}
