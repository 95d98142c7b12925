//! `mtuperf export`: one row per stored run with its headline figures flattened, as
//! CSV (RFC 4180 quoting) or a JSON array, for spreadsheets and pandas.

use serde::Serialize;

use crate::stream::{receiver_demand, Document};

pub const EXPORT_SCHEMA: &str = "mtuperf.export/1";

/// A stored run as the exporter receives it (the store's fields, no store types).
pub struct RunIn<'a> {
    pub id: i64,
    pub kind: &'a str,
    pub target: &'a str,
    pub started_unix_ms: i64,
    pub headline: &'a str,
    pub headline_value: Option<f64>,
    pub interrupted: bool,
    pub group_id: Option<i64>,
    pub label: Option<&'a str>,
    pub document: &'a str,
}

/// One exported row. Figures a run's kind does not have are empty (null in JSON).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: i64,
    pub kind: String,
    pub target: String,
    pub started: String,
    pub group_id: Option<i64>,
    pub label: Option<String>,
    pub interrupted: bool,
    pub headline: String,
    /// In the kind's base unit (stream: bit/s).
    pub headline_value: Option<f64>,
    pub block: Option<u32>,
    pub goodput_bps: Option<f64>,
    pub receiver_cpu_us_per_mib: Option<f64>,
    pub frames_per_block: Option<f64>,
    pub client_mtu: Option<u32>,
    pub agent_mtu: Option<u32>,
}

pub const COLUMNS: [&str; 15] = [
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
        block: None,
        goodput_bps: None,
        receiver_cpu_us_per_mib: None,
        frames_per_block: None,
        client_mtu: None,
        agent_mtu: None,
    };
    if r.kind == "stream" {
        if let Some(run) = serde_json::from_str::<Document>(r.document)
            .ok()
            .and_then(|d| d.runs.into_iter().next())
        {
            row.block = Some(run.result.request.block);
            row.goodput_bps = Some(run.metrics.headline_bps);
            row.receiver_cpu_us_per_mib = receiver_demand(&run);
            let recv = run.metrics.directions.first().map(|d| d.receiver);
            row.frames_per_block = run
                .metrics
                .ends
                .iter()
                .find(|e| Some(e.end) == recv)
                .and_then(|e| e.iface.as_ref())
                .and_then(|i| i.frames_per_block);
            row.client_mtu = run.result.client.iface.as_ref().map(|i| i.mtu);
            row.agent_mtu = run.result.agent.iface.as_ref().map(|i| i.mtu);
        }
    }
    row
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
            kind: "path",
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
