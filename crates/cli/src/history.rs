//! The history as commands use it: opening it (`--db`, `--no-store`), storing a run
//! (the one place a history row is built; a failure keeps the document as a file),
//! and the watch's own runs read back.

use anyhow::Context;
use mtuperf_report::record::RunRecord;
use mtuperf_store::{NewRun, Store, StoredRun};

use crate::exit::{self, Failure};
use crate::global::Global;

/// Opens the history unless --no-store (a command that stores its runs).
pub fn open_store(g: &Global) -> Result<Option<Store>, Failure> {
    if g.no_store {
        return Ok(None);
    }
    open_history(g).map(Some)
}

/// Opens the history (`--db`, else the default location). Only the default location's
/// directory is created; an explicit --db whose directory is missing is an error naming
/// it (a typo must not become a directory tree, least of all as root).
pub fn open_history(g: &Global) -> Result<Store, Failure> {
    if let Some(p) = &g.db {
        if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                return Err(Failure::bad_value(
                    "--db",
                    &p.display().to_string(),
                    "a file in an existing directory",
                    &format!(
                        "directory {} does not exist; create it first (mkdir -p) or drop --db for the default location",
                        dir.display()
                    ),
                ));
            }
        }
    }
    let path = g.db.clone().unwrap_or_else(Store::default_path);
    Store::open(&path)
        .with_context(|| format!("opening history {}", path.display()))
        .map_err(|e| Failure::new(exit::FAILED, e))
}

/// The watch's own results among `runs` (labelled "watch", in no comparison group),
/// as the trend page and the OpenMetrics export read them.
pub fn watch_runs(runs: &[StoredRun]) -> Vec<mtuperf_report::watch::StoredWatch<'_>> {
    runs.iter()
        .filter(|r| {
            r.label.as_deref() == Some(crate::args::watch::WATCH_LABEL) && r.group_id.is_none()
        })
        .map(|r| mtuperf_report::watch::StoredWatch {
            target: &r.target,
            kind: r.kind,
            started_unix_ms: r.started_unix_ms,
            document: &r.document,
        })
        .collect()
}

/// Where a run sits in the history besides its own figures.
#[derive(Debug, Clone, Copy, Default)]
pub struct Place<'a> {
    /// The peer as the user named it.
    pub target: &'a str,
    /// The comparison group or sweep the run belongs to.
    pub group: Option<i64>,
    /// The run's role in its group (a path name, "clients=4") or the user's label.
    pub label: Option<&'a str>,
}

/// Stores any measured result: the one place a history record is built.
pub fn store_record(
    store: Option<&Store>,
    rec: &dyn RunRecord,
    at: Place<'_>,
) -> Result<Option<i64>, Failure> {
    store_run(
        store,
        &NewRun {
            kind: rec.kind(),
            target: at.target.to_string(),
            started_unix_ms: rec.started_unix_ms(),
            headline: rec.headline(),
            headline_value: rec.headline_value(),
            interrupted: rec.interrupted(),
            document: rec.document(),
            group_id: at.group,
            label: at.label.map(str::to_string),
        },
    )
}

/// Stores a run. A storage failure does not end the command: the document is kept as a
/// JSON file and the failure reported after the output, with exit 5 (`unsaved`).
#[allow(clippy::unnecessary_wraps)] // every subcommand calls it with `?`; kept for them
fn store_run(store: Option<&Store>, run: &NewRun) -> Result<Option<i64>, Failure> {
    let Some(s) = store else { return Ok(None) };
    match s.insert(run) {
        Ok(id) => {
            crate::out::stored(id);
            Ok(Some(id))
        }
        Err(e) => {
            crate::unsaved::keep(s.path(), run.kind, &run.document, &e.into());
            Ok(None)
        }
    }
}
