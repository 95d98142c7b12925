//! `mtuperf serve` flags for continuous verification: `--metrics` (the OpenMetrics
//! listener) and `--watch` (the agent checks its peers on a schedule), kept apart
//! from the agent's own flags.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mtuperf_engine::agent::AgentConfig;
use mtuperf_engine::config::bounds;
use mtuperf_engine::metrics::{http::Listener, Metrics};
use mtuperf_engine::watch::{self, Check, WatchConfig};
use mtuperf_report::path::Document as PathDoc;
use mtuperf_report::rr::StepDoc;
use mtuperf_store::Store;

use crate::common::{self, duration_in, Place};
use crate::exit::{self, Failure};
use crate::global::Global;

/// The history label of watch results (what `--retain` prunes and `report --since` draws).
pub const WATCH_LABEL: &str = "watch";

#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// Serve Prometheus metrics on http://ADDR:PORT/metrics (off unless given; no
    /// default address: e.g. 127.0.0.1:9464 or the management network's address).
    #[arg(long, value_name = "ADDR:PORT")]
    metrics: Option<SocketAddr>,
    /// Peer agents to check on a schedule, comma-separated or repeated (HOST,
    /// HOST:PORT, [v6]:PORT; one check per address: give each network's address of a
    /// peer). Needs --key-file: only peers holding the key are checked.
    #[arg(long, value_name = "HOST[,HOST...]", value_delimiter = ',')]
    watch: Vec<String>,
    /// Peers to check, one per line (blank lines and # comments ignored).
    #[arg(long, value_name = "FILE")]
    watch_file: Option<PathBuf>,
    /// Time between watch cycles, 10s to 24h; each cycle starts within ±10% of it.
    #[arg(long, value_name = "TIME", default_value = "5m", value_parser = parse_every)]
    watch_every: Duration,
    /// After each path check, an rr probe this long (1s to 10s; UDP, 8 KiB blocks,
    /// one client, closed loop). Off unless given.
    #[arg(long, value_name = "TIME", value_parser = parse_rr)]
    watch_rr: Option<Duration>,
    /// The rr probe's requests per second, 10 to 100000 (open loop): bounds its bytes
    /// to about RATE x 8.5 KB per second of probe. Default: closed loop (one request
    /// in flight: 250 to 430 MB per 2 s probe on the lab's veth, see
    /// docs/production.md).
    #[arg(long, value_name = "PER_SEC", requires = "watch_rr", value_parser = clap::value_parser!(u64).range(watch::MIN_RR_RATE..=watch::MAX_RR_RATE))]
    watch_rr_rate: Option<u64>,
    /// IP packet size each watched path must carry both ways, 576 to 65535 (default:
    /// the local interface MTU toward the peer).
    #[arg(long, value_name = "MTU", value_parser = clap::value_parser!(u32).range(i64::from(bounds::MIN_EXPECT_MTU)..=i64::from(bounds::MAX_EXPECT_MTU)))]
    watch_expect: Option<u32>,
    /// Keep watch results in the history this long, 1h to 3650d; older ones are
    /// deleted (Prometheus keeps the long-term series).
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_long_duration)]
    retain: Duration,
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
    fn peers(&self) -> Result<Vec<String>, Failure> {
        let mut peers: Vec<String> = self.watch.iter().map(|p| p.trim().to_string()).collect();
        if let Some(f) = &self.watch_file {
            let text = std::fs::read_to_string(f).map_err(|e| {
                Failure::usage(
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
            return Err(Failure::usage(
                "--watch",
                &self.watch.join(","),
                "peer names (HOST, HOST:PORT)",
                "an empty name between commas",
            ));
        }
        Ok(peers)
    }
}

/// Binds the metrics listener and starts the watch thread, as asked. Returns the
/// threads to join once `shutdown` is set.
pub fn start(
    g: &Global,
    a: &WatchArgs,
    config: &AgentConfig,
    shutdown: &Arc<AtomicBool>,
) -> Result<Vec<JoinHandle<()>>, Failure> {
    let peers = a.peers()?;
    if !peers.is_empty() && config.key.is_none() {
        return Err(Failure::usage(
            "--watch",
            &peers.join(","),
            "peers checked as a keyed client",
            "give --key-file (the same key as the peers'): watch sends test traffic only to agents that prove they hold it",
        ));
    }
    let metrics = Arc::new(Metrics::new(Some(&config.counters)));
    let mut threads = Vec::new();
    if let Some(addr) = a.metrics {
        let l = Listener::bind(addr).map_err(|e| Failure::new(exit::FAILED, e))?;
        let at = l.local_addr().unwrap_or(addr);
        config.log(
            "info",
            None,
            "metrics",
            format!("metrics served on http://{at}/metrics"),
        );
        threads.push(
            l.spawn(metrics.clone(), shutdown.clone())
                .map_err(|e| Failure::new(exit::FAILED, e))?,
        );
    }
    if peers.is_empty() {
        return Ok(threads);
    }
    let store = common::open_store(g)?;
    let cfg = WatchConfig {
        peers,
        every: a.watch_every,
        expect: a.watch_expect,
        rr: a.watch_rr,
        rr_rate: a.watch_rr_rate,
    };
    let retain = a.retain;
    let (agent, shutdown) = (config.clone(), shutdown.clone());
    let t = std::thread::Builder::new()
        .name("mtuperf-watch".into())
        .spawn(move || {
            watch::run(&cfg, &agent, &shutdown, &mut |c| {
                metrics.watch.observe(&c);
                keep(store.as_ref(), &c, retain, &agent);
            });
        })
        .map_err(|e| Failure::new(exit::FAILED, e))?;
    threads.push(t);
    Ok(threads)
}

/// Stores a check's results (logged first by the watch loop) and deletes watch
/// results older than `retain`. A storage failure is logged; the agent goes on.
fn keep(store: Option<&Store>, c: &Check, retain: Duration, agent: &AgentConfig) {
    let Some(store) = store else { return };
    let place = Place {
        target: &c.peer,
        group: None,
        label: Some(WATCH_LABEL),
    };
    if let Ok(p) = &c.path {
        let mut doc = PathDoc::agent(p.clone());
        doc.started_unix_ms = c.started_unix_ms;
        let _ = common::store_record(Some(store), &doc, place);
    }
    if let Some(Ok(rr)) = &c.rr {
        let doc = StepDoc::new((*rr.result).clone());
        let _ = common::store_record(Some(store), &doc, place);
    }
    let cutoff = mtuperf_engine::unix_ms() - retain.as_millis() as i64;
    if let Err(e) = store.prune_label(WATCH_LABEL, cutoff) {
        agent.log("warn", None, "watch", format!("history retention: {e}"));
    }
}
