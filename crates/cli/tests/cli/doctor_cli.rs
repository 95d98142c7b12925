//! `mtuperf doctor` on this host and against a loopback agent: usage errors, the fix
//! script, the history, the RTT measured through the agent, and the JSON schema.
use crate::agent_support;

use crate::inproc::mtuperf_in;
use agent_support::AgentProc;
use serde_json::Value;

fn validate(doc: &Value) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/doctor.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema: {errors:?}");
}

fn run_json(db: &std::path::Path, args: &[&str]) -> (i32, Value) {
    let out = mtuperf_in(db)
        .args([&["doctor", "--json", "--sample", "0s"][..], args].concat())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    validate(&doc);
    (out.status.code().unwrap(), doc)
}

fn all_findings(doc: &Value) -> Vec<Value> {
    let mut v: Vec<Value> = doc["local"]["findings"].as_array().unwrap().clone();
    if let Some(p) = doc["peer"]["findings"].as_array() {
        v.extend(p.iter().cloned());
    }
    v.extend(doc["cross"].as_array().unwrap().iter().cloned());
    v
}

#[test]
fn usage_errors_name_the_flag_and_the_allowed_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    for (args, needle) in [
        (&["doctor", "--profile", "oracle"][..], "rac, generic"),
        (&["doctor", "--iface", "no-such-if0"][..], "--iface"),
        (&["doctor", "--sample", "5m"][..], "0s to 60s"),
        (&["doctor", "--rtt", "0s"][..], "1us to 10s"),
    ] {
        let out = mtuperf_in(&db).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn exit_code_and_counts_follow_the_findings_and_the_run_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let (code, doc) = run_json(&db, &["--iface", "lo"]);
    let f = all_findings(&doc);
    let count = |s: &str| f.iter().filter(|x| x["status"] == s).count();
    assert_eq!(doc["counts"]["fail"], count("FAIL"));
    assert_eq!(doc["counts"]["warn"], count("WARN"));
    assert_eq!(
        code,
        i32::from(count("FAIL") > 0),
        "exit 1 exactly when a FAIL"
    );
    // The loopback MTU (65536) is at least 9000: no iface.mtu FAIL.
    let mtu = f.iter().find(|x| x["id"] == "iface.mtu").unwrap();
    assert_eq!(mtu["status"], "PASS");
    let id = doc["run_id"].as_i64().expect("stored run id");
    let show = mtuperf_in(&db)
        .args(["show", &id.to_string()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&show.stdout);
    assert!(text.starts_with("mtuperf doctor,"), "{text}");
    assert!(text.contains("iface.mtu"), "{text}");
    // Printed: the typed check and its words; stored: the typed check alone, worded
    // again by `show` above.
    assert_eq!(mtu["check"]["kind"], "mtu", "{mtu}");
    assert_eq!(mtu["expected"], ">= 9000 (jumbo frames)", "{mtu}");
    let show = mtuperf_in(&db)
        .args(["show", &id.to_string(), "--json"])
        .output()
        .unwrap();
    let stored: Value = serde_json::from_slice(&show.stdout).unwrap();
    validate(&stored);
    let first = &stored["local"]["findings"][0];
    assert_eq!(first["check"]["kind"], "mtu", "{first}");
    assert!(first.get("why").is_none(), "{first}");
}

#[test]
fn fix_script_has_one_command_per_failing_or_warning_finding() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let (_, doc) = run_json(&db, &["--iface", "lo", "--no-store"]);
    let out = mtuperf_in(&db)
        .args([
            "--no-store",
            "doctor",
            "--iface",
            "lo",
            "--sample",
            "0s",
            "--fix-script",
        ])
        .output()
        .unwrap();
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(script.starts_with("#!/bin/sh\n"), "{script}");
    assert!(script.contains("\nset -eu\n"), "{script}");
    let fixes: Vec<&str> = doc["local"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["status"] == "FAIL" || f["status"] == "WARN")
        .filter_map(|f| f["fix"].as_str())
        .filter(|f| !f.is_empty())
        .collect();
    let commands: Vec<&str> = script
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty() && *l != "set -eu")
        .collect();
    let expected: Vec<&str> = fixes
        .iter()
        .copied()
        .filter(|f| !f.starts_with('#'))
        .collect();
    assert_eq!(commands, expected);
    // doctor never changes the host: the script is only printed.
    let (_, again) = run_json(&db, &["--iface", "lo", "--no-store"]);
    assert_eq!(
        again["local"]["facts"]["sysctls"],
        doc["local"]["facts"]["sysctls"]
    );
}

#[test]
fn peer_run_measures_rtt_for_the_bdp_and_compares_both_ends() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let (_, doc) = run_json(
        &db,
        &[
            "--peer",
            &agent.target(),
            "--bandwidth",
            "10G",
            "--no-store",
        ],
    );
    assert_eq!(doc["local"]["facts"]["selection"], "route to 127.0.0.1");
    assert_eq!(doc["peer"]["facts"]["ifaces"][0]["info"]["name"], "lo");
    let rmem = doc["local"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "sysctl.net.ipv4.tcp_rmem")
        .unwrap()
        .clone();
    assert_ne!(rmem["status"], "SKIP", "{rmem}");
    assert!(
        rmem["expected"]
            .as_str()
            .unwrap()
            .contains("control round trip to the agent"),
        "{rmem}"
    );
    // Same host on both ends: every cross-node comparison agrees.
    let cross = doc["cross"].as_array().unwrap();
    assert!(cross.iter().any(|f| f["id"] == "cross.mtu"), "{doc:#}");
    assert!(cross.iter().all(|f| f["status"] == "PASS"), "{cross:#?}");
}

#[test]
fn unreachable_peer_is_an_error_with_exit_2() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mtuperf"))
        .args([
            "--no-store",
            "doctor",
            "--iface",
            "lo",
            "--peer",
            &format!("127.0.0.1:{port}"),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot connect"));
}

/// Outside the initial network namespace the kernel hides net.core.netdev_max_backlog:
/// the facts carry why, typed, and the text says it as it always has.
#[test]
fn a_hidden_sysctl_is_stored_typed_and_worded_as_a_skip() {
    let run = |json: bool| {
        let mut args = vec!["-n", env!("CARGO_BIN_EXE_mtuperf"), "--no-store", "doctor"];
        args.extend(["--sample", "0s"]);
        if json {
            args.push("--json");
        }
        std::process::Command::new("unshare").args(&args).output()
    };
    let out = match run(false) {
        Ok(o) if o.status.code() != Some(1) || !o.stdout.is_empty() => o,
        other => {
            eprintln!("skipped: no network namespace of our own here: {other:?}");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("skipped: cannot read /proc/sys/net/core/netdev_max_backlog: not present; outside the initial network namespace the kernel hides some host-wide parameters (e.g. netdev_max_backlog): run doctor in the host namespace to check it"),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(true).unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    validate(&doc);
    let path = "/proc/sys/net/core/netdev_max_backlog";
    let typed = serde_json::json!({"kind": "not_found", "path": path});
    assert_eq!(
        doc["local"]["facts"]["unreadable"]["net.core.netdev_max_backlog"], typed,
        "{doc:#}"
    );
    let f = all_findings(&doc)
        .into_iter()
        .find(|f| f["id"] == "sysctl.net.core.netdev_max_backlog")
        .unwrap();
    assert_eq!(f["check"]["why"]["error"], typed, "{f:#}");
}
