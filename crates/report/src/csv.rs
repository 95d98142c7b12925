//! `mtuperf export`: one row per stored run with its headline figures flattened, as
//! CSV (RFC 4180 quoting) or a JSON array, for spreadsheets and pandas. The numbers
//! come from each run's [`figures`](crate::record::RunRecord::figures), never from the
//! engine's structures.

use schemars::JsonSchema;
use serde::Serialize;

use crate::record::{self, figure, Figure, RunKind};

pub const EXPORT_SCHEMA: &str = "mtuperf.export/1";

/// A stored run as the exporter receives it (the store's fields, no store types).
pub struct RunIn<'a> {
    pub id: i64,
    pub kind: RunKind,
    pub target: &'a str,
    pub started_unix_ms: i64,
    pub headline: &'a str,
    pub headline_value: Option<f64>,
    pub interrupted: bool,
    pub group_id: Option<i64>,
    pub label: Option<&'a str>,
    pub document: &'a str,
}

/// `mtuperf export --json`: one row per stored run, its figures flattened. A figure the
/// run's kind does not have is null. The CSV export has the same columns in the same
/// order.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExportDoc {
    #[schemars(extend("const" = EXPORT_SCHEMA))]
    pub schema: &'static str,
    pub runs: Vec<Row>,
}

/// One exported row. Figures a run's kind does not have are empty (null in JSON).
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Row {
    pub id: i64,
    pub kind: String,
    pub target: String,
    /// RFC 3339, UTC, seconds.
    pub started: String,
    pub group_id: Option<i64>,
    pub label: Option<String>,
    pub interrupted: bool,
    pub headline: String,
    /// In the kind's base unit (stream: bit/s).
    pub headline_value: Option<f64>,
    /// stream, rr: bytes per block.
    pub block: Option<u32>,
    /// stream: goodput, bit/s.
    pub goodput_bps: Option<f64>,
    /// stream: the receiver's CPU, µs per MiB moved.
    pub receiver_cpu_us_per_mib: Option<f64>,
    /// stream: the receiver's interface frames per block.
    pub frames_per_block: Option<f64>,
    /// stream: this end's interface MTU.
    pub client_mtu: Option<u32>,
    /// stream: the agent's interface MTU.
    pub agent_mtu: Option<u32>,
    /// rr: request bytes per block.
    pub request: Option<u32>,
    /// rr: concurrent clients.
    pub clients: Option<u32>,
    /// rr: "udp" or "tcp".
    pub proto: Option<String>,
    /// rr: offered rate (blocks/s) when one was set.
    pub rate: Option<f64>,
    /// rr: block latency percentiles at the client, ns.
    pub p50_ns: Option<f64>,
    /// rr: 99th percentile block latency at the client, ns.
    pub p99_ns: Option<f64>,
    /// rr: 99.9th percentile block latency at the client, ns.
    pub p999_ns: Option<f64>,
    /// rr: blocks answered per second.
    pub blocks_per_s: Option<f64>,
    /// rr: blocks lost, percent of those sent.
    pub lost_pct: Option<f64>,
}

pub const COLUMNS: [&str; 24] = [
    "id",
    "kind",
    "target",
    "started",
    "group_id",
    "label",
    "interrupted",
    "headline",
    "headline_value",
    "block",
    "goodput_bps",
    "receiver_cpu_us_per_mib",
    "frames_per_block",
    "client_mtu",
    "agent_mtu",
    "request",
    "clients",
    "proto",
    "rate",
    "p50_ns",
    "p99_ns",
    "p999_ns",
    "blocks_per_s",
    "lost_pct",
];

pub fn row(r: &RunIn) -> Row {
    let mut row = Row {
        id: r.id,
        kind: r.kind.to_string(),
        target: r.target.to_string(),
        started: crate::timestamp(r.started_unix_ms),
        group_id: r.group_id,
        label: r.label.map(str::to_string),
        interrupted: r.interrupted,
        headline: r.headline.to_string(),
        headline_value: r.headline_value,
        ..Row::default()
    };
    let figs = record::decode(r.kind, r.document)
        .ok()
        .map(|rec| rec.figures())
        .unwrap_or_default();
    fill(&mut row, &figs);
    row
}

/// Puts the figures a row has columns for into it.
fn fill(row: &mut Row, figs: &[Figure]) {
    let get = |name: &str| figure(figs, name).map(|f| f.value);
    let int = |name: &str| get(name).map(|v| v as u32);
    let end = |which: &str| {
        figs.iter()
            .find(|f| f.name == "mtu" && f.labels.iter().any(|(k, v)| *k == "end" && v == which))
            .map(|f| f.value as u32)
    };
    row.block = int("block");
    row.goodput_bps = get("goodput");
    row.receiver_cpu_us_per_mib = get("receiver_cpu");
    row.frames_per_block = get("frames_per_block");
    row.client_mtu = end("client");
    row.agent_mtu = end("agent");
    row.request = int("request");
    row.clients = int("clients");
    row.proto = figs
        .iter()
        .flat_map(|f| &f.labels)
        .find(|(k, _)| *k == "proto")
        .map(|(_, v)| v.clone());
    row.rate = get("rate");
    row.p50_ns = get("p50");
    row.p99_ns = get("p99");
    row.p999_ns = get("p999");
    row.blocks_per_s = get("blocks_per_s");
    row.lost_pct = get("lost");
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// Header line plus one line per row.
pub fn csv(rows: &[Row]) -> String {
    let mut s = COLUMNS.join(",");
    s.push('\n');
    for r in rows {
        let cells = [
            r.id.to_string(),
            field(&r.kind),
            field(&r.target),
            r.started.clone(),
            opt(r.group_id),
            field(r.label.as_deref().unwrap_or("")),
            r.interrupted.to_string(),
            field(&r.headline),
            opt(r.headline_value),
            opt(r.block),
            opt(r.goodput_bps),
            opt(r.receiver_cpu_us_per_mib),
            opt(r.frames_per_block),
            opt(r.client_mtu),
            opt(r.agent_mtu),
            opt(r.request),
            opt(r.clients),
            field(r.proto.as_deref().unwrap_or("")),
            opt(r.rate),
            opt(r.p50_ns),
            opt(r.p99_ns),
            opt(r.p999_ns),
            opt(r.blocks_per_s),
            opt(r.lost_pct),
        ];
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_fields_that_need_it() {
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("plain"), "plain");
    }

    #[test]
    fn non_stream_rows_keep_generic_fields() {
        let r = row(&RunIn {
            id: 7,
            kind: RunKind::Path,
            target: "h",
            started_unix_ms: 0,
            headline: "9000 both ways",
            headline_value: Some(9000.0),
            interrupted: false,
            group_id: None,
            label: None,
            document: "{}",
        });
        let out = csv(&[r]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].split(',').count(), COLUMNS.len());
        assert!(lines[1].starts_with("7,path,h,"));
    }
}
