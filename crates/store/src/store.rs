//! The [`Store`]: one SQLite connection to the history database.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::StoreError;
use crate::model::{Filter, Group, NewRun, RunKind, StoredRun};
use crate::query::{group_from_row, run_from_row, GROUP_COLUMNS, RUN_COLUMNS};
use crate::{query, schema};

/// How long a writer waits for another process's lock before failing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The run history. Cheap to open; one per process (or per thread: it is `Send`, not `Sync`).
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
}

impl Store {
    /// `$XDG_DATA_HOME/mtuperf/history.db` when `XDG_DATA_HOME` is set to an absolute
    /// path, else `$HOME/.local/share/mtuperf/history.db` (relative to the current
    /// directory if `HOME` is unset too). Pure: the directory is created by [`Store::open`].
    pub fn default_path() -> PathBuf {
        history_path(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
    }

    /// Open the database at `path`, creating it, its parent directories and its schema if
    /// needed, and migrating an older schema. Fails clearly on a file that is not SQLite.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(|e| StoreError::sqlite("opening", path, e))?;
        Store::setup(conn, path.to_path_buf())
    }

    /// A private database that lives as long as the handle (tests, `--no-save` runs).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = PathBuf::from(":memory:");
        let conn =
            Connection::open_in_memory().map_err(|e| StoreError::sqlite("opening", &path, e))?;
        Store::setup(conn, path)
    }

    fn setup(conn: Connection, path: PathBuf) -> Result<Store, StoreError> {
        let at: &Path = &path;
        let err = |op| move |e| StoreError::sqlite(op, at, e);
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(err("setting the busy timeout"))?;
        // WAL lets readers and one writer work at once; synchronous=FULL fsyncs the WAL at
        // every commit, so an insert that returned survives a power loss (NORMAL would not).
        // Switching to WAL takes an exclusive lock, and SQLite returns SQLITE_BUSY at
        // once (the busy handler is not called for it) when a second handle on the same
        // file is opening at that moment: retry within the busy timeout.
        let until = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match conn
                .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
            {
                Ok(_) => break,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && std::time::Instant::now() < until =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) => return Err(err("enabling WAL")(e)),
            }
        }
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(err("setting synchronous"))?;
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(err("enabling foreign keys"))?;
        schema::migrate(&conn, &path)?;
        Ok(Store { conn, path })
    }

    /// The database file (`:memory:` for an in-memory store).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, op: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError + '_ {
        move |e| StoreError::sqlite(op, &self.path, e)
    }

    /// Save a run; returns its id. The run is on disk when this returns.
    pub fn insert(&self, run: &NewRun) -> Result<i64, StoreError> {
        let result = self.conn.execute(
            "INSERT INTO runs (kind, target, started_unix_ms, headline, headline_value, \
             interrupted, document, group_id, label) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                run.kind.as_str(),
                run.target,
                run.started_unix_ms,
                run.headline,
                run.headline_value,
                run.interrupted,
                run.document,
                run.group_id,
                run.label,
            ],
        );
        match (result, run.group_id) {
            (Ok(_), _) => Ok(self.conn.last_insert_rowid()),
            (Err(e), Some(id))
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::ConstraintViolation) =>
            {
                Err(StoreError::NoSuchGroup {
                    path: self.path.clone(),
                    id,
                })
            }
            (Err(e), _) => Err(self.err("saving a run")(e)),
        }
    }

    /// The run with this id, if any.
    pub fn get(&self, id: i64) -> Result<Option<StoredRun>, StoreError> {
        self.conn
            .query_row(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"),
                [id],
                run_from_row,
            )
            .optional()
            .map_err(self.err("reading a run"))
    }

    /// Runs matching `filter`, newest first (by start time, then by id).
    pub fn list(&self, filter: &Filter) -> Result<Vec<StoredRun>, StoreError> {
        let (sql, args) = query::list_sql(filter);
        self.query_runs(&sql, rusqlite::params_from_iter(args))
    }

    /// The newest run, if any.
    pub fn last(&self) -> Result<Option<StoredRun>, StoreError> {
        let filter = Filter {
            limit: Some(1),
            ..Filter::default()
        };
        Ok(self.list(&filter)?.into_iter().next())
    }

    /// Start a group of runs (e.g. a compare) with its plan; returns the group id.
    pub fn create_group(&self, kind: RunKind, plan_json: &str) -> Result<i64, StoreError> {
        self.conn
            .execute(
                "INSERT INTO groups (kind, created_unix_ms, plan_json) VALUES (?1, ?2, ?3)",
                params![kind.as_str(), now_unix_ms(), plan_json],
            )
            .map_err(self.err("creating a group"))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The group with this id, if any.
    pub fn group(&self, id: i64) -> Result<Option<Group>, StoreError> {
        self.conn
            .query_row(
                &format!("SELECT {GROUP_COLUMNS} FROM groups WHERE id = ?1"),
                [id],
                group_from_row,
            )
            .optional()
            .map_err(self.err("reading a group"))
    }

    /// The groups of this kind (e.g. a compare), newest first, at most `limit`.
    pub fn groups(&self, kind: RunKind, limit: usize) -> Result<Vec<Group>, StoreError> {
        let sql = format!(
            "SELECT {GROUP_COLUMNS} FROM groups WHERE kind = ?1 \
             ORDER BY created_unix_ms DESC, id DESC LIMIT ?2"
        );
        let mut stmt = self
            .conn
            .prepare(&sql)
            .map_err(self.err("listing groups"))?;
        let rows = stmt
            .query_map(
                params![kind.as_str(), i64::try_from(limit).unwrap_or(i64::MAX)],
                group_from_row,
            )
            .map_err(self.err("listing groups"))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(self.err("listing groups"))
    }

    /// The runs of a group in the order they were saved (empty for an unknown group).
    pub fn group_runs(&self, id: i64) -> Result<Vec<StoredRun>, StoreError> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE group_id = ?1 ORDER BY id");
        self.query_runs(&sql, [id])
    }

    /// Record a group's summary and mark it finished (again: the last summary wins).
    pub fn finish_group(&self, id: i64, summary_json: &str) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE groups SET summary_json = ?1, finished = 1 WHERE id = ?2",
                params![summary_json, id],
            )
            .map_err(self.err("finishing a group"))?;
        if changed == 0 {
            return Err(StoreError::NoSuchGroup {
                path: self.path.clone(),
                id,
            });
        }
        Ok(())
    }

    fn query_runs(
        &self,
        sql: &str,
        args: impl rusqlite::Params,
    ) -> Result<Vec<StoredRun>, StoreError> {
        let mut stmt = self.conn.prepare(sql).map_err(self.err("listing runs"))?;
        let rows = stmt
            .query_map(args, run_from_row)
            .map_err(self.err("listing runs"))?;
        rows.collect::<Result<_, _>>()
            .map_err(self.err("listing runs"))
    }
}

fn history_path(xdg_data_home: Option<OsString>, home: Option<OsString>) -> PathBuf {
    let xdg = xdg_data_home.map(PathBuf::from).filter(|p| p.is_absolute());
    let home = home
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".local").join("share"));
    xdg.or(home)
        .unwrap_or_default()
        .join("mtuperf")
        .join("history.db")
}

fn now_unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_path_follows_xdg_then_home() {
        let os = |s: &str| Some(OsString::from(s));
        let cases = [
            (os("/xdg"), os("/home/u"), "/xdg/mtuperf/history.db"),
            (
                os("relative"),
                os("/home/u"),
                "/home/u/.local/share/mtuperf/history.db",
            ),
            (
                os(""),
                os("/home/u"),
                "/home/u/.local/share/mtuperf/history.db",
            ),
            (
                None,
                os("/home/u"),
                "/home/u/.local/share/mtuperf/history.db",
            ),
            (None, None, "mtuperf/history.db"),
        ];
        for (xdg, home, want) in cases {
            assert_eq!(
                history_path(xdg.clone(), home.clone()),
                PathBuf::from(want),
                "{xdg:?} {home:?}"
            );
        }
    }
}
