//! The history store through its public API, on in-memory databases.

use mtuperf_store::{Filter, NewRun, Row, RunKind, Store, StoreError};

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

fn ids(runs: &[mtuperf_store::StoredRun]) -> Vec<i64> {
    runs.iter().map(|r| r.id).collect()
}

#[test]
fn round_trip_keeps_every_field() {
    let store = Store::open_in_memory().unwrap();
    let group = store.create_group(RunKind::Compare, "{}").unwrap();
    let mut new = run("rr", "node2:7878", 1_700_000_000_123);
    new.headline_value = None;
    new.interrupted = true;
    new.group_id = Some(group);
    new.label = Some("std".to_owned());
    let id = store.insert(&new).unwrap();
    let got = store.get(id).unwrap().unwrap();
    assert_eq!(got.id, id);
    assert_eq!(
        (
            got.kind,
            got.target,
            got.started_unix_ms,
            got.headline,
            got.headline_value
        ),
        (
            new.kind,
            new.target,
            new.started_unix_ms,
            new.headline,
            new.headline_value
        )
    );
    assert_eq!(
        (got.interrupted, got.document, got.group_id, got.label),
        (true, new.document, Some(group), Some("std".to_owned()))
    );
    assert_eq!(store.get(id + 1).unwrap(), None);
}

#[test]
fn list_filters_and_orders_newest_first() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.last().unwrap(), None);
    let a = store.insert(&run("stream", "node2", 1000)).unwrap();
    let b = store.insert(&run("rr", "node3-ib", 3000)).unwrap();
    let c = store.insert(&run("stream", "node3", 2000)).unwrap();
    let d = store.insert(&run("stream", "node3", 3000)).unwrap(); // same start as b: id breaks the tie

    let cases: Vec<(Filter, Vec<i64>)> = vec![
        (Filter::default(), vec![d, b, c, a]),
        (
            Filter {
                since_unix_ms: Some(2000),
                ..Filter::default()
            },
            vec![d, b, c],
        ),
        (
            Filter {
                target: Some("node3".into()),
                ..Filter::default()
            },
            vec![d, b, c],
        ),
        (
            Filter {
                target: Some("ib".into()),
                ..Filter::default()
            },
            vec![b],
        ),
        (
            Filter {
                target: Some("%".into()),
                ..Filter::default()
            },
            vec![],
        ),
        (
            Filter {
                kind: Some(RunKind::Stream),
                ..Filter::default()
            },
            vec![d, c, a],
        ),
        (
            Filter {
                ids: vec![a, c, 999],
                ..Filter::default()
            },
            vec![c, a],
        ),
        (
            Filter {
                limit: Some(2),
                ..Filter::default()
            },
            vec![d, b],
        ),
        (
            Filter {
                limit: Some(0),
                ..Filter::default()
            },
            vec![],
        ),
        (
            Filter {
                kind: Some(RunKind::Stream),
                since_unix_ms: Some(1500),
                limit: Some(1),
                ..Filter::default()
            },
            vec![d],
        ),
    ];
    for (filter, want) in cases {
        assert_eq!(ids(&store.list(&filter).unwrap()), want, "{filter:?}");
    }
    assert_eq!(store.last().unwrap().map(|r| r.id), Some(d));
}

