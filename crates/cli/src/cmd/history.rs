//! `mtuperf history`: list stored runs (or, with `--kind compare`, the comparisons),
//! newest first.
use std::time::Duration;

use anyhow::Context;
use mtuperf_report::history::{self as rh, Row};
use mtuperf_report::record::{self, RunKind};
use mtuperf_store::{Filter, Group, Store, StoredRun};

use crate::exit::CmdResult;
use crate::global::Global;
use crate::history;
use crate::output::{self, Format, Output};
use crate::parse;

/// history's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str =
        "text (the default), or json: rows of schema mtuperf.history/1, without their documents";
    const HINT: &'static str = "the runs' figures as CSV: `mtuperf export`";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only runs newer than this (e.g. 2h, 7d as 168h).
    #[arg(long, value_parser = parse::parse_any_duration)]
    since: Option<Duration>,
    /// Only runs whose target contains this text.
    #[arg(long)]
    target: Option<String>,
    /// Only runs of this kind (stream, rr, path, doctor, udp, compare: the comparisons).
    #[arg(long, value_parser = parse::parse_kind)]
    kind: Option<RunKind>,
    /// At most this many runs.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    #[command(flatten)]
    output: Output<Formats>,
}

fn run_row(r: StoredRun) -> Row {
    Row {
        schema: rh::SCHEMA,
        id: r.id,
        started: mtuperf_report::timestamp(r.started_unix_ms),
        kind: r.kind.to_string(),
        target: r.target,
        label: r.label,
        group_id: r.group_id,
        headline: r.headline,
        headline_value: r.headline_value,
        interrupted: r.interrupted,
    }
}

/// A comparison group as a history row: its paths, and its verdicts once finished.
fn group_row(g: Group) -> Row {
    let plan = serde_json::from_str::<mtuperf_engine::compare::Plan>(&g.plan_json).ok();
    let summary = g
        .summary_json
        .as_deref()
        .and_then(|s| record::decode(RunKind::Compare, s).ok());
    Row {
        schema: rh::SCHEMA,
        id: g.id,
        started: mtuperf_report::timestamp(g.created_unix_ms),
        kind: RunKind::Compare.to_string(),
        target: plan.map_or_else(String::new, |p| {
            let names: Vec<String> = p.paths.into_iter().map(|p| p.name).collect();
            names.join(" vs ")
        }),
        label: None,
        group_id: Some(g.id),
        headline: summary.as_ref().map_or_else(
            || format!("unfinished: mtuperf compare --resume {}", g.id),
            |s| s.headline(),
        ),
        headline_value: None,
        interrupted: !g.finished,
    }
}

fn rows(store: &Store, a: &Args, since_unix_ms: Option<i64>) -> anyhow::Result<Vec<Row>> {
    if a.kind == Some(RunKind::Compare) {
        let groups = store.groups(RunKind::Compare, a.limit)?;
        return Ok(groups
            .into_iter()
            .filter(|g| since_unix_ms.is_none_or(|t| g.created_unix_ms >= t))
            .map(group_row)
            .filter(|r| a.target.as_ref().is_none_or(|t| r.target.contains(t)))
            .collect());
    }
    let filter = Filter {
        since_unix_ms,
        target: a.target.clone(),
        kind: a.kind,
        limit: Some(a.limit),
        ..Filter::default()
    };
    Ok(store.list(&filter)?.into_iter().map(run_row).collect())
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    let format = a.output.pick();
    let store = history::open_history(g)?;
    let since = a
        .since
        .map(|d| mtuperf_engine::unix_ms() - d.as_millis() as i64);
    let rows = rows(&store, &a, since).context("reading the history")?;
    if format == Format::Json {
        crate::out::json(&rows);
        return Ok(0);
    }
    out!("{}", rh::text(&rows));
    if rows.is_empty() {
        let filtered = a.since.is_some() || a.target.is_some() || a.kind.is_some();
        if a.limit == 0 {
            outln!("(no runs: --limit 0 lists none)");
        } else if filtered {
            outln!("(no runs match the filters in {})", store.path().display());
        } else {
            outln!("(no runs in {})", store.path().display());
        }
    }
    Ok(0)
}
