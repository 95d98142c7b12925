//! `stream --udp` end to end over loopback: the JSON document validates against its
//! schema, sent = received + lost holds exactly, the run is stored as kind `udp` and
//! `show`/`history`/`export` read it back, a rate list sweeps and reports a knee, and
//! the agent's --max-rate refuses a faster request.

use crate::agent_support;

use crate::inproc::{json_in, mtuperf_in};
use agent_support::AgentProc;

fn validate(doc: &serde_json::Value) {
    let text = include_str!("../../../../schemas/stream-udp.schema.json");
    let schema: serde_json::Value = serde_json::from_str(text).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:?}");
}

fn identity_holds(run: &serde_json::Value) {
    for d in run["metrics"]["directions"].as_array().unwrap() {
        let (sent, recv, lost) = (
            d["sent"].as_u64().unwrap(),
            d["received"].as_u64().unwrap(),
            d["lost"].as_u64().unwrap(),
        );
        assert!(sent > 0, "{d}");
        assert_eq!(sent, recv + lost, "{d}");
        assert_eq!(d["exact"], true, "{d}");
    }
}

#[test]
fn json_validates_accounts_exactly_and_is_stored_as_udp() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let doc = json_in(mtuperf_in(&db).args([
        "stream",
        &agent.target(),
        "--udp",
        "--rate",
        "100M",
        "--time",
        "500ms",
        "--bidir",
        "--interval",
        "100ms",
        "--json",
    ]));
    validate(&doc);
    assert_eq!(doc["schema"], "mtuperf.stream-udp/5");
    let run = &doc["runs"][0];
    assert_eq!(run["metrics"]["directions"].as_array().unwrap().len(), 2);
    identity_holds(run);
    let id = run["run_id"].as_i64().expect("stored run id");

    let h = mtuperf_in(&db)
        .args(["history", "--json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    assert_eq!(rows[0]["id"].as_i64(), Some(id));
    assert_eq!(rows[0]["kind"], "udp");
    let s = mtuperf_in(&db)
        .args(["show", &id.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(s.status.success(), "{text}");
    assert!(text.contains("datagrams    sent"), "{text}");
    assert!(text.contains("IP fragments created per datagram"), "{text}");
    let e = mtuperf_in(&db)
        .args(["export", "--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&e.stdout);
    assert!(e.status.success() && csv.contains("udp"), "{csv}");
}

#[test]
fn text_says_what_it_counts_and_a_rate_list_finds_a_knee() {
    let agent = AgentProc::start(&["--max-rate", "400M"]);
    let none = std::path::Path::new("/nonexistent/never.db");
    let out = mtuperf_in(none)
        .args([
            "--no-store",
            "stream",
            &agent.target(),
            "--udp",
            "--rate",
            "50M",
            "--time",
            "300ms",
            "--reverse",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for needle in [
        "agent → client (sender agent, receiver client)",
        "(agent's count)",
        "(client, distinct)",
        "client's Udp RcvbufErrors",
        "agent's Ip FragCreates",
        "RFC 3550, at client",
    ] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
    let doc = json_in(mtuperf_in(none).args([
        "--no-store",
        "stream",
        &agent.target(),
        "--udp",
        "--rate",
        "20M,50M",
        "--time",
        "300ms",
        "--json",
    ]));
    validate(&doc);
    let sweep = &doc["sweep"];
    assert_eq!(sweep["steps"].as_array().unwrap().len(), 2);
    assert_eq!(sweep["max_loss_pct"], 0.1);
    for run in doc["runs"].as_array().unwrap() {
        identity_holds(run);
    }
    // Above the agent's --max-rate: refused, naming the limit.
    let out = mtuperf_in(none)
        .args([
            "--no-store",
            "stream",
            &agent.target(),
            "--udp",
            "--rate",
            "1G",
            "--time",
            "300ms",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("max-rate"), "{err}");
}

#[test]
fn bad_udp_flags_are_usage_errors() {
    let none = std::path::Path::new("/nonexistent/never.db");
    for (args, needle) in [
        (&["--udp", "--rate", "fast"][..], "or max"),
        (&["--rate", "1G"][..], "--udp"),
        (&["--udp", "--mss", "1000"][..], "--mss"),
        (&["--udp", "--max-loss", "200"][..], "0 to 100"),
        (&["--udp", "--block", "128K"][..], "40 to 65507"),
    ] {
        let out = mtuperf_in(none)
            .args([&["--no-store", "stream", "127.0.0.1:1"][..], args].concat())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{needle:?} in {err}");
    }
}

#[test]
fn compare_runs_udp_cells_and_the_report_includes_them() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let text = include_str!("../../../../schemas/compare.schema.json");
    let schema: serde_json::Value = serde_json::from_str(text).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    // Both "paths" are the same loopback agent: bookkeeping, not speed.
    let doc = json_in(mtuperf_in(&db).args([
        "compare",
        "--path",
        &format!("a={}", agent.target()),
        "--path",
        &format!("b={}", agent.target()),
        "--tests",
        "udp",
        "--time",
        "200ms",
        "--repeat",
        "2",
        "--force",
        "--json",
    ]));
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema: {errors:?}");
    let rows = doc["runs"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        assert_eq!(r["test"], "udp");
        assert!(r["goodput_bps"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["loss_pct"].as_f64().is_some(), "{r}");
        assert!(r["run_id"].as_i64().is_some(), "{r}");
    }
    let figures: Vec<&str> = doc["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["figure"].as_str())
        .collect();
    assert!(figures.contains(&"goodput"), "{figures:?}");
    // The stored repetitions are udp runs; the group's report renders them.
    let group = doc["group_id"].as_i64().expect("group id");
    let h = mtuperf_in(&db)
        .args(["history", "--kind", "udp", "--json"])
        .output()
        .unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 4, "{listed}");
    let html = dir.path().join("r.html");
    let out = mtuperf_in(&db)
        .args(["report", "--compare", &group.to_string(), "-o"])
        .arg(&html)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("udp"), "the report names the udp cells");
}
