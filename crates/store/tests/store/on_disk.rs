//! The history store on disk: durability, concurrent writers, files that are not ours.

use mtuperf_store::{Filter, NewRun, Store, StoreError, SCHEMA_VERSION};

fn run(kind: &str, target: &str, started: i64) -> NewRun {
    NewRun {
        kind: kind.to_owned(),
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
