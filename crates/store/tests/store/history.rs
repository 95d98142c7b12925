//! The history store through its public API, on in-memory databases.

use mtuperf_store::{Filter, NewRun, Store, StoreError};

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

fn ids(runs: &[mtuperf_store::StoredRun]) -> Vec<i64> {
    runs.iter().map(|r| r.id).collect()
}

#[test]
fn round_trip_keeps_every_field() {
    let store = Store::open_in_memory().unwrap();
    let group = store.create_group("compare", "{}").unwrap();
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
                kind: Some("stream".into()),
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
                kind: Some("stream".into()),
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
        .create_group("compare", r#"{"paths":["std","jumbo"]}"#)
        .unwrap();
    let other = store.create_group("compare", "{}").unwrap();
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
        (before.kind.as_str(), before.finished, before.summary_json),
        ("compare", false, None)
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
