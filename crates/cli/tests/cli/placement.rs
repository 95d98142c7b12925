//! CPU placement on loopback: `--agent-cpu` inside and outside the agent's processor
//! set (`serve --cpus`), bad CPU lists refused at the command line, and the recorded
//! placement in the JSON document (valid against the schema) and in the history.

use crate::agent_support;

use agent_support::{assert_schema, json_of, mtuperf, AgentProc};

fn assert_valid(doc: &serde_json::Value) {
    assert_schema(doc, include_str!("../../../../schemas/rr.schema.json"));
}

#[test]
fn agent_cpu_outside_the_agents_processor_set_is_refused_naming_the_limit() {
    let agent = AgentProc::start(&["--cpus", "0"]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = mtuperf(&db)
        .args([
            "rr",
            &agent.target(),
            "--time",
            "300ms",
            "--agent-cpu",
            "0-1",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("CPU 1 is outside") && err.contains("serve --cpus") && err.contains("in 0"),
        "{err}"
    );
    // Inside the set: served, and the agent's placement is recorded as sampled.
    let doc = json_of(mtuperf(&db).args([
        "rr",
        &agent.target(),
        "--time",
        "500ms",
        "--agent-cpu",
        "0",
        "--cpu",
        "0",
        "--json",
    ]));
    assert_valid(&doc);
    let s = &doc["steps"][0];
    let a = &s["result"]["agent"]["placement"];
    assert_eq!(a["pinned"], serde_json::json!([0]), "{a}");
    assert_eq!(s["result"]["request"]["cpus"], serde_json::json!([0]));
    assert_eq!(s["placement"]["shared_cpu"], true, "{}", s["placement"]);
    // The stored document keeps it.
    let id = s["run_id"].as_i64().unwrap().to_string();
    let stored = json_of(mtuperf(&db).args(["show", &id, "--format", "json"]));
    let stored = &stored["steps"][0];
    assert_eq!(stored["placement"], s["placement"]);
    assert_eq!(stored["result"]["agent"]["placement"], *a);
    // And its text names the placement in one line.
    let shown = mtuperf(&db).args(["show", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(
        text.lines()
            .filter(|l| l.trim_start().starts_with("placement"))
            .count(),
        1,
        "{text}"
    );
}

#[test]
fn bad_cpu_lists_are_refused_with_flag_value_online_cpus_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let cases: &[(&[&str], &str)] = &[
        (&["rr", "127.0.0.1:1", "--cpu", "3-1"], "backwards"),
        (&["rr", "127.0.0.1:1", "--cpu", "4096"], "not online"),
        (&["rr", "127.0.0.1:1", "--agent-cpu", "x"], "not a CPU"),
        (&["serve", "--cpus", "0,,1"], "empty item"),
        (&["path", "127.0.0.1:1", "--cpu", "9-"], "not a CPU"),
        (&["stream", "127.0.0.1:1", "--cpu", "0-4095"], "not online"),
    ];
    for (args, why) in cases {
        let out = mtuperf(&db).args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        let flag = args[args.len() - 2];
        assert!(
            err.contains(flag) && err.contains(args[args.len() - 1]),
            "{err}"
        );
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(err.contains("online"), "names the online CPUs: {err}");
        assert!(err.contains("e.g. 0"), "gives a hint: {err}");
    }
}

#[test]
fn compare_fixes_one_placement_for_every_path_and_reports_it_per_path() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let t = agent.target();
    let doc = json_of(mtuperf(&db).args([
        "compare",
        "--path",
        &format!("a={t}"),
        "--path",
        &format!("b={t}"),
        "--tests",
        "rr",
        "--repeat",
        "2",
        "--time",
        "300ms",
        "--placement",
        "same",
        "--json",
    ]));
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../../schemas/compare.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(doc["plan"]["placement"], "same");
    let per = doc["placement"].as_array().unwrap();
    assert_eq!(per.len(), 2, "{per:?}");
    for p in per {
        // Pinned to CPU 0 at both ends: every repetition shared CPU 0.
        assert_eq!(p["repetitions"], 2, "{p}");
        assert_eq!(p["shared_cpu"], 2, "{p}");
        assert_eq!(p["client_cpus"], serde_json::json!([0]), "{p}");
        assert_eq!(p["agent_cpus"], serde_json::json!([0]), "{p}");
    }
    assert!(doc["placement_warning"].is_null(), "{doc}");
    // The report states the policy and shows each path's placement.
    let gid = doc["group_id"].as_i64().unwrap().to_string();
    let out = mtuperf(&db)
        .args(["report", "--compare", &gid])
        .output()
        .unwrap();
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(html.contains("<h2>Placement</h2>"), "{html}");
    assert!(html.contains("same: every repetition"), "{html}");
    assert!(
        html.contains("<td class=\"l\">a</td><td>2</td><td>0</td><td>2</td>"),
        "{html}"
    );
}

#[test]
fn stream_pins_the_clients_data_threads_and_records_where_they_ran() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let doc = json_of(mtuperf(&db).args([
        "stream",
        &agent.target(),
        "--time",
        "500ms",
        "--cpu",
        "0",
        "--json",
    ]));
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../../schemas/stream.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let p = &doc["runs"][0]["result"]["client_placement"];
    assert_eq!(p["pinned"], serde_json::json!([0]), "{p}");
    let threads = p["threads"].as_array().unwrap();
    assert!(!threads.is_empty(), "{p}");
    for t in threads {
        assert!(
            t["cpus"].as_array().unwrap().iter().all(|c| c[0] == 0),
            "{p}"
        );
    }
    let cpu = &doc["runs"][0]["metrics"]["ends"][0]["cpu_resolution"];
    assert!(
        cpu["ticks"].as_u64().is_some() && cpu["plus_minus_ticks"].as_u64() >= Some(1),
        "{cpu}"
    );
}

#[test]
fn path_runs_with_its_probing_thread_pinned() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let doc = json_of(
        mtuperf(&dir.path().join("h.db"))
            .args(["--no-store", "path", "--cpu", "0", "--json"])
            .arg(agent.target()),
    );
    assert!(
        doc["agent"]["forward"]["largest_ok"].as_u64().is_some(),
        "{doc:#}"
    );
}