#[test]
fn groups_keep_runs_in_insertion_order_and_finish() {
    let store = Store::open_in_memory().unwrap();
    let g = store
        .create_group(RunKind::Compare, r#"{"paths":["std","jumbo"]}"#)
        .unwrap();
    let other = store.create_group(RunKind::Compare, "{}").unwrap();
    let mut want = Vec::new();
    // Start times deliberately out of order: group order is insertion order.
    for (i, started) in [5000, 1000, 3000].into_iter().enumerate() {
        let mut r = run("stream", "node2", started);
        r.group_id = Some(g);
        r.label = Some(if i % 2 == 0 { "std" } else { "jumbo" }.to_owned());
        want.push(store.insert(&r).unwrap());
    }
    store.insert(&run("stream", "node2", 4000)).unwrap();
    assert_eq!(ids(&store.group_runs(g).unwrap()), want);
    assert!(store.group_runs(other).unwrap().is_empty());
    assert_eq!(
        store
            .list(&Filter {
                group_id: Some(g),
                ..Filter::default()
            })
            .unwrap()
            .len(),
        3
    );

    let before = store.group(g).unwrap().unwrap();
    assert_eq!(
        (before.kind, before.finished, before.summary_json),
        (RunKind::Compare, false, None)
    );
    assert_eq!(before.plan_json, r#"{"paths":["std","jumbo"]}"#);
    assert!(before.created_unix_ms > 1_600_000_000_000);
    store.finish_group(g, r#"{"rel":0.05}"#).unwrap();
    let after = store.group(g).unwrap().unwrap();
    assert!(after.finished);
    assert_eq!(after.summary_json.as_deref(), Some(r#"{"rel":0.05}"#));
    assert_eq!(store.group(9999).unwrap(), None);
}

#[test]
fn unknown_group_is_a_clear_error() {
    let store = Store::open_in_memory().unwrap();
    let mut r = run("stream", "node2", 1);
    r.group_id = Some(42);
    assert!(matches!(
        store.insert(&r),
        Err(StoreError::NoSuchGroup { id: 42, .. })
    ));
    assert!(matches!(
        store.finish_group(42, "{}"),
        Err(StoreError::NoSuchGroup { id: 42, .. })
    ));
}

#[test]
fn default_path_ends_in_mtuperf_history() {
    assert!(Store::default_path().ends_with("mtuperf/history.db"));
}

/// Every kind is stored under its name and read back as itself, for runs (and the
/// filter by kind) and for groups.
#[test]
fn every_run_kind_round_trips_under_its_name() {
    let store = Store::open_in_memory().unwrap();
    for (i, kind) in RunKind::ALL.into_iter().enumerate() {
        let id = store.insert(&run(kind.as_str(), "n", i as i64)).unwrap();
        assert_eq!(store.get(id).unwrap().unwrap().kind, kind);
        let only = store
            .list(&Filter {
                kind: Some(kind),
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(ids(&only), [id], "{kind}");
        let g = store.create_group(kind, "{}").unwrap();
        assert_eq!(store.group(g).unwrap().unwrap().kind, kind);
        assert_eq!(store.groups(kind, 10).unwrap().len(), 1, "{kind}");
        assert_eq!(kind.as_str().parse::<RunKind>(), Ok(kind));
        assert_eq!(kind.to_string(), kind.as_str());
    }
    let names: Vec<&str> = RunKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        ["stream", "rr", "path", "doctor", "compare", "udp", "mesh"]
    );
}

/// A row whose kind this build does not know (another mtuperf's, or written by hand)
/// is an error naming the row, the name and the kinds known: for a run read by id, the
/// newest, a list, and a group ("Compare" is not "compare": names are exact).
#[test]
fn a_row_of_an_unknown_kind_is_an_error_naming_it_and_the_known_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.db");
    let store = Store::open(&path).unwrap();
    let id = store.insert(&run("stream", "n", 1)).unwrap();
    let g = store.create_group(RunKind::Compare, "{}").unwrap();
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE runs SET kind = 'watch' WHERE id = ?1", [id])
        .unwrap();
    conn.execute("UPDATE groups SET kind = 'Compare' WHERE id = ?1", [g])
        .unwrap();
    let known = "stream, rr, path, doctor, compare, udp, mesh";
    for (err, row, name) in [
        (store.get(id).unwrap_err(), Row::Run(id), "watch"),
        (store.last().unwrap_err(), Row::Run(id), "watch"),
        (store.group(g).unwrap_err(), Row::Group(g), "Compare"),
        (
            store.list(&Filter::default()).unwrap_err(),
            Row::Run(id),
            "watch",
        ),
    ] {
        assert!(
            matches!(&err, StoreError::UnknownKind { row: r, kind, .. } if *r == row && kind.0 == name),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "history database {}: {row} has kind \"{name}\", which this mtuperf does not know (it knows {known})",
                path.display()
            )
        );
    }
}
