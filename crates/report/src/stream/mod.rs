//! Stream results: the `mtuperf.stream/7` JSON document and the human text.

mod figures;
mod text;
pub mod udp;
mod verdict;

use mtuperf_engine::stream::metrics::{self, CountedBy, Partial, StreamMetrics};
use mtuperf_engine::stream::verdict::{LimitCause, LimitVerdict};
use mtuperf_engine::stream::StreamResult;
use mtuperf_stats::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use figures::figures;
pub use text::{header, interval_header, interval_line, run_line, summary_text, text};
pub use verdict::{advice_line, fix, limit_line};

pub const SCHEMA: &str = "mtuperf.stream/7";

/// One run: raw measurements of both ends plus the derived figures.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunDoc {
    /// History id, when stored.
    pub run_id: Option<i64>,
    pub started: String,
    pub result: StreamResult,
    pub metrics: StreamMetrics,
    /// Both ends' placement summarised (null when neither end was sampled).
    pub placement: Option<crate::placement::PlacementSummary>,
}

impl RunDoc {
    pub fn new(result: StreamResult) -> RunDoc {
        let metrics = metrics::compute(&result);
        RunDoc {
            run_id: None,
            started: crate::timestamp(result.started_unix_ms),
            placement: crate::placement::summarize(
                result.client_placement.as_ref(),
                result.agent.placement.as_ref(),
                &result.client_host,
                &result.agent_host,
            ),
            result,
            metrics,
        }
    }
}

/// Statistics over repeated runs of the headline figures.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepeatSummary {
    pub runs: usize,
    /// Goodput, first→last byte, summed over directions (bit/s).
    pub goodput_bps: Summary,
    /// Receiver-side service demand, µs of CPU per MiB (system-wide).
    pub receiver_us_per_mib: Option<Summary>,
}

/// The `mtuperf.stream/7` document, what `mtuperf stream --json` prints and the history
/// stores: one or more runs, and statistics when repeated. Byte counts are application
/// bytes; `*_ns` are nanoseconds since that end's Go; rates are bits per second; CPU
/// percentages are of one core.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    #[schemars(length(min = 1))]
    pub runs: Vec<RunDoc>,
    pub summary: Option<RepeatSummary>,
}

impl Document {
    pub fn new(runs: Vec<RunDoc>) -> Document {
        let summary = (runs.len() > 1).then(|| summarize(&runs)).flatten();
        Document {
            schema: SCHEMA.into(),
            runs,
            summary,
        }
    }
}

/// The receiver's service demand of a run: the end that read the most bytes.
pub fn receiver_demand(run: &RunDoc) -> Option<f64> {
    let recv_end = run.metrics.directions.first()?.receiver;
    run.metrics
        .ends
        .iter()
        .find(|e| e.end == recv_end)?
        .service_demand_us_per_mib
}

fn summarize(runs: &[RunDoc]) -> Option<RepeatSummary> {
    let good: Vec<f64> = runs
        .iter()
        .filter(|r| !r.result.interrupted)
        .map(|r| r.metrics.headline_bps)
        .collect();
    let demand: Vec<f64> = runs
        .iter()
        .filter(|r| !r.result.interrupted)
        .filter_map(receiver_demand)
        .collect();
    Some(RepeatSummary {
        runs: good.len(),
        goodput_bps: mtuperf_stats::summarize(&good)?,
        receiver_us_per_mib: mtuperf_stats::summarize(&demand),
    })
}

/// The limiting-factor verdicts of a stored `mtuperf.stream/7` document's first
/// run; empty when it has none or does not parse.
pub fn stored_verdicts(document: &str) -> Vec<LimitVerdict> {
    serde_json::from_str::<Document>(document)
        .ok()
        .and_then(|d| d.runs.into_iter().next())
        .map(|r| {
            r.metrics
                .directions
                .into_iter()
                .filter_map(|d| d.limit)
                .collect()
        })
        .unwrap_or_default()
}

/// A short name of a limiting cause, for one-line summaries.
pub fn cause_label(c: LimitCause) -> &'static str {
    match c {
        LimitCause::Cpu => "CPU",
        LimitCause::ReceiveWindow => "receive window",
        LimitCause::SendBuffer => "send buffer",
        LimitCause::Network => "network",
        LimitCause::Application => "application",
        LimitCause::Receiver => "receiver",
        LimitCause::Unknown => "unknown",
    }
}

/// The headline shown in the history list.
/// "16.97 Gbit/s (limited by CPU)"; one cause per direction, " / " between. No comma:
/// the CSV export leaves stream headlines unquoted.
pub fn headline(run: &RunDoc) -> String {
    let causes: Vec<&str> = run
        .metrics
        .directions
        .iter()
        .filter_map(|d| d.limit.as_ref())
        .map(|v| cause_label(v.cause))
        .collect();
    let rate = format!(
        "{}{}",
        crate::fmt::rate(run.metrics.headline_bps),
        partial(run.metrics.partial.as_ref())
    );
    if causes.is_empty() {
        rate
    } else {
        format!("{rate} (limited by {})", causes.join(" / "))
    }
}

/// " over the 4.3 s measured (interrupted)" for the headline of an interrupted run
/// (no comma: the CSV export leaves stream headlines unquoted); empty for a whole run.
pub fn partial(p: Option<&Partial>) -> String {
    p.map_or_else(String::new, |p| {
        format!(
            " over the {:.1} s measured (interrupted{})",
            p.over_s,
            match p.counted_by {
                CountedBy::Receiver => "",
                CountedBy::SenderAcked => "; bytes the agent acknowledged",
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real run over the lab's jumbo path whose server interface went down 3 s into
    /// an 8 s stream: the agent's report never came; the client wrote 2.8 GiB.
    fn dead_path() -> RunDoc {
        let d: Document =
            serde_json::from_str(include_str!("../../tests/fixtures/stream_dead_path.json"))
                .unwrap();
        RunDoc::new(d.runs.into_iter().next().unwrap().result)
    }

    #[test]
    fn an_interrupted_run_is_headlined_over_what_was_measured() {
        let run = dead_path();
        let m = &run.metrics;
        let p = m.partial.unwrap();
        assert_eq!(p.counted_by, CountedBy::SenderAcked);
        // The client's intervals moved bytes until 3.0 s, not over the 10 s it waited.
        assert!((p.over_s - 3.0).abs() < 1e-9, "{p:?}");
        let acked = m.directions[0].acked.unwrap();
        assert_eq!(acked.bytes, 3_027_285_559);
        assert!((m.headline_bps - 3_027_285_559.0 * 8.0 / 3.0).abs() < 1.0);
        let h = headline(&run);
        assert_eq!(
            h,
            "8.07 Gbit/s over the 3.0 s measured (interrupted; bytes the agent acknowledged)"
        );
        // No verdict from a dead path's clocks (it said "receive window 100%").
        assert!(m.directions[0].limit.is_none());
        assert!(text(&Document::new(vec![run])).contains(
            "goodput ≈ 8.07 Gbit/s over the first 3.0 s: 2.82 GiB the agent's kernel acknowledged"
        ));
    }
}
