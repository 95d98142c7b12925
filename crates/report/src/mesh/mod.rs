//! Mesh results: the `mtuperf.mesh/1` JSON document, the text matrix and the HTML grid.

mod html;
mod text;

pub use html::html;
pub use text::text;

use mtuperf_engine::mesh::MeshResult;
use serde::{Deserialize, Serialize};

pub const SCHEMA: &str = "mtuperf.mesh/1";

/// One mesh run: every node, network, pair, matrix cell and finding.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub schema: String,
    pub run_id: Option<i64>,
    pub started: String,
    /// Every tested direction carries its network's expected MTU and nothing was found.
    pub ok: bool,
    /// One line: what was found (also the history headline).
    pub headline: String,
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
            result,
        }
    }

    /// The label of node `n` ("?" when out of range).
    pub fn node(&self, n: usize) -> &str {
        self.result.nodes.get(n).map_or("?", |x| x.label.as_str())
    }
}

/// "5 nodes, 2 networks, 40 pairs: 2 findings" / "...: all paths carry their MTU".
pub fn headline(r: &MeshResult) -> String {
    let what = format!(
        "{} nodes, {} networks, {} pairs",
        r.nodes.len(),
        r.networks.len(),
        r.pairs.len()
    );
    let tail = if r.interrupted { " (interrupted)" } else { "" };
    match r.findings.len() {
        0 if !r.interrupted => format!("{what}: every path carries its network's MTU both ways"),
        0 => format!("{what}{tail}"),
        1 => format!("{what}: 1 finding{tail}"),
        n => format!("{what}: {n} findings{tail}"),
    }
}

/// Rate in human units ("9.41 Gbit/s").
fn rate(bits_per_s: f64) -> String {
    let (v, u) = if bits_per_s >= 1e9 {
        (bits_per_s / 1e9, "Gbit/s")
    } else if bits_per_s >= 1e6 {
        (bits_per_s / 1e6, "Mbit/s")
    } else {
        (bits_per_s / 1e3, "kbit/s")
    };
    format!("{v:.2} {u}")
}

/// A pair's load figures: rr p50 and stream goodput, when measured.
pub(crate) fn load_figures(p: &mtuperf_engine::mesh::PairResult) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(r) = &p.rr {
        v.push(format!("rr p50 {:.0} µs", r.p50_ns as f64 / 1e3));
    }
    if let Some(s) = p.stream.as_ref().filter(|s| s.wall_ns > 0) {
        v.push(rate(s.bytes as f64 * 8e9 / s.wall_ns as f64));
    }
    v
}
