//! Mesh results: the `mtuperf.mesh/7` JSON document (the engine's typed outcomes),
//! the text matrix and the HTML grid, and the words for both (`words`).

mod grid;
mod html;
mod jumbo;
mod rac;
#[cfg(test)]
mod tests;
mod text;
mod words;

pub use html::html;
pub use rac::{blocks_per_s, fragments_per_block};
pub use text::text;
pub use words::{Say, Words};

use mtuperf_engine::mesh::{Answer, MeshResult, MeshTests, NotMeasured, PairResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "mtuperf.mesh/7";

/// One `mtuperf mesh` run: every node pair of every interconnect network, both
/// directions, each node, network, pair, matrix cell, and the findings that explain the
/// failures.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Document {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    pub run_id: Option<i64>,
    /// RFC 3339, UTC, seconds.
    pub started: String,
    /// Every tested direction carries its network's expected MTU and nothing was found.
    pub ok: bool,
    /// One line: what was found (also the history headline).
    pub headline: String,
    /// The plain answer: ready, or the first thing to fix (the text's first line).
    pub answer: Answer,
    #[serde(flatten)]
    pub result: MeshResult,
}

impl Document {
    pub fn new(result: MeshResult) -> Document {
        Document {
            schema: SCHEMA.into(),
            run_id: None,
            started: crate::timestamp(result.started_unix_ms),
            ok: result.ok(),
            headline: headline(&result),
            answer: mtuperf_engine::mesh::answer(&result),
            result,
        }
    }

    /// The label of node `n` ("?" when out of range), as given or discovered:
    /// escape it before it reaches a terminal ([`Say::node`] does).
    pub fn node(&self, n: usize) -> &str {
        self.result.nodes.get(n).map_or("?", |x| x.label.as_str())
    }
}

/// Reads a stored mesh document. A document of another schema version (mesh/1 stored
/// sentences, mesh/2 findings of its own classes, mesh/3 no block test, kernel
/// counters or checks, mesh/4 left out the fields it had no value for, mesh/5
/// stored an SSH node's failure as a sentence) is refused by name.
///
/// # Errors
/// The document is not a `mtuperf.mesh/7` document.
pub fn decode(document: &str) -> Result<Document, serde_json::Error> {
    #[derive(Deserialize)]
    struct Head {
        schema: String,
    }
    let head: Head = serde_json::from_str(document)?;
    if head.schema != SCHEMA {
        return Err(serde::de::Error::custom(format!(
            "schema {} is not read by this version, which reads {SCHEMA}; run the mesh again",
            head.schema
        )));
    }
    serde_json::from_str(document)
}

/// "5 nodes, 2 networks, 40 pairs: 2 findings" / "...: every path carries ...".
pub fn headline(r: &MeshResult) -> String {
    let what = format!(
        "{} nodes, {} networks, {} pairs",
        r.nodes.len(),
        r.networks.len(),
        r.pairs.len()
    );
    let tail = if r.interrupted {
        " (interrupted)"
    } else if r.deadline_passed {
        " (deadline passed)"
    } else {
        ""
    };
    match r.findings.len() {
        0 if tail.is_empty() => format!("{what}: every path carries its network's MTU both ways"),
        0 => format!("{what}{tail}"),
        1 => format!("{what}: 1 finding{tail}"),
        n => format!("{what}: {n} findings{tail}"),
    }
}

/// Of the pair tests asked: (test, measured, planned), for path, rr and stream.
pub fn measured(r: &MeshResult) -> Vec<(MeshTests, usize, usize)> {
    let got = |p: &PairResult, t: MeshTests| match t {
        MeshTests::Path => p.path.is_some(),
        MeshTests::Rr => p.rr.is_some(),
        MeshTests::Stream => p.stream.is_some(),
        MeshTests::Doctor => false,
    };
    [MeshTests::Path, MeshTests::Rr, MeshTests::Stream]
        .into_iter()
        .filter(|t| r.tests.contains(t))
        .map(|t| {
            let m = r.pairs.iter().filter(|p| got(p, t)).count();
            (t, m, r.pairs.len())
        })
        .collect()
}

/// Pair tests not measured because the run stopped (Ctrl-C) or ran out of time.
pub fn cut_short(r: &MeshResult) -> usize {
    r.pairs
        .iter()
        .flat_map(|p| &p.not_measured)
        .filter(|s| matches!(s.why, NotMeasured::Interrupted | NotMeasured::Deadline))
        .count()
}

/// A pair's load figures: rr block p50/p99 and lost blocks, stream goodput, when
/// measured.
pub(crate) fn load_figures(p: &PairResult) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(r) = &p.rr {
        v.push(match (r.p50_ns, r.p99_ns) {
            (Some(a), Some(b)) => format!(
                "rr block p50 {} p99 {}, {} lost",
                crate::fmt::latency_ns(a as f64),
                crate::fmt::latency_ns(b as f64),
                r.counts.lost
            ),
            _ => format!("rr: no block answered, {} lost", r.counts.lost),
        });
    }
    if let Some(s) = p.stream.as_ref().filter(|s| s.wall_ns > 0) {
        v.push(crate::fmt::rate(s.bytes as f64 * 8e9 / s.wall_ns as f64));
    }
    v
}
