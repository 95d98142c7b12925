//! The run-record layer end to end: every stored kind (stream, rr, path, doctor) is
//! shown again and exported; rr rows carry their own columns; history and export JSON
//! and the JSON errors match their schemas; history and export say clearly what they
//! did not find.

use crate::agent_support;

use crate::inproc::{json_in, mtuperf_in, Cli};
use agent_support::AgentProc;
use serde_json::Value;

fn assert_schema(name: &str, doc: &Value) {
    let path = format!("{}/../../schemas/{name}", env!("CARGO_MANIFEST_DIR"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{name}: {errors:?}\n{doc}");
}

fn stdout(cmd: &mut Cli) -> (Option<i32>, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn every_stored_kind_is_shown_exported_and_listed() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let t = agent.target();
    let (code, text) = stdout(mtuperf_in(&db).args(["rr", &t, "--time", "300ms", "--block", "8K"]));
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("stored as run 1"), "{text}");
    let (code, text) = stdout(mtuperf_in(&db).args(["stream", &t, "--time", "300ms"]));
    assert_eq!(code, Some(0), "{text}");
    let (_, text) = stdout(mtuperf_in(&db).args(["path", &t]));
    assert!(text.contains("stored as run 3"), "{text}");
    let (_, text) = stdout(mtuperf_in(&db).args(["doctor", "--iface", "lo", "--sample", "0s"]));
    assert!(text.contains("mtuperf doctor"), "{text}");

    // show: text and the stored document, for each kind.
    for (id, kind) in [(1, "rr"), (2, "stream"), (3, "path"), (4, "doctor")] {
        let (code, text) = stdout(mtuperf_in(&db).args(["show", &id.to_string()]));
        assert_eq!(code, Some(0), "{kind}: {text}");
        assert!(!text.contains("of kind"), "{kind} shown raw: {text}");
        let doc = json_in(mtuperf_in(&db).args(["show", &id.to_string(), "--format", "json"]));
        assert_schema(&format!("{kind}.schema.json"), &doc);
    }

    // export: rr rows have block, request, clients, proto and latency columns.
    let (code, csv) = stdout(mtuperf_in(&db).args(["export", "--csv"]));
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    let doc = json_in(mtuperf_in(&db).args(["export", "--json"]));
    assert_schema("export.schema.json", &doc);
    let rr = &doc["runs"][0];
    assert_eq!(rr["kind"], "rr");
    assert_eq!(rr["block"], 8192);
    assert_eq!(rr["clients"], 1);
    assert_eq!(rr["proto"], "udp");
    assert!(rr["request"].as_u64().unwrap() > 0);
    for f in ["p50_ns", "p99_ns", "p999_ns", "blocks_per_s", "lost_pct"] {
        assert!(rr[f].as_f64().is_some(), "{f}: {rr}");
        assert!(header.contains(&f), "{f} not a CSV column: {}", lines[0]);
    }
    assert!(rr["p50_ns"].as_f64() <= rr["p999_ns"].as_f64());
    assert!(doc["runs"][1]["goodput_bps"].as_f64().unwrap() > 0.0);

    // history: rows with their schema, a group column, kinds by name.
    let rows = json_in(mtuperf_in(&db).args(["history", "--json"]));
    assert_schema("history.schema.json", &rows);
    assert_eq!(rows.as_array().unwrap().len(), 4);
    let (_, text) = stdout(mtuperf_in(&db).args(["history", "--kind", "rr"]));
    assert!(text.lines().next().unwrap().contains("group"), "{text}");
    assert_eq!(text.lines().count(), 2, "{text}");
}

#[test]
fn missing_runs_and_unknown_kinds_are_errors_and_json_errors_are_documents() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let (code, _) = stdout(mtuperf_in(&db).args(["export", "9999"]));
    assert_eq!(code, Some(2));
    let out = mtuperf_in(&db)
        .args(["export", "--kind", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stream, rr, path, doctor"));
    let (code, text) = stdout(mtuperf_in(&db).args(["export", "--json", "9999"]));
    assert_eq!(code, Some(2));
    let err: Value = serde_json::from_str(&text).unwrap();
    assert_schema("error.schema.json", &err);
    assert!(err["error"].as_str().unwrap().contains("9999"), "{err}");
    assert_eq!(err["exit"], 2);

    let (_, text) = stdout(mtuperf_in(&db).args(["history", "--limit", "0"]));
    assert!(text.contains("--limit 0"), "{text}");
    let (_, text) = stdout(mtuperf_in(&db).args(["history", "--kind", "path"]));
    assert!(text.contains("match the filters"), "{text}");
    let (code, text) = stdout(mtuperf_in(&db).args(["history", "--kind", "compare", "--json"]));
    assert_eq!(code, Some(0));
    assert_eq!(text.trim(), "[]");
}

#[test]
fn a_stored_run_of_a_kind_this_build_does_not_know_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let store = mtuperf_store::Store::open(&db).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    let now_ms = now.unwrap().as_millis() as i64;
    let run = |kind| mtuperf_store::NewRun {
        kind,
        target: "n2".into(),
        started_unix_ms: now_ms - 1000,
        headline: "-".into(),
        headline_value: None,
        interrupted: false,
        document: "{}".into(),
        group_id: None,
        label: Some("watch".into()),
    };
    let id = store.insert(&run(mtuperf_store::RunKind::Path)).unwrap();
    drop(store);
    // A newer mtuperf's kind, as it would store it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute("UPDATE runs SET kind = 'future' WHERE id = ?1", [id])
        .unwrap();
    drop(conn);
    let unknown = format!(
        r#"run {id} has kind "future", which this mtuperf does not know (it knows stream, rr, path, doctor, compare, udp, mesh)"#
    );
    for args in [
        vec!["report".to_string(), id.to_string()],
        vec!["report".into(), "--since".into(), "1h".into()],
        vec!["export".into(), "--format".into(), "openmetrics".into()],
    ] {
        let out = mtuperf_in(&db).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(err.contains(&unknown), "{args:?}: {err}");
    }
}
