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

pub use super::StoredWatch;
use super::{path_of, rr_of};
use crate::record::RunKind;

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
            RunKind::Path => {
                let Some(p) = path_of(r.document) else {
                    continue;
                };
                let (address, network) = (p.target.clone(), p.local.route.iface.clone());
                let ended = p.started_unix_ms + p.elapsed_ms as i64;
                m.watch
                    .observe_path([r.target, &address, &network], Some(&p), ended);
                where_of.insert(r.target, (address, network));
            }
            RunKind::Rr => {
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

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: &str = include_str!("../../tests/fixtures/path_agent_mismatch.json");
    const RR: &str = include_str!("../../tests/fixtures/rr_step_loopback.json");

    /// The stored rr fixture as a probe that got no block back: every request lost,
    /// no latency.
    fn unanswered() -> String {
        let mut d: serde_json::Value = serde_json::from_str(RR).unwrap();
        let c = &mut d["steps"][0]["result"]["client"];
        let sent = c["counts"]["requests_sent"].clone();
        c["counts"]["blocks"] = 0.into();
        c["counts"]["lost"] = sent;
        // Every block came back as fragments the kernel could not reassemble.
        c["after"]["snmp"]["ip_reasm_fails"] = 42.into();
        let l = &mut c["latency"];
        for k in ["min", "mean", "p50", "p90", "p99", "p999", "max"] {
            l[k] = serde_json::Value::Null;
        }
        l["count"] = 0.into();
        l["buckets"] = serde_json::json!([]);
        d.to_string()
    }

    fn line<'a>(text: &'a str, family: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(&format!("{family}{{")))
    }

    #[test]
    fn a_probe_with_no_block_answered_exports_no_latency() {
        let silent = unanswered();
        let at = |t, kind, document| StoredWatch {
            target: "n2",
            kind,
            started_unix_ms: t,
            document,
        };
        let text = render(&[at(1, RunKind::Path, PATH), at(2, RunKind::Rr, &silent)]);
        assert!(
            line(&text, "mtuperf_rr_latency_p99_seconds").is_none(),
            "{text}"
        );
        assert!(
            line(&text, "mtuperf_rr_latency_p50_seconds").is_none(),
            "{text}"
        );
        assert!(line(&text, "mtuperf_rr_answered_blocks")
            .unwrap()
            .ends_with(" 0"));
        assert!(line(&text, "mtuperf_rr_loss_ratio")
            .unwrap()
            .ends_with(" 1"));
        // Issue 30: its lost blocks and the reassembly failures while it ran.
        assert!(line(&text, "mtuperf_rr_lost_blocks")
            .unwrap()
            .ends_with(" 11529"));
        assert!(line(&text, "mtuperf_rr_reassembly_failures")
            .unwrap()
            .ends_with(" 42"));
        // A later probe that is answered brings the latency back.
        let text = render(&[
            at(1, RunKind::Path, PATH),
            at(2, RunKind::Rr, &silent),
            at(3, RunKind::Rr, RR),
        ]);
        let p99 = line(&text, "mtuperf_rr_latency_p99_seconds").unwrap();
        let v: f64 = p99.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(v > 0.0, "{p99}");
        assert!(line(&text, "mtuperf_rr_answered_blocks")
            .unwrap()
            .ends_with(" 11529"));
        assert!(line(&text, "mtuperf_rr_lost_blocks")
            .unwrap()
            .ends_with(" 0"));
        assert!(line(&text, "mtuperf_rr_reassembly_failures")
            .unwrap()
            .ends_with(" 0"));
        // ...and the reverse: the silent probe after it removes the stale latency.
        let text = render(&[
            at(1, RunKind::Path, PATH),
            at(2, RunKind::Rr, RR),
            at(3, RunKind::Rr, &silent),
        ]);
        assert!(
            line(&text, "mtuperf_rr_latency_p99_seconds").is_none(),
            "{text}"
        );
    }
}
