//! `rr --from` in a three-node cluster lab (issue 20), with the real binary and real
//! namespaces (root needed; otherwise each test prints why and passes): n2 and n3
//! drive n1's agent at once through their own keyed agents; the command runs in n1,
//! so traffic stays between the lab's namespaces.
use crate::lab_support;

use std::time::{Duration, Instant};

use lab_support::{mtuperf, text, TestLab};

/// Validates `doc` against `schemas/rr.schema.json`.
fn assert_schema(doc: &serde_json::Value) {
    let schema: serde_json::Value =
        serde_json::from_str(include_str!("../../../../schemas/rr.schema.json")).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "rr schema: {errors:?}");
}

/// `mtuperf GLOBAL.. rr 198.19.1.1 --from FROM ARGS..`, run in n1.
fn rr_from(lab: &TestLab, global: &[&str], from: &str, args: &[&str]) -> std::process::Output {
    let mut argv = vec![lab_support::BIN];
    argv.extend(global);
    argv.extend(["rr", "198.19.1.1", "--from", from]);
    argv.extend(args);
    lab.exec("n1", &argv)
}

/// A three-node, one-network cluster lab with a keyed agent on every node.
fn three_served_nodes() -> TestLab {
    let lab = TestLab::up(&["--scenario", "cluster", "--nodes", "3", "--nets", "1"]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    lab
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// rr against n1 --from n2,n3, UDP and TCP: each host's counts add up (sent =
/// answered + lost + unanswered), the hosts add up to the total, the merged
/// histogram holds every answered block, the target's served sum is what the hosts'
/// sessions report, blocks/s is the hosts' sum, and the step is stored.
#[test]
fn rr_from_two_nodes_adds_up_against_one_agent() {
    require_lab!(false);
    let lab = three_served_nodes();
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("history.db");
    for proto in ["udp", "tcp"] {
        let out = rr_from(
            &lab,
            &["--db", db_path.to_str().unwrap()],
            "198.19.1.2,198.19.1.3",
            &[
                "--proto",
                proto,
                "--clients",
                "6",
                "--threads",
                "1",
                "--time",
                "1s",
                "--json",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{proto}: {}", text(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("rr JSON");
        assert_schema(&doc);
        let step = &doc["steps"][0];
        assert!(step["run_id"].is_i64(), "{proto}: not stored");
        let r = &step["result"];
        let hosts = r["from"].as_array().unwrap();
        assert_eq!(hosts.len(), 2);
        let (mut blocks, mut sent, mut served, mut rate) = (0, 0, 0, 0.0);
        for h in hosts {
            let c = &h["result"]["requester"]["counts"];
            let un = n(&h["result"]["requester"]["unanswered"]);
            assert_eq!(n(&h["clients"]), 3, "{proto}: {h}");
            assert!(n(&c["blocks"]) > 50, "{proto}: {c}");
            assert_eq!(n(&c["requests_sent"]), n(&c["blocks"]) + n(&c["lost"]) + un);
            assert_eq!(h["accounted"], true);
            blocks += n(&c["blocks"]);
            sent += n(&c["requests_sent"]);
            served += n(&h["result"]["served"]["responses"]);
            rate += h["blocks_per_s"].as_f64().unwrap();
        }
        let c = &r["client"]["counts"];
        assert_eq!(n(&c["blocks"]), blocks, "{proto}");
        assert_eq!(n(&c["requests_sent"]), sent, "{proto}");
        assert_eq!(
            sent,
            blocks + n(&c["lost"]) + n(&r["client"]["unanswered"]),
            "{proto}"
        );
        assert_eq!(n(&r["client"]["latency"]["count"]), blocks, "{proto}");
        assert_eq!(n(&r["agent"]["responses"]), served, "{proto}");
        assert!(
            served >= blocks,
            "{proto}: served {served} < answered {blocks}"
        );
        let total = step["metrics"]["blocks_per_s"].as_f64().unwrap();
        assert!(
            (total - rate).abs() < 1e-6 * rate.max(1.0),
            "{total} vs {rate}"
        );
    }
    // The text names each host and the total.
    let out = rr_from(
        &lab,
        &["--no-store"],
        "198.19.1.2,198.19.1.3",
        &["--clients", "2", "--time", "500ms"],
    );
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("from 198.19.1.2") && t.contains("from 198.19.1.3"),
        "{t}"
    );
    assert!(
        t.contains("total of 2 hosts") && t.contains("the target agent served"),
        "{t}"
    );
}

/// A --from host at an address nobody has ends the run within the connect deadline,
/// naming the host, before any traffic.
#[test]
fn rr_from_an_unreachable_host_fails_in_time_naming_it() {
    require_lab!(false);
    let lab = three_served_nodes();
    // Off every lab network (no route: refused at once), and on net1 with no one
    // answering ARP there (the kernel gives up after its neighbour probes).
    for gone in ["198.18.250.250", "198.19.1.200"] {
        let from = format!("198.19.1.2,{gone}");
        let t0 = Instant::now();
        let out = rr_from(
            &lab,
            &["--no-store"],
            &from,
            &["--clients", "2", "--time", "1s"],
        );
        let took = t0.elapsed();
        let t = text(&out);
        assert!(!out.status.success(), "{t}");
        assert!(t.contains(&format!("--from {gone}")), "{t}");
        // The connect deadline is 5 s; 30 s guards against a hang on a loaded host.
        assert!(took < Duration::from_secs(30), "took {took:?}: {t}");
    }
}
