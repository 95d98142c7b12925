//! The mtuperf run history.
//!
//! Every run (stream, rr, path, doctor, compare) is saved in a SQLite database before the
//! next one starts, so an interrupted session loses nothing. A comparison is a *group*:
//! its plan is stored first, each of its runs points at it, and the summary is written
//! when it finishes, so a compare can be resumed from the runs already stored.
//!
//! * [`Store`]: open (or create and migrate) the database; insert, get, list runs; groups.
//! * [`NewRun`], [`StoredRun`], [`Group`], [`Filter`]: plain data in and out; [`RunKind`],
//!   what a run measured (kept as its name).
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
mod model;
mod query;
mod retain;
mod schema;
mod store;

pub use error::StoreError;
pub use model::{Filter, Group, NewRun, Row, RunKind, StoredRun, UnknownKind};
pub use schema::{READS_FROM, SCHEMA_VERSION};
pub use store::{Store, BUSY_TIMEOUT};
