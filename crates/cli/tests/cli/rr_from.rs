//! `mtuperf rr --from` end to end on loopback, no root needed (issue 20): three keyed
//! agents, one the target and two the client hosts; the JSON document against its
//! schema, the parts adding up, the step stored and shown again; a host the target
//! refuses once the sessions are open leaves the other's result printed, stored and
//! marked (exit 5); the flags refused by name before anything is contacted.

use crate::agent_support;

use crate::inproc::{json_in, mtuperf_in, Cli};
use agent_support::AgentProc;

/// A fresh key file in `dir`.
fn keygen(dir: &std::path::Path) -> std::path::PathBuf {
    let key = dir.join("key");
    let out = Cli::new()
        .args(["keygen", "-o"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(out.status.success());
    key
}

/// What `schemas/rr.schema.json` finds wrong with `doc`.
fn schema_errors(doc: &serde_json::Value) -> Vec<String> {
    let text = include_str!("../../../../schemas/rr.schema.json");
    jsonschema::validator_for(&serde_json::from_str(text).unwrap())
        .unwrap()
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

fn keyed_agents(key: &std::path::Path, n: usize) -> Vec<AgentProc> {
    let k = key.to_str().unwrap();
    (0..n)
        .map(|_| AgentProc::start(&["--key-file", k]))
        .collect()
}

#[test]
fn from_two_local_agents_is_valid_accounted_stored_and_shown() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path());
    let db = dir.path().join("h.db");
    let agents = keyed_agents(&key, 3);
    let from = format!("{},{}", agents[1].target(), agents[2].target());
    let doc = json_in(
        mtuperf_in(&db)
            .arg("--key-file")
            .arg(&key)
            .args(["rr", &agents[0].target(), "--from", &from])
            .args([
                "--proto",
                "tcp",
                "--clients",
                "3",
                "--time",
                "500ms",
                "--json",
            ]),
    );
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let step = &doc["steps"][0];
    let r = &step["result"];
    let parts = r["from"].as_array().unwrap();
    let clients: Vec<u64> = parts
        .iter()
        .map(|p| p["clients"].as_u64().unwrap())
        .collect();
    assert_eq!(clients, [2, 1]);
    let blocks: u64 = parts
        .iter()
        .map(|p| {
            p["result"]["requester"]["counts"]["blocks"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert!(blocks > 0);
    assert_eq!(r["client"]["counts"]["blocks"], blocks);
    assert_eq!(r["client"]["latency"]["count"], blocks);
    assert!(parts.iter().all(|p| p["accounted"] == true));
    let id = step["run_id"].as_i64().expect("stored").to_string();
    let shown = mtuperf_in(&db).args(["show", &id]).output().unwrap();
    let t = String::from_utf8_lossy(&shown.stdout);
    assert!(t.contains(&format!("from {}", agents[1].target())), "{t}");
    assert!(t.contains("total of 2 hosts"), "{t}");
}

/// 5 clients over two hosts (3 and 2) toward a target allowing 2 per session: the
/// first host is refused once every session is open, the second measures.
#[test]
fn a_host_the_target_refuses_leaves_the_others_result_printed_stored_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path());
    let db = dir.path().join("h.db");
    let k = key.to_str().unwrap();
    let target = AgentProc::start(&["--key-file", k, "--max-clients", "2"]);
    let hosts = keyed_agents(&key, 2);
    let (bad, good) = (hosts[0].target(), hosts[1].target());
    let from = format!("{bad},{good}");
    let run = |extra: &[&str]| {
        mtuperf_in(&db)
            .arg("--key-file")
            .arg(&key)
            .args(["rr", &target.target(), "--from", &from])
            .args(["--clients", "5", "--time", "500ms"])
            .args(extra)
            .output()
            .unwrap()
    };

    let out = run(&["--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains("run interrupted: 1 of 2 --from hosts measured"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the document");
    assert_eq!(schema_errors(&doc), Vec::<String>::new());
    let step = &doc["steps"][0];
    let r = &step["result"];
    assert_eq!(r["interrupted"], true);
    let parts = r["from"].as_array().unwrap();
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0]["agent"], good.as_str());
    assert_eq!(parts[0]["clients"], 2);
    let failed = r["from_failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["agent"], bad.as_str());
    assert_eq!(failed[0]["clients"], 3);
    // The target's refusal, relayed by the host typed (protocol 19), kept typed.
    let error = &failed[0]["error"];
    assert_eq!(error["kind"], "peer_refused", "{error}");
    assert_eq!(error["peer"], target.target().as_str(), "{error}");
    assert_eq!(error["refusal"]["reason"], "limit", "{error}");
    assert_eq!(error["refusal"]["limit"], "max-clients", "{error}");
    assert_eq!(
        (&error["refusal"]["requested"], &error["refusal"]["allowed"]),
        (&serde_json::json!(3), &serde_json::json!(2))
    );
    // Worded on stderr as when the host worded it: the words name the target's flag.
    let worded = format!(
        "{bad} failed: agent error: the peer agent {} refused: request beyond the agent's limit --max-clients: asked 3, allowed 2",
        target.target()
    );
    assert!(err.contains(&worded), "{err}");
    // The totals are the measured host's: sent = answered + lost + unanswered.
    let c = &r["client"]["counts"];
    let n = |v: &serde_json::Value| v.as_u64().unwrap();
    assert!(n(&c["blocks"]) > 0);
    assert_eq!(c, &parts[0]["result"]["requester"]["counts"]);
    assert_eq!(
        n(&c["requests_sent"]),
        n(&c["blocks"]) + n(&c["lost"]) + n(&r["client"]["unanswered"])
    );
    assert_eq!(r["request"]["clients"], 2);
    // Stored, listed as interrupted, and shown again with the failed host's line.
    let id = step["run_id"].as_i64().expect("stored");
    let h = mtuperf_in(&db)
        .args(["history", "--json"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&h.stdout).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["id"] == id)
        .expect("the run in the history");
    assert_eq!(row["interrupted"], true);
    let shown = mtuperf_in(&db)
        .args(["show", &id.to_string()])
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&shown.stdout);
    assert!(
        t.contains(&format!("from {bad}: FAILED, its 3 clients")),
        "{t}"
    );
    assert!(t.contains("total of 1 of 2 hosts"), "{t}");

    // As text: the failed host on its own line with its error, the run stored.
    let out = run(&[]);
    let t = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(5), "{t}");
    let line = t
        .lines()
        .find(|l| l.starts_with(&format!("  from {bad}: FAILED")))
        .unwrap_or_else(|| panic!("no line for the failed host: {t}"));
    assert!(
        line.ends_with(&format!(
            "measured nothing (not in the totals): agent error: the peer agent {} refused: request beyond the agent's limit --max-clients: asked 3, allowed 2",
            target.target()
        )),
        "{line}"
    );
    assert!(t.contains(&format!("  from {good} (")), "{t}");
    assert!(t.contains("total of 1 of 2 hosts"), "{t}");
    assert!(t.contains("stored as run"), "{t}");
}

#[test]
fn from_is_refused_by_flag_without_a_key_or_with_too_few_clients() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let run = |args: &[&str]| {
        let out = mtuperf_in(&db)
            .args(["rr", "192.0.2.1", "--from", "192.0.2.2,192.0.2.3"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, err) = run(&[]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--key-file"), "{err}");
    let key = keygen(dir.path());
    let (code, err) = run(&["--key-file", key.to_str().unwrap(), "--clients", "4,1"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--clients") && err.contains("at least 2"),
        "{err}"
    );
    let (code, err) = run(&["--bidir"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--bidir"), "{err}");
}
