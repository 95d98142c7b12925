//! CPU placement of stream tests on loopback (TCP and `--udp`): `--agent-cpu` outside
//! the agent's processor set (`serve --cpus`) refused naming the limit, and inside it
//! the agent's data threads pinned and sampled on that CPU, recorded in the JSON
//! (valid against the schema), in the history and in one text line.

use crate::agent_support;

use agent_support::{assert_schema, json_of, mtuperf, AgentProc};

/// `stream` over TCP, or with `--udp` at a gentle rate.
fn stream_args<'a>(target: &'a str, udp: bool, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["stream", target, "--time", "500ms"];
    if udp {
        v.extend(["--udp", "--rate", "100M"]);
    }
    v.extend(extra);
    v
}

fn assert_valid(doc: &serde_json::Value, udp: bool) {
    let schema = if udp {
        include_str!("../../../../schemas/stream-udp.schema.json")
    } else {
        include_str!("../../../../schemas/stream.schema.json")
    };
    assert_schema(doc, schema);
}

#[test]
fn stream_agent_cpu_outside_the_agents_processor_set_is_refused_tcp_and_udp() {
    let agent = AgentProc::start(&["--cpus", "0"]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let target = agent.target();
    for udp in [false, true] {
        let out = mtuperf(&db)
            .args(stream_args(&target, udp, &["--agent-cpu", "0-1"]))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "udp={udp}: {err}");
        assert!(
            err.contains("--agent-cpu 0-1")
                && err.contains("CPU 1 is outside")
                && err.contains("serve --cpus")
                && err.contains("ask for CPUs in 0"),
            "udp={udp}: {err}"
        );
    }
}

#[test]
fn stream_agent_cpu_0_records_the_agents_threads_on_cpu_0_tcp_and_udp() {
    let agent = AgentProc::start(&["--cpus", "0"]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let target = agent.target();
    for udp in [false, true] {
        let doc = json_of(mtuperf(&db).args(stream_args(
            &target,
            udp,
            &["--agent-cpu", "0", "--cpu", "0", "--json"],
        )));
        assert_valid(&doc, udp);
        let run = &doc["runs"][0];
        assert_eq!(run["result"]["request"]["cpus"], serde_json::json!([0]));
        let a = &run["result"]["agent"]["placement"];
        assert_eq!(a["pinned"], serde_json::json!([0]), "udp={udp}: {a}");
        let threads = a["threads"].as_array().unwrap();
        assert!(!threads.is_empty(), "udp={udp}: {a}");
        for t in threads {
            let cpus = t["cpus"].as_array().unwrap();
            assert!(!cpus.is_empty(), "udp={udp}: sampled: {a}");
            assert!(cpus.iter().all(|c| c[0] == 0), "udp={udp}: {a}");
        }
        let c = &run["result"]["client_placement"];
        assert_eq!(c["pinned"], serde_json::json!([0]), "udp={udp}: {c}");
        assert_eq!(run["placement"]["agent_cpus"], serde_json::json!([0]));
        assert_eq!(run["placement"]["shared_cpu"], true, "{}", run["placement"]);
        // The history keeps it, and the text names it in one line.
        let id = run["run_id"].as_i64().unwrap().to_string();
        let stored = json_of(mtuperf(&db).args(["show", &id, "--format", "json"]));
        assert_eq!(stored["runs"][0]["result"]["agent"]["placement"], *a);
        assert_eq!(stored["runs"][0]["placement"], run["placement"]);
        let shown = mtuperf(&db).args(["show", &id]).output().unwrap();
        let text = String::from_utf8_lossy(&shown.stdout);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_start().starts_with("placement"))
            .collect();
        assert_eq!(lines.len(), 1, "udp={udp}: {text}");
        assert!(
            lines[0].contains("agent threads on CPU 0 (pinned 0)"),
            "udp={udp}: {text}"
        );
    }
}
