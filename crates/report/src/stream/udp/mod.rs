//! UDP stream results (`stream --udp`): the `mtuperf.stream-udp/5` JSON document,
//! its figures (`figures`) and (in `text`) the human text; its history record is in
//! `record::kinds`, beside the other kinds'.

mod figures;
mod text;

use mtuperf_engine::stream::udp::metrics::{self, UdpMetrics};
use mtuperf_engine::stream::udp::sweep::{self, SweepStep};
use mtuperf_engine::stream::udp::UdpStreamResult;
use mtuperf_stats::Summary;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use figures::figures;
pub use text::{header, interval_header, interval_line, run_line, summary_text, sweep_text, text};

pub const SCHEMA: &str = "mtuperf.stream-udp/5";

/// One run: raw measurements of both ends plus the derived figures.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunDoc {
    pub run_id: Option<i64>,
    pub started: String,
    pub result: UdpStreamResult,
    pub metrics: UdpMetrics,
    /// Both ends' placement summarised (null when neither end was sampled).
    pub placement: Option<crate::placement::PlacementSummary>,
}

impl RunDoc {
    pub fn new(result: UdpStreamResult) -> RunDoc {
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

    /// Loss over all directions, % of datagrams sent.
    pub fn loss_pct(&self) -> f64 {
        let sent: u64 = self.metrics.directions.iter().map(|d| d.sent).sum();
        let lost: u64 = self.metrics.directions.iter().map(|d| d.lost).sum();
        if sent == 0 {
            0.0
        } else {
            lost as f64 * 100.0 / sent as f64
        }
    }

    /// Offered rate summed over the directions.
    pub fn offered_bps(&self) -> f64 {
        self.metrics.directions.iter().map(|d| d.offered_bps).sum()
    }

    /// The receiving end's process CPU per GiB received (first direction).
    pub fn receiver_ms_per_gib(&self) -> Option<f64> {
        let recv = self.metrics.directions.first()?.receiver;
        self.metrics
            .ends
            .iter()
            .find(|e| e.end == recv)?
            .process_ms_per_gib_received
    }
}

/// Statistics over repeated runs.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RepeatSummary {
    pub runs: usize,
    pub goodput_bps: Summary,
    pub loss_pct: Summary,
}

/// A `--rate` sweep: one step per rate (each step one run of `runs`, in order), and
/// the knee (highest rate with loss at or below `max_loss_pct`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Sweep {
    pub max_loss_pct: f64,
    pub steps: Vec<SweepStep>,
    pub knee: Option<SweepStep>,
}

impl Sweep {
    pub fn new(runs: &[RunDoc], max_loss_pct: f64) -> Sweep {
        let steps: Vec<SweepStep> = runs
            .iter()
            .map(|r| {
                SweepStep::new(
                    r.result.request.rate_bps,
                    r.offered_bps(),
                    r.metrics.goodput_bps,
                    r.loss_pct(),
                    max_loss_pct,
                )
            })
            .collect();
        Sweep {
            max_loss_pct,
            knee: sweep::knee(&steps),
            steps,
        }
    }
}

/// The `mtuperf.stream-udp/5` document, what `mtuperf stream --udp --json` prints and
/// the history stores. Datagram counts are per direction: `sent` is the sender's count,
/// `received` the receiver's distinct sequence numbers, lost = sent - received. Kernel
/// counters (snmp, iface) are deltas in each end's own network namespace. `*_ns` are
/// nanoseconds since that end's Go; rates are bits per second of UDP payload; CPU
/// percentages are of one core.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    #[schemars(length(min = 1))]
    pub runs: Vec<RunDoc>,
    pub summary: Option<RepeatSummary>,
    pub sweep: Option<Sweep>,
}

impl Document {
    pub fn new(runs: Vec<RunDoc>, sweep: Option<Sweep>) -> Document {
        let summary = (runs.len() > 1 && sweep.is_none())
            .then(|| {
                let g: Vec<f64> = runs.iter().map(|r| r.metrics.goodput_bps).collect();
                let l: Vec<f64> = runs.iter().map(RunDoc::loss_pct).collect();
                Some(RepeatSummary {
                    runs: runs.len(),
                    goodput_bps: mtuperf_stats::summarize(&g)?,
                    loss_pct: mtuperf_stats::summarize(&l)?,
                })
            })
            .flatten();
        Document {
            schema: SCHEMA.into(),
            runs,
            summary,
            sweep,
        }
    }
}

/// "1.00 Gbit/s received, loss 0.000%".
pub fn headline(run: &RunDoc) -> String {
    format!(
        "{} received, loss {:.3}%",
        crate::fmt::rate(run.metrics.goodput_bps),
        run.loss_pct()
    )
}