/// rr over TCP without `--cpu`/`--agent-cpu` pins one thread per CPU on both ends
/// (connections are steered to the CPU that receives them): the record names each
/// thread's own pinning and the samples agree with it, and the text does not say
/// "unpinned".
#[test]
fn rr_tcp_steering_pins_are_recorded_per_thread_not_called_unpinned() {
    let online = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let args = [
        "--no-store",
        "rr",
        &agent.target(),
        "--proto",
        "tcp",
        "--clients",
        "8",
        "--threads",
        "2",
        "--workers",
        "2",
        "--time",
        "1s",
    ];
    let doc = json_of(mtuperf(&db).args(args).arg("--json"));
    assert_valid(&doc);
    let r = &doc["steps"][0]["result"];
    for end in ["client", "agent"] {
        let p = &r[end]["placement"];
        assert!(p["pinned"].is_null(), "{end}: {p}");
        let threads = p["threads"].as_array().unwrap();
        assert_eq!(threads.len(), 2, "{end}: {p}");
        for t in threads {
            if online < 2 {
                assert!(
                    t["pinned"].is_null(),
                    "{end}: one CPU, nothing to steer: {t}"
                );
                continue;
            }
            let cpu = t["pinned"].as_u64().unwrap_or_else(|| panic!("{end}: {t}"));
            for seen in t["cpus"].as_array().unwrap() {
                assert_eq!(seen[0].as_u64(), Some(cpu), "{end}: ran off its CPU: {t}");
            }
        }
    }
    let out = mtuperf(&db).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    if online >= 2 {
        assert!(
            text.contains("by rr's TCP steering") && !text.contains("unpinned"),
            "{text}"
        );
    }
}

/// An agent confined to a processor set (`serve --cpus 0`) steers only inside it: no
/// serving thread is pinned to a CPU outside the set, though the client asked for no
/// `--agent-cpu` and the host has more CPUs.
#[test]
fn rr_tcp_steering_stays_inside_the_agents_processor_set() {
    let agent = AgentProc::start(&["--cpus", "0"]);
    let dir = tempfile::tempdir().unwrap();
    let doc = json_of(mtuperf(&dir.path().join("h.db")).args([
        "--no-store",
        "rr",
        &agent.target(),
        "--proto",
        "tcp",
        "--clients",
        "8",
        "--workers",
        "2",
        "--time",
        "1s",
        "--json",
    ]));
    assert_valid(&doc);
    let p = &doc["steps"][0]["result"]["agent"]["placement"];
    let threads = p["threads"].as_array().unwrap();
    assert!(!threads.is_empty(), "{p}");
    for t in threads {
        assert!(
            t["pinned"].is_null() || t["pinned"] == 0,
            "pinned outside serve --cpus 0: {t}"
        );
    }
}
