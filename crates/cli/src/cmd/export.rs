//! `mtuperf export`: stored runs as CSV or JSON, one row per run, figures flattened.
use anyhow::Context;
use mtuperf_report::csv::{self as rcsv, RunIn};
use mtuperf_store::Filter;

use crate::common;
use crate::exit::{CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run ids (default: every run matching the filters).
    ids: Vec<i64>,
    /// Only runs of this kind (stream, rr, path, doctor).
    #[arg(long)]
    kind: Option<String>,
    /// Only runs of this comparison group.
    #[arg(long, value_name = "ID")]
    group: Option<i64>,
    /// Comma-separated values with a header line (the default).
    #[arg(long, conflicts_with = "json")]
    csv: bool,
    /// A JSON document (schema mtuperf.export/1) with an array of rows.
    #[arg(long)]
    json: bool,
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
pub fn run(g: &Global, a: Args) -> CmdResult {
    let Some(store) = common::open_store(g)? else {
        return Err(Failure::usage(
            "--no-store",
            "set",
            "export reads the history",
            "drop --no-store",
        ));
    };
    let filter = Filter {
        ids: a.ids.clone(),
        kind: a.kind.clone(),
        group_id: a.group,
        ..Filter::default()
    };
    let mut runs = store.list(&filter).context("reading the history")?;
    runs.sort_by_key(|r| r.id);
    let rows: Vec<rcsv::Row> = runs
        .iter()
        .map(|r| {
            rcsv::row(&RunIn {
                id: r.id,
                kind: &r.kind,
                target: &r.target,
                started_unix_ms: r.started_unix_ms,
                headline: &r.headline,
                headline_value: r.headline_value,
                interrupted: r.interrupted,
                group_id: r.group_id,
                label: r.label.as_deref(),
                document: &r.document,
            })
        })
        .collect();
    if a.json {
        let doc = serde_json::json!({ "schema": rcsv::EXPORT_SCHEMA, "runs": rows });
        crate::out::json(&doc);
    } else {
        out!("{}", rcsv::csv(&rows));
    }
    Ok(0)
}
