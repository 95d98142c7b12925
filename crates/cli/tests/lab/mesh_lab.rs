//! `mtuperf mesh` end to end in a cluster lab (issue 14), with the real binary and
//! real namespaces (root needed; otherwise each test prints why and passes). Each
//! test builds its own uniquely named lab, removed by a guard even on failure. The
//! orchestrator runs inside a lab node: traffic stays between the lab's namespaces.
use crate::lab_support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use lab_support::{mtuperf, text, TestLab};

/// Validates `doc` against `schemas/NAME.schema.json`.
fn assert_schema(name: &str, doc: &serde_json::Value) {
    let path = format!(
        "{}/../../schemas/{name}.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{name}: {errors:?}");
}

/// The nodes' agents by their address on net1 (the network with no silent fault, so
/// the control connections are never black-holed).
fn nodes(n: u8) -> Vec<String> {
    (1..=n).map(|i| format!("n{i}=198.19.1.{i}")).collect()
}

/// Every ordered pair (from, to) of `n` nodes (0-based) with `node` in it.
fn through(n: usize, node: usize) -> BTreeSet<(usize, usize)> {
    (0..n)
        .flat_map(|a| (0..n).map(move |b| (a, b)))
        .filter(|&(a, b)| a != b && (a == node || b == node))
        .collect()
}

