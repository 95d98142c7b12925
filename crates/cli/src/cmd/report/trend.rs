//! `mtuperf report --since DURATION`: the watch history (runs labelled "watch") of
//! that last stretch of time as one HTML page.
use std::time::Duration;

use anyhow::Context;
use mtuperf_report::watch::Trend;
use mtuperf_store::{Filter, Store};

use crate::exit::Failure;
use crate::history;

pub fn html(store: &Store, since: Duration) -> Result<String, Failure> {
    let until = mtuperf_engine::unix_ms();
    let from = until - since.as_millis() as i64;
    let filter = Filter {
        since_unix_ms: Some(from),
        ..Filter::default()
    };
    let runs = store.list(&filter).context("reading the history")?;
    let watch = history::watch_runs(&runs);
    Ok(mtuperf_report::watch::html::html(&Trend::of(
        &watch, from, until,
    )))
}
