//! `mtuperf demo` in the lab runs its comparison with one fixed placement: the text
//! states the policy, and every stored repetition (stream and rr, both paths)
//! recorded both ends' test threads pinned to, and seen on, CPU 0 only (root needed;
//! otherwise it prints why and passes).
use crate::lab_support;

use std::process::Command;
use std::time::Duration;

use lab_support::{output_within, text, BIN};

fn json(db: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let mut c = Command::new(BIN);
    c.arg("--db").arg(db).args(args);
    let out = output_within(c, Duration::from_secs(30));
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One end's placement: pinned to CPU 0, and every sampled thread seen there only.
fn on_cpu0(p: &serde_json::Value, what: &str) {
    assert_eq!(p["pinned"], serde_json::json!([0]), "{what}: {p}");
    let threads = p["threads"].as_array().unwrap();
    assert!(!threads.is_empty(), "{what}: {p}");
    for t in threads {
        assert!(
            t["cpus"].as_array().unwrap().iter().all(|c| c[0] == 0),
            "{what}: {p}"
        );
    }
}

#[test]
fn demo_compares_with_one_fixed_placement_recorded_by_every_repetition() {
    require_lab!(false);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let mut cmd = Command::new(BIN);
    cmd.arg("--db")
        .arg(&db)
        .args(["demo", "--time", "300ms", "--repeat", "2", "-o"]);
    cmd.arg(dir.path().join("report.html"));
    let out = output_within(cmd, Duration::from_mins(4));
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(!all.contains("loopback"), "fell back to loopback:\n{all}");
    // The policy is stated, and each path's 4 repetitions (stream and rr, 2 each)
    // ran with both ends on CPU 0.
    assert!(
        all.contains(
            "placement (same: every repetition of every path with client and agent test threads on CPU 0)"
        ),
        "{all}"
    );
    for path in ["std", "jumbo"] {
        assert!(
            all.lines().any(|l| l.trim_start().starts_with(path)
                && l.contains("0 of 4 repetitions cross-CPU, 4 same CPU; client threads on CPU 0, agent's on CPU 0")),
            "{path}:\n{all}"
        );
    }
    // Every stored repetition's own record agrees.
    let rows = json(&db, &["history", "--json"]);
    let reps: Vec<&serde_json::Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["group_id"].is_null() && r["kind"] != "compare")
        .collect();
    assert_eq!(reps.len(), 8, "2 paths × 2 tests × 2 repetitions: {rows}");
    for r in reps {
        let id = r["id"].as_i64().unwrap().to_string();
        let doc = json(&db, &["show", &id, "--format", "json"]);
        let (result, summary) = match r["kind"].as_str() {
            Some("rr") => (&doc["steps"][0]["result"], &doc["steps"][0]["placement"]),
            Some("stream") => (&doc["runs"][0]["result"], &doc["runs"][0]["placement"]),
            other => panic!("unexpected kind {other:?}: {r}"),
        };
        let what = format!("run {id} ({})", r["kind"]);
        let client = if r["kind"] == "rr" {
            &result["client"]["placement"]
        } else {
            &result["client_placement"]
        };
        on_cpu0(client, &format!("{what} client"));
        on_cpu0(&result["agent"]["placement"], &format!("{what} agent"));
        assert_eq!(summary["shared_cpu"], true, "{what}: {summary}");
    }
}