/// Five nodes, two networks; n2's NIC on net1 at 1500 and sw2's port toward n4 at
/// 1500. A path-only mesh exits 1; exactly the cells through n2 on net A and through
/// n4 on net B are flagged; the two findings name the nodes, the networks and the
/// kind of fault; every other cell carries 9000 both ways; it is stored as one run
/// that show, export and report read back.
#[test]
fn mesh_names_a_low_nic_and_a_bad_switch_port_on_two_networks() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "5",
        "--nets",
        "2",
        "--fault",
        "nic-mtu=n2:1:1500",
        "--fault",
        "port-mtu=n4:2:1500",
    ]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    let db = tempfile::tempdir().unwrap();
    let db_path = db.path().join("history.db");
    let db_arg = db_path.to_str().unwrap();
    let bin = lab_support::BIN;
    let mut argv = vec![
        bin,
        "--db",
        db_arg,
        "mesh",
        "--json",
        "--net",
        "198.19.0.0/16",
    ];
    let ns = nodes(5);
    argv.extend(ns.iter().map(String::as_str));
    let t0 = Instant::now();
    let out = lab.exec("n1", &argv);
    let took = t0.elapsed();
    eprintln!(
        "path-only mesh of 5 nodes x 2 networks: {:.1} s",
        took.as_secs_f64()
    );
    // The bound: no black-holed pair may stall the rest (per-pair deadlines,
    // pairs in parallel); 2 s on the loaded 2-core machine (13 s before each probe's
    // wait followed the round trip), so 60 s is a stall guard.
    assert!(took < Duration::from_mins(1), "took {took:?}");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("mesh JSON");
    assert_schema("mesh", &doc);
    assert_eq!(doc["ok"], false);
    let nets = doc["networks"].as_array().unwrap();
    assert_eq!(nets.len(), 2, "{:#}", doc["networks"]);
    assert_eq!(nets[0]["cidr"], "198.19.1.0/24");
    assert_eq!(nets[1]["cidr"], "198.19.2.0/24");
    // Every ordered pair of both networks was tested, none failed.
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 40);
    assert!(pairs.iter().all(|p| p.get("error").is_none()), "{pairs:#?}");
    // 8 silent directions through n2's NIC, 16 through n4's switch port, each within
    // its round-trip bound.
    assert_eq!(super::mesh_silent_lab::assert_searches_bounded(&doc), 24);
    // Exactly the pairs through the two faults are flagged, with their kind.
    let flagged = |net: u64| -> BTreeSet<(usize, usize)> {
        doc["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["net"] == net && c["verdict"] != "ok")
            .map(|c| {
                (
                    c["from"].as_u64().unwrap() as usize,
                    c["to"].as_u64().unwrap() as usize,
                )
            })
            .collect()
    };
    assert_eq!(flagged(0), through(5, 1));
    assert_eq!(flagged(1), through(5, 3));
    for c in doc["cells"].as_array().unwrap() {
        let (net, from, to) = (
            c["net"].as_u64().unwrap(),
            c["from"].as_u64().unwrap(),
            c["to"].as_u64().unwrap(),
        );
        let want = match net {
            0 if from == 1 || to == 1 => "nic_mtu",
            1 if from == 3 || to == 3 => "switch_port",
            _ => "ok",
        };
        assert_eq!(c["verdict"], want, "{c}");
        for d in ["forward", "reverse"] {
            let mtu = c[d]["mtu"].as_u64().unwrap();
            assert_eq!(mtu, if want == "ok" { 9000 } else { 1500 }, "{c}");
        }
        if want == "switch_port" {
            assert_eq!(c["forward"]["stop"], "silent", "{c}");
            assert_eq!(c["reverse"]["stop"], "silent", "{c}");
        }
    }
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2, "{findings:#?}");
    let (nic, port) = (&findings[0], &findings[1]);
    for (f, node, net) in [(nic, 1, 0), (port, 3, 1)] {
        assert_eq!(
            (f["kind"].as_str(), f["node"].as_u64(), f["net"].as_u64()),
            (Some("fault"), Some(node), Some(net)),
            "{f}"
        );
    }
    // The same diagnosis `path` names: class, numbers, where.
    assert_eq!(
        nic["diagnosis"],
        serde_json::json!({"class": "nic_mtu", "iface": "net1", "nic_mtu": 1500,
            "at": {"kind": "node", "addr": "198.19.1.2"}, "mtu": 1500, "expect": 9000}),
        "{nic}"
    );
    assert_eq!(
        port["diagnosis"],
        serde_json::json!({"class": "switch_port", "nic_mtu": 9000,
            "at": {"kind": "node", "addr": "198.19.2.4"}, "mtu": 1500, "expect": 9000}),
        "{port}"
    );
    assert_eq!(
        doc["answer"],
        serde_json::json!({"answer": "not_ready", "finding": 0, "others": 1})
    );
    // Each finding carries its evidence: the directions it explains, what each did.
    assert_eq!(nic["directions"].as_array().unwrap().len(), 8, "{nic}");
    let port_dirs = port["directions"].as_array().unwrap();
    assert_eq!(port_dirs.len(), 8, "{port}");
    assert!(port_dirs.iter().all(|d| d["stop"] == "silent"), "{port}");

    // One run in the history: show (text and JSON), export and the HTML grid read it.
    let id = doc["run_id"].as_i64().expect("stored run id").to_string();
    let show = mtuperf(&["--db", db_arg, "show", &id]);
    let shown = text(&show);
    assert!(show.status.success(), "{shown}");
    assert!(
        shown.contains("net A  198.19.1.0/24  expect 9000"),
        "{shown}"
    );
    assert!(
        shown.contains("NIC 1500|1500") && shown.contains("PORT 1500|1500"),
        "{shown}"
    );
    assert!(shown.contains("findings (2):"), "{shown}");
    assert!(
        shown.starts_with("NOT ready: the NIC of node n2 on net A is at 1500 (expected 9000): ip link set dev net1 mtu 9000 on node n2"),
        "{shown}"
    );
    assert!(
        shown.contains(
            "NIC net1 of node n2 on net A (198.19.1.0/24) is at MTU 1500, below the network's 9000"
        ),
        "{shown}"
    );
    assert!(shown.contains("every path through node n4 on net B (198.19.2.0/24) stops above 1500 in both directions, silently, while its NIC says 9000"), "{shown}");
    assert!(shown.contains("switch port"), "{shown}");
    let show_json = mtuperf(&["--db", db_arg, "show", &id, "--json"]);
    let again: serde_json::Value = serde_json::from_slice(&show_json.stdout).expect("show --json");
    assert_schema("mesh", &again);
    assert_eq!(again["findings"], doc["findings"]);
    let export = text(&mtuperf(&[
        "--db", db_arg, "export", "--kind", "mesh", "--csv",
    ]));
    assert!(
        export.contains("mesh") && export.contains("2 findings"),
        "{export}"
    );
    let html_path = db.path().join("mesh.html");
    let report = mtuperf(&[
        "--db",
        db_arg,
        "report",
        &id,
        "-o",
        html_path.to_str().unwrap(),
    ]);
    assert!(report.status.success(), "{}", text(&report));
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.contains("<table class=\"grid\">"), "grid");
    // 2 networks × 20 cells, each split into its two directions.
    assert_eq!(html.matches("<polygon").count(), 80);
    assert!(html.contains("n4 → n1: carries 1500 (larger sizes vanish silently), below 9000"));
    assert!(html.contains("NIC net1 of node n2"), "html");
}

