//! The history store on disk: durability, concurrent writers, files that are not ours.

use mtuperf_store::{Filter, NewRun, Store, StoreError, SCHEMA_VERSION};

fn run(kind: &str, target: &str, started: i64) -> NewRun {
    NewRun {
        kind: kind.parse().unwrap(),
        target: target.to_owned(),
        started_unix_ms: started,
        headline: "9.41 Gbit/s".to_owned(),
        headline_value: Some(9.41e9),
        interrupted: false,
        document: format!(r#"{{"schema":"mtuperf/1","kind":"{kind}"}}"#),
        group_id: None,
        label: None,
    }
}

#[test]
fn runs_survive_reopen_and_parent_dirs_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a").join("b").join("history.db");
    let id = {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.path(), path);
        store.insert(&run("path", "node4", 42)).unwrap()
    };
    let store = Store::open(&path).unwrap();
    assert_eq!(store.get(id).unwrap().unwrap().target, "node4");
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

#[test]
fn two_handles_on_one_file_insert_concurrently() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let path = path.clone();
            std::thread::spawn(move || {
                // Both open the fresh file at once too: the schema is created once.
                let store = Store::open(&path).unwrap();
                (0..50)
                    .map(|i| store.insert(&run("rr", &format!("w{w}"), i)).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut all: Vec<i64> = writers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 100);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.list(&Filter::default()).unwrap().len(), 100);
    assert_eq!(
        store
            .list(&Filter {
                target: Some("w1".into()),
                ..Filter::default()
            })
            .unwrap()
            .len(),
        50
    );
}

#[test]
fn a_file_that_is_not_sqlite_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    std::fs::write(
        &path,
        b"this is a text file, not a database, and it is long enough".repeat(100),
    )
    .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
    assert!(
        err.to_string().contains("not an mtuperf history database"),
        "{err}"
    );
}

#[test]
fn someone_elses_sqlite_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    assert!(matches!(
        Store::open(&path),
        Err(StoreError::Foreign { .. })
    ));
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    drop(Store::open(&path).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::TooNew { found, .. } if found == SCHEMA_VERSION + 1),
        "{err:?}"
    );
}

/// A history written by the build before the documents lost their compatibility
/// defaults (schema version 1, made here with that build's own SQL), holding a run.
fn version_1_history(path: &std::path::Path, with_run: bool) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute_batch(
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
         CREATE INDEX runs_by_group ON runs(group_id, id);
         PRAGMA user_version = 1;",
    )
    .unwrap();
    if with_run {
        conn.execute(
            "INSERT INTO runs (kind, target, started_unix_ms, headline, headline_value,
                 interrupted, document) VALUES ('rr', 'node4', 1, '38003 blocks/s', 38003.0, 0,
                 '{\"schema\":\"mtuperf.rr/2\",\"steps\":[]}')",
            [],
        )
        .unwrap();
    }
}

#[test]
fn a_history_of_runs_from_before_the_documents_changed_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    version_1_history(&path, true);
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::TooOld { found: 1, reads, .. } if reads == SCHEMA_VERSION),
        "{err:?}"
    );
    let text = err.to_string();
    for want in [
        path.display().to_string().as_str(),
        "schema version 1",
        &format!("reads version {SCHEMA_VERSION}"),
        "move the file aside",
        "--db",
    ] {
        assert!(text.contains(want), "{want:?} missing from: {text}");
    }
    // Refused, not changed: the file is still version 1 with its run.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    let runs: i64 = conn
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!((version, runs), (1, 1));
}

#[test]
fn an_empty_history_of_the_old_version_is_brought_up_to_date() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    version_1_history(&path, false);
    let store = Store::open(&path).unwrap();
    let id = store.insert(&run("stream", "node4", 42)).unwrap();
    assert_eq!(store.get(id).unwrap().unwrap().target, "node4");
    drop(store);
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}
