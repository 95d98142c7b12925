//! Continuous verification beside `mtuperf serve`: binds the metrics listener and
//! runs the watch thread, storing each check (with `--retain`) and feeding the metrics.
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use mtuperf_engine::agent::{AgentConfig, LogLevel};
use mtuperf_engine::metrics::{http::Listener, Metrics};
use mtuperf_engine::watch::{self, Check, Event, WatchConfig};
use mtuperf_engine::Shutdown;
use mtuperf_report::path::Document as PathDoc;
use mtuperf_report::rr::StepDoc;
use mtuperf_store::Store;

pub use crate::args::watch::{WatchArgs, WATCH_LABEL};
use crate::exit::{self, Failure};
use crate::global::Global;
use crate::history;
use crate::history::Place;

/// Binds the metrics listener and starts the watch thread, as asked. Returns the
/// threads to join once `shutdown` is set.
pub fn start(
    g: &Global,
    a: &WatchArgs,
    config: &AgentConfig,
    shutdown: &Shutdown,
) -> Result<Vec<JoinHandle<()>>, Failure> {
    let peers = a.peers()?;
    if !peers.is_empty() && config.key.is_none() {
        return Err(Failure::needs(
            "--watch",
            "--key-file",
            "watch sends test traffic only to agents that prove they hold the key",
            "give serve --key-file with the key the peers run with (or MTUPERF_KEY_FILE)",
        ));
    }
    let metrics = Arc::new(Metrics::new(Some(&config.counters)));
    let mut threads = Vec::new();
    if let Some(addr) = a.metrics {
        let l = Listener::bind(addr, config).map_err(|e| Failure::new(exit::FAILED, e))?;
        let at = l.local_addr().unwrap_or(addr);
        config.log(
            LogLevel::Info,
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
    let store = history::open_store(g)?;
    let cfg = WatchConfig {
        peers,
        every: a.watch_every,
        expect: a.watch_expect,
        rr: a.watch_rr,
        rr_rate: a.watch_rr_rate,
        fan_out: usize::from(a.watch_parallel),
        max_slowdown: u32::from(a.watch_max_slowdown),
    };
    let retain = a.retain;
    let (agent, shutdown) = (config.clone(), shutdown.clone());
    let out = crate::out::current();
    let t = std::thread::Builder::new()
        .name("mtuperf-watch".into())
        .spawn(move || {
            let _in = out.enter();
            watch::run(&cfg, &agent, &shutdown, &mut |e| match e {
                Event::Check(c) => {
                    metrics.watch.observe(&c);
                    keep(store.as_ref(), &c, retain, &agent);
                }
                Event::Cycle(c) => metrics.watch.observe_cycle(&c),
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
        let _ = history::store_record(Some(store), &doc, place);
    }
    if let Some(Ok(rr)) = &c.rr {
        let doc = StepDoc::new((*rr.result).clone());
        let _ = history::store_record(Some(store), &doc, place);
    }
    let cutoff = mtuperf_engine::unix_ms() - retain.as_millis() as i64;
    if let Err(e) = store.prune_label(WATCH_LABEL, cutoff) {
        agent.log(
            LogLevel::Warn,
            None,
            "watch",
            format!("history retention: {e}"),
        );
    }
}
