//! End-to-end tests of `mtuperf compare` against a loopback agent: the JSON document
//! against its schema, repetitions stored in a group as they finish, Ctrl-C keeping
//! every finished repetition and `--resume` completing the plan, usage errors.

use crate::agent_support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::inproc::{json_in, mtuperf_in};
use agent_support::AgentProc;
use mtuperf_store::Store;

fn schema() -> jsonschema::Validator {
    let text = include_str!("../../../../schemas/compare.schema.json");
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    jsonschema::validator_for(&v).unwrap()
}

fn paths(agent: &AgentProc) -> Vec<String> {
    // Both "paths" are the same loopback agent: the test checks bookkeeping, not speed.
    vec![
        "--path".into(),
        format!("a={}", agent.target()),
        "--path".into(),
        format!("b={}", agent.target()),
    ]
}

#[test]
fn json_is_valid_and_every_repetition_is_stored_in_the_group() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let doc = json_in(
        mtuperf_in(&db)
            .arg("compare")
            .args(paths(&agent))
            .args(["--time", "200ms", "--repeat", "3", "--force", "--json"]),
    );
    let errors: Vec<String> = schema()
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema: {errors:?}");
    let group = doc["group_id"].as_i64().unwrap();
    let store = Store::open(&db).unwrap();
    let runs = store.group_runs(group).unwrap();
    assert_eq!(runs.len(), 6, "2 paths x 3 repetitions");
    // Interleaved: a b a b a b.
    let labels: Vec<String> = runs.iter().map(|r| r.label.clone().unwrap()).collect();
    assert_eq!(labels, ["a", "b", "a", "b", "a", "b"]);
    assert!(store.group(group).unwrap().unwrap().finished);
    assert_eq!(doc["runs"].as_array().unwrap().len(), 6);
    let v = doc["verdicts"][0].as_str().unwrap();
    assert!(v.starts_with("b vs a: stream 8K goodput "), "{v}");
    // Every stored run id appears in the document.
    for r in &runs {
        assert!(doc["runs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["run_id"] == r.id));
    }
}

fn stored(db: &std::path::Path, group: i64) -> usize {
    Store::open(db).map_or(0, |s| s.group_runs(group).map_or(0, |r| r.len()))
}

#[test]
fn interrupted_compare_keeps_its_repetitions_and_resume_completes_it() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // A process: Ctrl-C is what this test sends.
    let child = crate::agent_support::mtuperf(&db)
        .arg("compare")
        .args(paths(&agent))
        .args(["--time", "300ms", "--repeat", "4", "--force"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The group is created first (id 1 in a fresh database); wait for 2 stored runs.
    let deadline = Instant::now() + Duration::from_secs(90);
    while stored(&db, 1) < 2 {
        assert!(Instant::now() < deadline, "no repetitions stored in time");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(&db).unwrap();
    let kept: Vec<_> = store.group_runs(1).unwrap();
    let finished_before = kept.iter().filter(|r| !r.interrupted).count();
    assert!(finished_before >= 2, "finished repetitions were lost");
    assert!(
        finished_before < 8,
        "the interrupt came too late to test resume"
    );
    assert!(!store.group(1).unwrap().unwrap().finished);

    let doc = json_in(mtuperf_in(&db).args(["compare", "--resume", "1", "--json"]));
    assert_eq!(doc["group_id"], 1);
    let runs = store.group_runs(1).unwrap();
    let good: Vec<_> = runs.iter().filter(|r| !r.interrupted).collect();
    assert_eq!(good.len(), 8, "2 paths x 4 repetitions after resume");
    for name in ["a", "b"] {
        assert_eq!(
            good.iter()
                .filter(|r| r.label.as_deref() == Some(name))
                .count(),
            4
        );
    }
    // The runs stored before the interrupt are kept and reused, not run again.
    for r in kept.iter().filter(|r| !r.interrupted) {
        assert!(good.iter().any(|g| g.id == r.id));
    }
    assert!(store.group(1).unwrap().unwrap().finished);
    assert_eq!(doc["runs"].as_array().unwrap().len(), 8);
}

#[test]
fn usage_errors_name_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for (args, needle) in [
        (vec!["--path", "a=127.0.0.1"], "--path"),
        (
            vec!["--path", "a=127.0.0.1", "--path", "a=127.0.0.2"],
            "distinct",
        ),
        (vec!["--path", "bad name=x", "--path", "b=y"], "path name"),
        (
            vec!["--path", "a=h,mtu=9000", "--path", "b=y"],
            "unknown path option",
        ),
        (
            vec!["--path", "a=h", "--path", "b=y", "--ci-width", "90"],
            "0.1 to 50",
        ),
    ] {
        let out = mtuperf_in(&db).arg("compare").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn unreachable_path_is_refused_with_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    let out = mtuperf_in(&db)
        .args([
            "compare",
            "--path",
            "a=127.0.0.1:1",
            "--path",
            "b=127.0.0.1:1",
            "--time",
            "100ms",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("compare refused: path a (127.0.0.1:1): cannot reach the agent"),
        "{err}"
    );
    // The plain answer first: what to fix, before the plan and the checks.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("NOT ready: path a (127.0.0.1:1) fails its check: cannot reach the agent"),
        "{text}"
    );
}

/// A plain answer first (issue 29): compare's text starts with the one line a DBA
/// can paste, then the plan and the checks. Both paths are one loopback agent with 2
/// repetitions: no interval, so the answer is "unclear" with the signs only.
#[test]
fn text_starts_with_the_plain_answer() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = mtuperf_in(&db)
        .arg("compare")
        .args(paths(&agent))
        .args(["--time", "200ms", "--repeat", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("b over a: unclear on this path — 8K stream "),
        "{text}"
    );
    assert!(
        lines[0].contains("(fewer than 3 repetitions a path: no interval; run --repeat 3 or more)"),
        "{text}"
    );
    assert!(
        lines[0].ends_with("; the path carries 65535 both ways"),
        "the largest IP packet, as the checks say: {text}"
    );
    assert!(lines[1].starts_with("compare a ("), "{text}");
    assert_eq!(
        text.matches("b over a: ").count(),
        1,
        "said once, first: {text}"
    );
}

/// Every test mix validates against the schema: rr summaries carry p50/p99/blocks/s
/// figures and rr rows their latency fields (issue 21: only stream was validated).
#[test]
fn json_of_every_test_mix_is_valid() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for tests in ["stream,rr", "rr"] {
        let db = dir.path().join(format!("{}.db", tests.replace(',', "_")));
        let doc = json_in(
            mtuperf_in(&db)
                .arg("compare")
                .args(paths(&agent))
                .args(["--tests", tests, "--clients", "1,2", "--time", "200ms"])
                .args(["--repeat", "2", "--force", "--json"]),
        );
        let errors: Vec<String> = schema()
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errors.is_empty(), "{tests}: schema: {errors:?}");
        let figures: Vec<&str> = doc["summaries"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["figure"].as_str())
            .collect();
        assert!(figures.contains(&"p99"), "{tests}: {figures:?}");
        assert_eq!(figures.contains(&"goodput"), tests.contains("stream"));
    }
}
