//! `mtuperf export --format openmetrics`: the history's watch results as the metric
//! families of `serve --metrics`, for node_exporter's textfile collector, e.g. from
//! cron: `mtuperf export --format openmetrics > DIR/mtuperf.prom.$$ && mv ... DIR/mtuperf.prom`.
use anyhow::Context;
use mtuperf_report::watch::openmetrics;
use mtuperf_store::Filter;

use crate::exit::CmdResult;
use crate::global::Global;
use crate::history;

pub fn run(g: &Global, ids: &[i64]) -> CmdResult {
    let store = history::open_history(g)?;
    let filter = Filter {
        ids: ids.to_vec(),
        ..Filter::default()
    };
    let runs = store.list(&filter).context("reading the history")?;
    let watch = history::watch_runs(&runs);
    out!("{}", openmetrics::render(&watch));
    Ok(0)
}
