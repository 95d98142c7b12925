//! `mtuperf export --format openmetrics`: the watch results kept in the history as the
//! same metric families the agent serves on `/metrics`, for node_exporter's textfile
//! collector (the Prometheus text format, which that collector reads).
//!
//! From the history: every stored watch path check, oldest first, so each gauge ends
//! at the newest check of its path and `mtuperf_watch_checks_total` counts the stored
//! checks by outcome (failed checks are not stored: they show only on a live agent).
//! The agent's own counters exist only in a running agent and are not written.

use mtuperf_engine::metrics::Metrics;
use mtuperf_engine::watch::RrProbe;

pub use crate::watch::StoredWatch;
use crate::watch::{path_of, rr_of};

/// The text exposition of `runs` (any order). An rr probe takes the address and
/// network of its peer's path check (stored with it in the same cycle).
pub fn render(runs: &[StoredWatch<'_>]) -> String {
    let mut runs: Vec<&StoredWatch<'_>> = runs.iter().collect();
    runs.sort_by_key(|r| r.started_unix_ms);
    let m = Metrics::new(None);
    let mut where_of: std::collections::HashMap<&str, (String, String)> =
        std::collections::HashMap::new();
    for r in runs {
        match r.kind {
            "path" => {
                let Some(p) = path_of(r.document) else {
                    continue;
                };
                let (address, network) = (p.target.clone(), p.local.route.iface.clone());
                let ended = p.started_unix_ms + p.elapsed_ms as i64;
                m.watch
                    .observe_path([r.target, &address, &network], Some(&p), ended);
                where_of.insert(r.target, (address, network));
            }
            "rr" => {
                let (Some(rr), Some((address, network))) =
                    (rr_of(r.document), where_of.get(r.target))
                else {
                    continue;
                };
                m.watch
                    .observe_rr([r.target, address, network], &RrProbe::of(rr));
            }
            _ => {}
        }
    }
    m.encode()
}
