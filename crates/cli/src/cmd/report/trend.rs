//! `mtuperf report --since DURATION`: the watch history (runs labelled "watch") of
//! that last stretch of time as one HTML page.
use std::time::Duration;

use anyhow::Context;
use mtuperf_report::watch::{StoredWatch, Trend};
use mtuperf_store::{Filter, Store};

use crate::args::watch::WATCH_LABEL;
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
    Ok(mtuperf_report::html::trend::html(&Trend::of(
        &watch, from, until,
    )))
}
