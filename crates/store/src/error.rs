//! Errors of the history store: each names the operation and the database file.

use std::path::PathBuf;

/// A failure of the history database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory that should hold the database could not be created.
    #[error("cannot create the history directory {path}")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file exists but is not a SQLite database (or is damaged beyond reading).
    #[error(
        "{path} is not an mtuperf history database (not SQLite, or corrupt); \
         move it away or pass another path"
    )]
    NotADatabase {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    /// A SQLite database, but someone else's: it has tables and no mtuperf schema version.
    #[error(
        "{path} is a SQLite database but not an mtuperf history; \
         pass another path rather than writing into it"
    )]
    Foreign { path: PathBuf },
    /// The database was written by a newer mtuperf whose schema this one does not know.
    #[error(
        "history database {path} has schema version {found}, newer than this mtuperf \
         understands ({supported}); upgrade mtuperf or use another database"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        supported: i64,
    },
    /// The database holds runs of an older mtuperf, whose documents this one does not
    /// read (before 1.0 the documents change without compatibility defaults).
    #[error(
        "history database {path} has schema version {found}, written by an older mtuperf \
         whose run documents this one does not read (it reads version {reads}); move the \
         file aside (a new history is created in its place) or pass --db PATH for a new one"
    )]
    TooOld {
        path: PathBuf,
        found: i64,
        reads: i64,
    },
    /// A run refers to a group that does not exist, or a group id is unknown.
    #[error("no comparison group with id {id} in {path}")]
    NoSuchGroup { path: PathBuf, id: i64 },
    /// A row whose kind names no kind this build knows (written by another mtuperf, or
    /// by hand): the row, the name, and the kinds known.
    #[error("history database {path}: {row} has kind {kind:?}, which this mtuperf does not know (it knows {known})", kind = kind.0, known = crate::RunKind::allowed())]
    UnknownKind {
        path: PathBuf,
        row: crate::Row,
        kind: crate::UnknownKind,
    },
    /// Any other SQLite failure, with what we were doing.
    #[error("history database {path}: {op} failed")]
    Sqlite {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
}

impl StoreError {
    /// Classify a SQLite error: "not a database" / "corrupt" become [`StoreError::NotADatabase`].
    pub(crate) fn sqlite(
        op: &'static str,
        path: &std::path::Path,
        source: rusqlite::Error,
    ) -> Self {
        let path = path.to_path_buf();
        if let rusqlite::Error::FromSqlConversionFailure(_, _, e) = &source {
            if let Some(bad) = e.downcast_ref::<crate::query::BadKind>() {
                return StoreError::UnknownKind {
                    path,
                    row: bad.row,
                    kind: bad.kind.clone(),
                };
            }
        }
        match source.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt) => {
                StoreError::NotADatabase { path, source }
            }
            _ => StoreError::Sqlite { op, path, source },
        }
    }
}
