//! `mtuperf history`: list stored runs, newest first.
use std::time::Duration;

use anyhow::Context;
use mtuperf_store::Filter;

use crate::common;
use crate::exit::{CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only runs newer than this (e.g. 2h, 7d as 168h).
    #[arg(long, value_parser = common::parse_any_duration)]
    since: Option<Duration>,
    /// Only runs whose target contains this text.
    #[arg(long)]
    target: Option<String>,
    /// Only runs of this kind (stream, rr, path, doctor, compare).
    #[arg(long)]
    kind: Option<String>,
    /// At most this many runs.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Print JSON (one array of runs, without their documents).
    #[arg(long)]
    json: bool,
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    let Some(store) = common::open_store(g)? else {
        return Err(Failure::usage(
            "--no-store",
            "set",
            "history reads the history",
            "drop --no-store",
        ));
    };
    let filter = Filter {
        since_unix_ms: a
            .since
            .map(|d| mtuperf_engine::unix_ms() - d.as_millis() as i64),
        target: a.target.clone(),
        kind: a.kind.clone(),
        limit: Some(a.limit),
        ..Filter::default()
    };
    let runs = store.list(&filter).context("reading the history")?;
    if a.json {
        let rows: Vec<_> = runs
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id, "started": mtuperf_report::timestamp(r.started_unix_ms), "kind": r.kind,
                    "target": r.target, "label": r.label, "group_id": r.group_id,
                    "headline": r.headline, "headline_value": r.headline_value, "interrupted": r.interrupted
                })
            })
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_default()
        );
        return Ok(0);
    }
    outln!(
        "{:>5}  {:<20}  {:<8}  {:<28}  {:<10}  headline",
        "id",
        "time (UTC)",
        "kind",
        "target",
        "label"
    );
    for r in &runs {
        outln!(
            "{:>5}  {:<20}  {:<8}  {:<28}  {:<10}  {}{}",
            r.id,
            mtuperf_report::timestamp(r.started_unix_ms),
            r.kind,
            r.target,
            r.label.as_deref().unwrap_or("-"),
            r.headline,
            if r.interrupted { " (interrupted)" } else { "" }
        );
    }
    if runs.is_empty() {
        outln!("(no runs in {})", store.path().display());
    }
    Ok(0)
}
