//! End-to-end tests of `mtuperf serve` + `mtuperf rr` as a user runs them: the JSON
//! document against its schema, one stored run per sweep step, the sweep table, the
//! agent's limits named in the error, the UDP size limit, and `--verify` failing the
//! command on a corrupted block.

use crate::agent_support;

use crate::inproc::{json_in, mtuperf_in};
use agent_support::AgentProc;

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../../../schemas/rr.schema.json");
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

/// The answers a requester's `counts` received of those the responder sent: its
/// blocks, and over UDP its late blocks (answers to requests counted lost and
/// re-sent; over TCP a late block is a block too). Equal to the responder's
/// `responses` when nothing went missing, even after a stall past the timeout.
fn answered(counts: &serde_json::Value, proto: &str) -> serde_json::Value {
    let n = |k: &str| counts[k].as_u64().unwrap();
    let late = if proto == "udp" { n("late") } else { 0 };
    (n("blocks") + late).into()
}

fn assert_valid(doc: &serde_json::Value) {
    let errors: Vec<String> = schema()
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:?}");
}

/// The rr runs stored in `db`, as `history --json` lists them.
fn stored_rr(db: &std::path::Path) -> Vec<serde_json::Value> {
    let h = mtuperf_in(db).args(["history", "--json"]).output().unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    rows.as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "rr")
        .cloned()
        .collect()
}