/// Mesh needs keyed agents: without a key it refuses before contacting anything,
/// naming the flag; a node whose agent holds no key is named unreachable (the
/// orchestrator will not talk to an agent that does not authenticate) while the
/// other pairs are still tested.
#[test]
fn mesh_needs_keys_and_names_an_unkeyed_node() {
    let out = mtuperf(&["--no-store", "mesh", "198.18.0.1", "198.18.0.2"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--key-file"), "{}", text(&out));
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "cluster", "--nodes", "3", "--nets", "1"]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    // A second agent on n3, without a key, on another port; stopped with the lab.
    let mut open = lab
        .exec_cmd(
            "n3",
            &[
                "env",
                "-u",
                "MTUPERF_KEY_FILE",
                lab_support::BIN,
                "serve",
                "--bind",
                "198.19.1.3",
                "--port",
                "7979",
            ],
        )
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let out = lab.exec(
        "n1",
        &[
            lab_support::BIN,
            "--no-store",
            "mesh",
            "--json",
            "--net",
            "198.19.0.0/16",
            "n1=198.19.1.1",
            "n2=198.19.1.2",
            "open=198.19.1.3:7979",
        ],
    );
    let _ = open.kill();
    let _ = open.wait();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("mesh JSON");
    assert_schema("mesh", &doc);
    let f = &doc["findings"].as_array().unwrap()[0];
    assert_eq!(f["kind"], "unreachable", "{f}");
    assert_eq!(f["error"]["kind"], "discovery", "{f}");
    // The client's own error (an open agent is no refusal), kept as its text.
    assert_eq!(f["error"]["error"]["kind"], "error", "{f}");
    assert!(
        f["error"]["error"]["text"]
            .as_str()
            .unwrap()
            .contains("does not authenticate"),
        "{f}"
    );
    // n1 and n2 were still tested against each other, both ways, and carry 9000.
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "{cells:#?}");
    assert!(cells.iter().all(|c| c["verdict"] == "ok"), "{cells:#?}");
}

/// `--tests rr,stream,doctor` on a clean three-node network: every ordered pair gets
/// an rr and a stream result (rounds of disjoint pairs), nothing is found, exit 0,
/// and the text shows the rr and goodput matrices.
#[test]
fn mesh_load_tests_measure_every_ordered_pair() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "cluster", "--nodes", "3", "--nets", "1"]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    let run = |json: bool| {
        let mut argv = vec![
            lab_support::BIN,
            "--no-store",
            "mesh",
            "--net",
            "198.19.0.0/16",
        ];
        // The block p99 check's limit far above a loaded lab's: nothing to find.
        argv.extend(["--tests", "path,rr,stream,doctor", "--time", "300ms"]);
        argv.extend(["--max-block-p99", "10s"]);
        if json {
            argv.push("--json");
        }
        argv.extend(["n1=198.19.1.1", "n2=198.19.1.2", "n3=198.19.1.3"]);
        lab.exec("n1", &argv)
    };
    let out = run(true);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("mesh JSON");
    assert_schema("mesh", &doc);
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 6);
    for p in pairs {
        assert!(p["rr"]["counts"]["blocks"].as_u64().unwrap() > 0, "{p}");
        assert_eq!(p["rr"]["counts"]["lost"], 0, "{p}");
        assert!(p["rr"]["p50_ns"].as_u64().unwrap() > 0, "{p}");
        assert!(p["stream"]["bytes"].as_u64().unwrap() > 0, "{p}");
        assert!(p["stream"]["wall_ns"].as_u64().unwrap() > 0, "{p}");
    }
    assert_eq!(
        doc["findings"].as_array().unwrap().len(),
        0,
        "{:#}",
        doc["findings"]
    );
    let out = run(false);
    let t = text(&out);
    assert_eq!(out.status.code(), Some(0), "{t}");
    assert!(
        t.contains("rr block latency p50/p99 (µs") && t.contains("stream goodput (Mbit/s"),
        "{t}"
    );
    assert!(t.contains("no findings"), "{t}");
}
