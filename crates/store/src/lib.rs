//! The mtuperf run history.
//!
//! Every run (stream, rr, path, doctor, compare) is saved in a SQLite database before the
//! next one starts, so an interrupted session loses nothing. A comparison is a *group*:
//! its plan is stored first, each of its runs points at it, and the summary is written
//! when it finishes, so a compare can be resumed from the runs already stored.
//!
//! * [`Store`]: open (or create and migrate) the database; insert, get, list runs; groups.
//! * [`NewRun`], [`StoredRun`], [`Group`], [`Filter`]: plain data in and out.
//! * [`StoreError`]: what failed, with the operation and the database path.
//!
//! Durability and concurrency: the database is in WAL mode with `synchronous=FULL`, so a
//! write is on disk when the call returns, even across a power loss. Several processes
//! may write at once; a writer waits up to 5 s for the lock ([`BUSY_TIMEOUT`]).
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod error;
mod query;
mod retain;
mod schema;
mod store;

pub use error::StoreError;
pub use schema::SCHEMA_VERSION;
pub use store::{Store, BUSY_TIMEOUT};

/// A run to save. `document` is the run's full JSON document, as the report layer emits it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    /// "stream", "rr", "path", "doctor" or "compare".
    pub kind: String,
    /// The peer as the user named it (host, host:port, address).
    pub target: String,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: i64,
    /// One line for lists, e.g. "9.41 Gbit/s".
    pub headline: String,
    /// The number behind the headline, in the run kind's base unit, when there is one.
    pub headline_value: Option<f64>,
    /// The run was stopped early (Ctrl-C, timeout); its numbers cover less than planned.
    pub interrupted: bool,
    /// The run's full JSON document.
    pub document: String,
    /// The comparison group this run belongs to.
    pub group_id: Option<i64>,
    /// The run's role inside its group, e.g. the path name in a compare, "std".
    pub label: Option<String>,
}

/// A saved run: its id and everything it was saved with.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub id: i64,
    pub kind: String,
    pub target: String,
    pub started_unix_ms: i64,
    pub headline: String,
    pub headline_value: Option<f64>,
    pub interrupted: bool,
    pub document: String,
    pub group_id: Option<i64>,
    pub label: Option<String>,
}

/// A group of runs, e.g. one `compare`: its plan, and its summary once finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub id: i64,
    pub kind: String,
    /// Wall-clock creation time, milliseconds since the Unix epoch.
    pub created_unix_ms: i64,
    pub plan_json: String,
    /// Set by [`Store::finish_group`].
    pub summary_json: Option<String>,
    pub finished: bool,
}

/// Which runs [`Store::list`] returns. Every field narrows; the default is everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Runs started at or after this time (ms since the Unix epoch).
    pub since_unix_ms: Option<i64>,
    /// Runs whose target contains this text (case-sensitive substring).
    pub target: Option<String>,
    /// Runs of exactly this kind.
    pub kind: Option<String>,
    /// Runs of this group.
    pub group_id: Option<i64>,
    /// Only these ids; empty means any id.
    pub ids: Vec<i64>,
    /// At most this many runs (the newest).
    pub limit: Option<usize>,
}