#[test]
fn sweep_json_is_valid_accounted_and_stored_per_step() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for proto in ["udp", "tcp"] {
        let doc = json_in(
            mtuperf_in(&db)
                .args(["rr", &agent.target(), "--proto", proto, "--time", "500ms"])
                .args(["--clients", "1,4", "--verify", "--json"]),
        );
        assert_valid(&doc);
        let steps = doc["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2);
        for s in steps {
            let c = &s["result"]["client"]["counts"];
            let a = &s["result"]["agent"];
            assert!(c["blocks"].as_u64().unwrap() > 0);
            assert_eq!(c["requests_sent"], a["requests"], "{proto}");
            assert_eq!(answered(c, proto), a["responses"], "{proto}: {c}");
            assert_eq!(c["corrupt"], 0);
            assert!(s["run_id"].as_i64().is_some());
        }
        let sweep = &doc["sweep"];
        assert_eq!(sweep["points"][1]["clients"], 4);
        assert!(sweep["knee_rule"].as_str().unwrap().contains("10%"));
    }
    // Four stored runs (2 steps × 2 protocols), each shown again as rr text.
    let rr = stored_rr(&db);
    assert_eq!(rr.len(), 4);
    let id = rr[0]["id"].as_i64().unwrap().to_string();
    let s = mtuperf_in(&db).args(["show", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(
        text.contains("block latency") && text.contains("p99.9"),
        "{text}"
    );
}

#[test]
fn text_sweep_marks_the_rule() {
    let agent = AgentProc::start(&[]);
    let out = mtuperf_in(&tempfile::tempdir().unwrap().path().join("h.db"))
        .args([
            "--no-store",
            "rr",
            &agent.target(),
            "--time",
            "300ms",
            "--clients",
            "1,2,4",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("clients    blocks/s"), "{text}");
    assert!(
        text.contains("knee = the load ending the last step"),
        "{text}"
    );
    assert_eq!(text.matches("mtuperf rr:").count(), 3);
}

#[test]
fn limits_are_named_and_udp_size_refused_up_front() {
    let agent = AgentProc::start(&["--max-workers", "2", "--max-clients", "8"]);
    let db = tempfile::tempdir().unwrap().path().join("h.db");
    let out = mtuperf_in(&db)
        .args([
            "--no-store",
            "rr",
            &agent.target(),
            "--time",
            "300ms",
            "--workers",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--max-workers") && err.contains("asked 3, allowed 2"),
        "{err}"
    );
    let out = mtuperf_in(&db)
        .args([
            "--no-store",
            "rr",
            &agent.target(),
            "--time",
            "300ms",
            "--clients",
            "9",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-clients"));
    let out = mtuperf_in(&db)
        .args(["--no-store", "rr", &agent.target(), "--block", "64K"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("65507") && err.contains("--proto tcp"),
        "{err}"
    );
}

#[test]
fn verify_fails_the_command_on_a_corrupted_block() {
    let agent = AgentProc::start(&["--test-hooks"]);
    let out = mtuperf_in(&tempfile::tempdir().unwrap().path().join("h.db"))
        .args([
            "--no-store",
            "rr",
            &agent.target(),
            "--time",
            "300ms",
            "--verify",
        ])
        .args(["--hook-corrupt", "10", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["steps"][0]["result"]["client"]["counts"]["corrupt"], 1);
}

/// `--bidir`: a two-step TCP sweep and a UDP step, each step with both directions in
/// the JSON (accounting closed in each), one stored run per step, both in `show`.
#[test]
fn bidir_json_has_both_directions_and_each_step_is_stored() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for (proto, clients, steps) in [("tcp", "1,2", 2), ("udp", "2", 1)] {
        let doc = json_in(
            mtuperf_in(&db)
                .args(["rr", &agent.target(), "--bidir", "--proto", proto])
                .args([
                    "--time",
                    "500ms",
                    "--clients",
                    clients,
                    "--verify",
                    "--json",
                ]),
        );
        assert_valid(&doc);
        let got = doc["steps"].as_array().unwrap();
        assert_eq!(got.len(), steps, "{proto}");
        for s in got {
            let r = &s["result"];
            let (c, a) = (&r["client"]["counts"], &r["agent"]);
            assert!(c["blocks"].as_u64().unwrap() > 0);
            assert_eq!(c["requests_sent"], a["requests"], "{proto} forward");
            assert_eq!(answered(c, proto), a["responses"], "{proto} forward: {c}");
            let (q, p) = (&r["reverse"]["requester"], &r["reverse"]["responder"]);
            assert!(q["counts"]["blocks"].as_u64().unwrap() > 0, "{proto} {q}");
            assert_eq!(
                q["counts"]["requests_sent"], p["requests"],
                "{proto} reverse"
            );
            assert_eq!(
                answered(&q["counts"], proto),
                p["responses"],
                "{proto} reverse"
            );
            assert_eq!(q["counts"]["lost"], 0);
            assert_eq!(q["latency"]["count"], q["counts"]["blocks"]);
            assert!(s["metrics"]["reverse"]["blocks_per_s"].as_f64().unwrap() > 0.0);
            assert!(r["request"]["bidir"]["port"].as_u64().unwrap() > 0);
        }
    }
    let ids: Vec<String> = stored_rr(&db)
        .iter()
        .map(|r| r["id"].as_i64().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 3, "one stored run per step");
    let s = mtuperf_in(&db).args(["show", &ids[0]]).output().unwrap();
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(
        text.contains("client → agent") && text.contains("agent → client"),
        "{text}"
    );
    assert_eq!(text.matches("block latency").count(), 2, "{text}");
}

#[test]
fn own_cpu_of_both_ends_is_in_json_text_and_the_stored_run() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let doc = json_in(
        mtuperf_in(&db)
            .args(["rr", &agent.target(), "--proto", "tcp", "--time", "500ms"])
            .args(["--clients", "4,16", "--threads", "2", "--json"]),
    );
    assert_valid(&doc);
    for s in doc["steps"].as_array().unwrap() {
        for end in ["client", "agent"] {
            let e = &s["metrics"][end];
            assert_eq!(e["tool_threads"], 2, "{end}: {e}");
            let own = e["tool_cpu_us_per_block"].as_f64().unwrap();
            let host = e["cpu_us_per_block"].as_f64().unwrap();
            // The tool's threads are part of the host: never more than it (µs
            // rounding of getrusage and /proc/stat ticks aside).
            assert!(
                own > 0.0 && own <= host * 1.1 + 1.0,
                "{end}: {own} vs {host}"
            );
            let busy = e["tool_cpu_pct"].as_f64().unwrap();
            assert!(busy > 0.0 && busy <= 101.0, "{end}: {busy}");
            let raw = &s["result"][end]["cpu"];
            assert_eq!(raw["threads"], 2, "{end}: {raw}");
        }
    }
    let p = &doc["sweep"]["points"][1];
    assert!(p["client_tool_cpu_us_per_block"].as_f64().unwrap() > 0.0);
    assert!(p["agent_tool_cpu_us_per_block"].as_f64().unwrap() > 0.0);
    // The stored run shows the same figures as text.
    let h = mtuperf_in(&db)
        .args(["history", "--json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    let id = rows[0]["id"].as_i64().unwrap().to_string();
    let s = mtuperf_in(&db).args(["show", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&s.stdout);
    assert_eq!(text.matches("mtuperf's own 2 threads").count(), 2, "{text}");
}

#[test]
fn threads_flag_is_range_checked_by_name() {
    let out = mtuperf_in(&tempfile::tempdir().unwrap().path().join("h.db"))
        .args(["rr", "127.0.0.1:1", "--threads", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--threads") && err.contains("1..=256"),
        "{err}"
    );
}

#[test]
fn label_is_stored_with_every_step_and_defaults_to_the_client_count() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for label in [Some("jumbo"), None] {
        let mut cmd = mtuperf_in(&db);
        cmd.args(["rr", &agent.target(), "--time", "300ms", "--clients", "1,2"]);
        if let Some(l) = label {
            cmd.args(["--label", l]);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let rr = stored_rr(&db);
    let mut labels: Vec<&str> = rr.iter().map(|r| r["label"].as_str().unwrap()).collect();
    labels.sort_unstable();
    assert_eq!(labels, ["clients=1", "clients=2", "jumbo", "jumbo"]);
}

#[test]
fn a_step_that_fails_leaves_the_steps_before_it_printed_and_stored() {
    // The agent takes 8 clients: the sweep's second step is refused by name.
    let agent = AgentProc::start(&["--max-clients", "8"]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let sweep = ["--time", "300ms", "--clients", "2,9"];
    let out = mtuperf_in(&db)
        .args(["rr", &agent.target()])
        .args(sweep)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("--max-clients"), "{err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_valid(&doc);
    let steps = doc["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 1, "{doc}");
    assert_eq!(steps[0]["result"]["request"]["clients"], 2);
    assert!(
        steps[0]["result"]["client"]["counts"]["blocks"]
            .as_u64()
            .unwrap()
            > 0
    );
    let id = steps[0]["run_id"].as_i64().unwrap();
    // Text: the measured step is printed with its run id, then the error.
    let out = mtuperf_in(&db)
        .args(["rr", &agent.target()])
        .args(sweep)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(4), "{text}");
    assert!(
        text.contains("block latency") && text.contains("stored as run"),
        "{text}"
    );
    let rr = stored_rr(&db);
    let ids: Vec<i64> = rr.iter().map(|r| r["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), 2, "one stored step per run: {rr:?}");
    assert!(ids.contains(&id));
}
