//! Schema and migrations, versioned with `PRAGMA user_version`.
//!
//! `MIGRATIONS[i]` takes the database from version `i` to `i + 1`. A new schema change is
//! a new entry at the end; existing entries are never edited, since databases in the field
//! have already run them.
//!
//! A version also says which run documents the history holds. A history older than
//! [`READS_FROM`] holds documents of schemas this build does not read (before 1.0 the
//! documents change without compatibility defaults): it is refused by name, unless it
//! holds nothing, when it is simply brought up to date.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use crate::error::StoreError;

const MIGRATIONS: &[&str] = &[
    // 0 -> 1: runs and comparison groups.
    "CREATE TABLE groups (
         id              INTEGER PRIMARY KEY AUTOINCREMENT,
         kind            TEXT    NOT NULL,
         created_unix_ms INTEGER NOT NULL,
         plan_json       TEXT    NOT NULL,
         summary_json    TEXT,
         finished        INTEGER NOT NULL DEFAULT 0
     );
     CREATE TABLE runs (
         id              INTEGER PRIMARY KEY AUTOINCREMENT,
         kind            TEXT    NOT NULL,
         target          TEXT    NOT NULL,
         started_unix_ms INTEGER NOT NULL,
         headline        TEXT    NOT NULL,
         headline_value  REAL,
         interrupted     INTEGER NOT NULL,
         document        TEXT    NOT NULL,
         group_id        INTEGER REFERENCES groups(id),
         label           TEXT
     );
     CREATE INDEX runs_by_start ON runs(started_unix_ms, id);
     CREATE INDEX runs_by_group ON runs(group_id, id);",
    // 1 -> 2: the same tables; the documents are of the schemas written since
    // (mtuperf.stream/3, stream-udp/3, rr/3, path/3, doctor/2, mesh/5, compare/2:
    // every field written, none read as a default), so a version-1 history with runs
    // is refused rather than read.
    "",
];

/// The oldest history version whose documents this build reads.
pub const READS_FROM: i64 = 2;

/// The schema version this build writes and understands.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Bring the database up to [`SCHEMA_VERSION`].
///
/// Runs inside an IMMEDIATE transaction and re-reads the version inside it, so two
/// processes opening a new file at once migrate it exactly once.
pub(crate) fn migrate(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let err = |op| move |e| StoreError::sqlite(op, path, e);
    let version = user_version(conn).map_err(err("reading the schema version"))?;
    if version == SCHEMA_VERSION {
        return Ok(());
    }
    check_not_too_new(version, path)?;
    let tx = rusqlite::Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(err("locking for migration"))?;
    let version = user_version(&tx).map_err(err("reading the schema version"))?;
    check_not_too_new(version, path)?;
    if version == 0 && has_tables(&tx).map_err(err("inspecting the schema"))? {
        return Err(StoreError::Foreign {
            path: path.to_path_buf(),
        });
    }
    if (1..READS_FROM).contains(&version) && !is_empty(&tx).map_err(err("counting the runs"))? {
        return Err(StoreError::TooOld {
            path: path.to_path_buf(),
            found: version,
            reads: SCHEMA_VERSION,
        });
    }
    let start = usize::try_from(version).unwrap_or(0);
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(start) {
        tx.execute_batch(sql).map_err(err("migrating the schema"))?;
        tx.pragma_update(None, "user_version", i as i64 + 1)
            .map_err(err("recording the schema version"))?;
    }
    tx.commit().map_err(err("committing the migration"))
}

fn user_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// A database at version 0 should be empty: tables mean someone else's SQLite file.
fn has_tables(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name NOT LIKE 'sqlite_%')",
        [],
        |row| row.get(0),
    )
}

/// A history with no run and no comparison group.
fn is_empty(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT NOT EXISTS (SELECT 1 FROM runs) AND NOT EXISTS (SELECT 1 FROM groups)",
        [],
        |row| row.get(0),
    )
}

fn check_not_too_new(found: i64, path: &Path) -> Result<(), StoreError> {
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}
