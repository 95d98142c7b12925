//! Stream results: the `mtuperf.stream/1` JSON document and the human text.

mod figures;
mod text;
pub mod udp;

use mtuperf_engine::stream::metrics::{self, StreamMetrics};
use mtuperf_engine::stream::verdict::{LimitCause, LimitVerdict};
use mtuperf_engine::stream::StreamResult;
use mtuperf_stats::Summary;
use serde::{Deserialize, Serialize};

pub use figures::figures;
pub use text::{header, interval_header, interval_line, run_line, summary_text, text};

pub const SCHEMA: &str = "mtuperf.stream/1";

/// One run: raw measurements of both ends plus the derived figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunDoc {
    /// History id, when stored.
    pub run_id: Option<i64>,
    pub started: String,
    pub result: StreamResult,
    pub metrics: StreamMetrics,
    /// Both ends' placement summarised (absent in runs stored before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RepeatSummary {
    pub runs: usize,
    /// Goodput, first→last byte, summed over directions (bit/s).
    pub goodput_bps: Summary,
    /// Receiver-side service demand, µs of CPU per MiB (system-wide).
    pub receiver_us_per_mib: Option<Summary>,
}

/// The `mtuperf.stream/1` document: one or more runs, and statistics when repeated.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub schema: String,
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

/// The limiting-factor verdicts of a stored `mtuperf.stream/1` document's first
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
    let rate = crate::fmt::rate(run.metrics.headline_bps);
    if causes.is_empty() {
        rate
    } else {
        format!("{rate} (limited by {})", causes.join(" / "))
    }
}
