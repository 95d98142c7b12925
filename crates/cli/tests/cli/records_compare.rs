//! The run-record layer for a comparison: its group is listed by `history --kind
//! compare`, its repetitions are ordinary stream and rr runs that `show` prints and
//! `export --group` exports with their own columns, and `export --kind compare` says
//! how to export a comparison instead.

use crate::agent_support;

use crate::inproc::{json_in, mtuperf_in};
use agent_support::AgentProc;

#[test]
fn a_comparison_is_listed_its_runs_shown_and_exported() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let t = agent.target();
    let doc = json_in(mtuperf_in(&db).args([
        "compare",
        "--path",
        &format!("one={t}"),
        "--path",
        &format!("two={t}"),
        "--tests",
        "stream,rr",
        "--time",
        "150ms",
        "--repeat",
        "2",
        "--force",
        "--json",
    ]));
    let group = doc["group_id"].as_i64().expect("stored group");
    let ids: Vec<i64> = doc["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_i64().expect("stored repetition"))
        .collect();
    assert_eq!(ids.len(), 8, "2 paths x 2 tests x 2 repetitions");

    let groups = json_in(mtuperf_in(&db).args(["history", "--kind", "compare", "--json"]));
    assert_eq!(groups[0]["id"].as_i64(), Some(group), "{groups}");
    assert_eq!(groups[0]["kind"], "compare");

    for (i, id) in ids.iter().enumerate() {
        let out = mtuperf_in(&db)
            .args(["show", &id.to_string()])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        let kind = doc["runs"][i]["test"].as_str().unwrap();
        let head = if kind == "rr" {
            "mtuperf rr:"
        } else {
            "mtuperf stream:"
        };
        assert!(text.starts_with(head), "run {id} ({kind}): {text}");
    }

    let rows = json_in(mtuperf_in(&db).args(["export", "--json", "--group", &group.to_string()]));
    let rows = rows["runs"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for r in rows {
        assert_eq!(r["group_id"].as_i64(), Some(group));
        match r["kind"].as_str().unwrap() {
            "rr" => assert!(r["p99_ns"].as_f64().is_some() && r["blocks_per_s"].as_f64().is_some()),
            "stream" => assert!(r["goodput_bps"].as_f64().is_some()),
            k => panic!("a comparison stored a {k} run"),
        }
    }

    let out = mtuperf_in(&db)
        .args(["export", "--kind", "compare"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--group ID"), "{err}");
}
