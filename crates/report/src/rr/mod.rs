//! rr results: the `mtuperf.rr/6` JSON document (one step or a load sweep) and the
//! human text.

mod figures;
mod metrics;
mod text;
mod text_bidir;
mod text_from;

use mtuperf_engine::rr::RrResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use figures::figures;
pub use metrics::{compute, Direction, EndFigures, RrMetrics};
pub use text::{header, headline, interval_header, interval_line, step_text, sweep_text, text};

pub const SCHEMA: &str = "mtuperf.rr/6";

/// The knee rule, as printed in the sweep legend (`mtuperf_stats::knee`).
pub const KNEE_RULE: &str = "knee = the load ending the last step that raised blocks/s by at least 10%, \
provided p99 rose after it; none if throughput still scaled at the last step or latency stayed flat";

/// One load step: raw measurements of both ends plus the derived figures.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StepDoc {
    /// History id, when stored.
    pub run_id: Option<i64>,
    pub started: String,
    pub result: RrResult,
    pub metrics: RrMetrics,
    /// Both ends' placement summarised (null when neither end was sampled).
    pub placement: Option<crate::placement::PlacementSummary>,
}

impl StepDoc {
    pub fn new(result: RrResult) -> StepDoc {
        StepDoc {
            run_id: None,
            started: crate::timestamp(result.started_unix_ms),
            metrics: compute(&result),
            placement: crate::placement::summarize(
                result.client.placement.as_ref(),
                result.agent.placement.as_ref(),
                &result.client_host,
                &result.agent_host,
            ),
            result,
        }
    }
}

/// One row of a sweep table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepPoint {
    pub clients: u32,
    pub blocks_per_s: f64,
    /// None: no block answered at this load (no latency, not 0).
    #[schemars(range(min = 1))]
    pub p50_ns: Option<u64>,
    #[schemars(range(min = 1))]
    pub p99_ns: Option<u64>,
    /// Agent-side µs of CPU per block served (system-wide).
    pub agent_cpu_us_per_block: Option<f64>,
    /// The tool's own µs of CPU per block on each end (its threads only).
    pub client_tool_cpu_us_per_block: Option<f64>,
    pub agent_tool_cpu_us_per_block: Option<f64>,
}

/// A load sweep's summary: the table, its knee and its maximum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Sweep {
    #[schemars(length(min = 2))]
    pub points: Vec<SweepPoint>,
    /// Index into `points` of the knee (see `knee_rule`).
    pub knee: Option<usize>,
    pub knee_rule: String,
    /// Index into `points` of the highest blocks/s.
    pub max_index: Option<usize>,
}

impl Sweep {
    pub fn of(steps: &[StepDoc]) -> Sweep {
        let points: Vec<SweepPoint> = steps
            .iter()
            .map(|s| SweepPoint {
                clients: s.result.request.clients,
                blocks_per_s: s.metrics.blocks_per_s,
                p50_ns: s.result.client.latency.p50,
                p99_ns: s.result.client.latency.p99,
                agent_cpu_us_per_block: s.metrics.agent.cpu_us_per_block,
                client_tool_cpu_us_per_block: s.metrics.client.tool_cpu_us_per_block,
                agent_tool_cpu_us_per_block: s.metrics.agent.tool_cpu_us_per_block,
            })
            .collect();
        // A load with no block answered has no p99: it ends the curve the knee is
        // sought on (a step past it is not a latency of 0).
        let triples: Vec<(f64, f64, f64)> = points
            .iter()
            .map_while(|p| Some((f64::from(p.clients), p.blocks_per_s, p.p99_ns? as f64)))
            .collect();
        let max_index = points
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.blocks_per_s.total_cmp(&b.1.blocks_per_s))
            .map(|(i, _)| i);
        Sweep {
            knee: mtuperf_stats::knee(&triples),
            knee_rule: KNEE_RULE.into(),
            points,
            max_index,
        }
    }
}

/// The `mtuperf.rr/6` document, what `mtuperf rr --json` prints (the history stores one
/// step each): the steps of one command, and the sweep summary when more than one load
/// was run. Block and request sizes are bytes after mtuperf's 40-byte header; latency
/// is request sent (open loop: due) to last byte of the block received, in ns (null,
/// never 0, when no block was answered); `*_ns` in intervals are ns since the client's
/// Go; CPU is system-wide from /proc/stat; counters are deltas over each end's own
/// measured interval.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    #[schemars(length(min = 1))]
    pub steps: Vec<StepDoc>,
    pub sweep: Option<Sweep>,
}

impl Document {
    pub fn new(steps: Vec<StepDoc>) -> Document {
        let sweep = (steps.len() > 1).then(|| Sweep::of(&steps));
        Document {
            schema: SCHEMA.into(),
            steps,
            sweep,
        }
    }

    /// Blocks that failed their checksum, both directions of every step.
    pub fn corrupt(&self) -> u64 {
        self.steps
            .iter()
            .map(|s| {
                let reverse = s.result.reverse.as_ref();
                s.result.client.counts.corrupt + reverse.map_or(0, |v| v.requester.counts.corrupt)
            })
            .sum()
    }

    /// Why the first step that ended early did, in words (None: every step ran its
    /// course).
    pub fn interrupt_reason(&self) -> Option<String> {
        self.steps
            .iter()
            .find_map(|s| crate::interrupt::words(&s.result.interrupted_by))
    }
}
