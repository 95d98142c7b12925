//! `mtuperf export --format openmetrics`: the history's watch results as the metric
//! families of `serve --metrics`, for node_exporter's textfile collector, e.g. from
//! cron: `mtuperf export --format openmetrics > DIR/mtuperf.prom.$$ && mv ... DIR/mtuperf.prom`.
use anyhow::Context;
use mtuperf_report::openmetrics::{self, StoredWatch};
use mtuperf_store::Filter;

use crate::exit::CmdResult;
use crate::global::Global;
use crate::history;

use crate::args::watch::WATCH_LABEL;

pub fn run(g: &Global, ids: &[i64]) -> CmdResult {
    let store = history::open_history(g)?;
    let filter = Filter {
        ids: ids.to_vec(),
        ..Filter::default()
    };
    let runs = store.list(&filter).context("reading the history")?;
    let watch: Vec<StoredWatch<'_>> = runs
        .iter()
        .filter(|r| r.label.as_deref() == Some(WATCH_LABEL) && r.group_id.is_none())
        .map(|r| {
            Ok(StoredWatch {
                target: &r.target,
                kind: history::run_kind(r)?,
                started_unix_ms: r.started_unix_ms,
                document: &r.document,
            })
        })
        .collect::<anyhow::Result<_>>()?;
    out!("{}", openmetrics::render(&watch));
    Ok(0)
}
