//! Issue 30: the RAC answer across the cluster, end to end in a cluster lab (root
//! needed; otherwise each test prints why and passes). The mesh's block test (8 KiB
//! UDP blocks for 128 B requests, one in flight) on every pair, lost blocks and the
//! kernel's reassembly failures on a node whose reassembly fails, and `--oifcfg`:
//! exactly the interconnect subnets, their HAIP subnets, a NIC down on a node.
use crate::lab_support;

use lab_support::{mtuperf, text, TestLab};
use serde_json::Value;

fn assert_schema(doc: &Value) {
    let path = format!(
        "{}/../../schemas/mesh.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "mesh schema: {errors:?}");
}

fn nodes(n: u8) -> Vec<String> {
    (1..=n).map(|i| format!("n{i}=198.19.1.{i}")).collect()
}

fn mesh(lab: &TestLab, args: &[&str]) -> (Value, std::process::Output) {
    let mut argv = vec![lab_support::BIN, "--no-store", "mesh", "--json"];
    argv.extend_from_slice(args);
    let ns = nodes(3);
    argv.extend(ns.iter().map(String::as_str));
    let out = lab.exec("n1", &argv);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("mesh JSON: {e}\n{}", text(&out)));
    assert_schema(&doc);
    (doc, out)
}

fn net_of(doc: &Value, cidr: &str) -> u64 {
    doc["networks"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["cidr"] == cidr)
        .unwrap_or_else(|| panic!("no network {cidr}: {:#}", doc["networks"])) as u64
}

fn check<'a>(doc: &'a Value, net: u64, name: &str) -> &'a Value {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["net"] == net && c["check"] == name)
        .unwrap_or_else(|| panic!("no check {name} on net {net}: {:#}", doc["checks"]))
}

/// Three nodes on a private network at 9000 and a public one at 1500; n3's
/// reassembly memory at 0. Over the private network every pair's 8 KiB block is one
/// datagram (no fragment, no loss); over the public one each block is 6 IP
/// fragments: blocks into n3 are never reassembled (no block answered: null
/// latencies, lost blocks counted), the others arrive. n3's kernel counters show the
/// reassembly failures and the finding names n3; the checks say so per network.
#[test]
fn blocks_into_a_node_whose_reassembly_fails_are_lost_and_the_node_named() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "3",
        "--nets",
        "1",
        "--public",
        "--fault",
        "reasm=n3",
    ]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    let (doc, out) = mesh(
        &lab,
        &[
            "--net",
            "198.19.0.0/16",
            "--tests",
            "path,rr",
            "--time",
            "1200ms",
            // Open loop: loss and reassembly failures are counted per block, at any rate.
            "--rate",
            "500",
            "--max-block-p99",
            "10s",
            // Each network's MTU named (the same as their NICs'): --expect per network.
            "--expect",
            "198.19.100.0/24=1500",
            "--expect",
            "9000",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let (private, public) = (
        net_of(&doc, "198.19.1.0/24"),
        net_of(&doc, "198.19.100.0/24"),
    );
    assert_eq!(doc["networks"][private as usize]["expect"], 9000);
    assert_eq!(doc["networks"][public as usize]["expect"], 1500);
    assert_eq!(doc["expect"], 9000);
    assert_eq!(
        doc["expect_nets"],
        serde_json::json!([{"net": "198.19.100.0/24", "mtu": 1500}])
    );
    assert_eq!(doc["block"]["block"], 8192);
    assert_eq!(doc["block"]["proto"], "udp");
    for p in doc["pairs"].as_array().unwrap() {
        let rr = &p["rr"];
        let c = &rr["counts"];
        let (blocks, lost, sent) = (
            c["blocks"].as_u64().unwrap(),
            c["lost"].as_u64().unwrap(),
            c["requests_sent"].as_u64().unwrap(),
        );
        // Every request accounted for: answered, lost (500 ms, or never) or cut off.
        assert_eq!(
            sent,
            blocks + lost + rr["unanswered"].as_u64().unwrap(),
            "{p}"
        );
        let into_n3 = p["from"] == 2;
        if p["net"] == public && into_n3 {
            // n3 asks, its peer's 6 fragments never reassemble at n3.
            assert_eq!(blocks, 0, "{p}");
            assert!(lost >= 1, "{p}");
            for q in ["p50_ns", "p99_ns", "p999_ns", "max_ns"] {
                assert!(rr[q].is_null(), "{q} must be null, never 0: {p}");
            }
            continue;
        }
        assert!(blocks > 0, "{p}");
        assert_eq!(lost, 0, "{p}");
        let q = |k: &str| rr[k].as_u64().unwrap();
        assert!(
            0 < q("p50_ns") && q("p50_ns") <= q("p99_ns") && q("p99_ns") <= q("max_ns"),
            "{p}"
        );
        let per_block = rr["fragments"].as_u64().unwrap() as f64 / q("served") as f64;
        let want = if p["net"] == public { 6.0 } else { 0.0 };
        assert!(
            (per_block - want).abs() < 0.01,
            "fragments/block {per_block}: {p}"
        );
    }
    // The kernel's evidence: n3 alone failed reassemblies.
    for k in doc["kernel"].as_array().unwrap() {
        let fails = k["snmp"]["ip_reasm_fails"].as_u64().unwrap();
        assert_eq!(fails > 0, k["node"] == 2, "{k}");
    }
    let reasm: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "kernel" && f["counter"] == "reasm_fails")
        .collect();
    assert_eq!(reasm.len(), 1, "{:#}", doc["findings"]);
    assert_eq!(reasm[0]["node"], 2);
    // The checks, per network.
    assert_eq!(check(&doc, public, "lost_blocks")["status"], "failed");
    assert_eq!(check(&doc, public, "reassembly")["status"], "failed");
    assert_eq!(
        check(&doc, public, "reassembly")["nodes"],
        serde_json::json!([2])
    );
    assert_eq!(check(&doc, private, "lost_blocks")["status"], "passed");
    assert_eq!(check(&doc, private, "mtu")["status"], "passed");
    assert_eq!(check(&doc, private, "block_p99")["status"], "passed");
    assert_eq!(check(&doc, private, "reachability")["status"], "passed");
    assert_eq!(check(&doc, private, "settings")["status"], "not_run");
    // Jumbo vs standard: the public 1500 network against the private 9000 one, over
    // the same six node pairs; n3's two (no block answered at 1500) left out.
    let jumbo = doc["jumbo"].as_array().unwrap();
    assert_eq!(jumbo.len(), 1, "{:#}", doc["jumbo"]);
    let j = &jumbo[0];
    assert_eq!(
        (&j["standard"], &j["jumbo"]),
        (&public.into(), &private.into())
    );
    assert_eq!(j["pairs"], 6, "{j}");
    assert_eq!(j["unanswered"], serde_json::json!([[2, 0], [2, 1]]), "{j}");
    assert!(j["lost_standard"].as_u64().unwrap() >= 2, "{j}");
    assert_eq!(j["lost_jumbo"], 0, "{j}");
    for fig in ["p50_ns", "p99_ns", "blocks_per_s"] {
        let f = &j[fig];
        let (a, b, rel) = (
            f["standard"].as_f64().unwrap(),
            f["jumbo"].as_f64().unwrap(),
            f["rel"].as_f64().unwrap(),
        );
        assert!(a > 0.0 && b > 0.0 && rel > -1.0, "{fig}: {f}");
        // Four pairs compared: an interval, around the change.
        let (low, high) = (f["low"].as_f64().unwrap(), f["high"].as_f64().unwrap());
        assert!(low <= rel && rel <= high, "{fig}: {f}");
    }
    // The same document in words.
    let d = mtuperf_report::mesh::decode(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let t = mtuperf_report::mesh::text(&d);
    assert!(
        t.contains("\njumbo vs standard (the same node pairs' blocks on both networks"),
        "{t}"
    );
    assert!(
        t.contains("  net B (1500) → net A (9000): 6 node pairs; left out, no block answered on one network: n3 asking n1, n3 asking n2; lost blocks "),
        "{t}"
    );
    assert!(t.contains("    block p50  "), "{t}");
}

/// `--oifcfg` with the file `lab up` wrote: exactly the two interconnect subnets (not
/// the public one), named by interface, and the HAIP subnets on their NICs, each
/// tested with 8 KiB blocks; n2's net2 down is a finding naming it, and the text
/// starts with it.
#[test]
fn oifcfg_tests_the_interconnect_and_its_haip_subnets_and_names_a_nic_down() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "3",
        "--nets",
        "2",
        "--haip",
        "--public",
    ]);
    let serve = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    let file = format!("/run/mtuperf/lab/{}/oifcfg-getif.txt", lab.name);
    let getif = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        getif,
        "pub0  198.19.100.0  global  public\nnet1  198.19.1.0  global  cluster_interconnect\nnet2  198.19.2.0  global  cluster_interconnect\n"
    );
    let down = lab.exec("n2", &["ip", "link", "set", "net2", "down"]);
    assert!(down.status.success(), "{}", text(&down));
    let (doc, out) = mesh(
        &lab,
        // Open loop: which subnets are tested and which NIC is down, not the CPU.
        &[
            "--oifcfg", &file, "--tests", "rr", "--time", "300ms", "--rate", "500",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let got: Vec<(String, String, usize, String)> = doc["networks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_string(),
                n["cidr"].as_str().unwrap().to_string(),
                n["members"].as_array().unwrap().len(),
                n["source"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let row =
        |a: &str, b: &str, n: usize, k: &str| (a.to_string(), b.to_string(), n, k.to_string());
    assert_eq!(
        got,
        vec![
            row("net1", "198.19.1.0/24", 3, "oifcfg"),
            row("net2", "198.19.2.0/24", 2, "oifcfg"),
            row("net1 HAIP", "169.254.0.0/18", 3, "haip"),
            row("net2 HAIP", "169.254.64.0/18", 2, "haip"),
        ]
    );
    // Every pair of every network measured its blocks, the HAIP ones over 169.254.
    let pairs = doc["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 6 + 2 + 6 + 2);
    for p in pairs {
        assert!(p["rr"]["counts"]["blocks"].as_u64().unwrap() > 0, "{p}");
    }
    let absent: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "interconnect_absent")
        .collect();
    assert_eq!(absent.len(), 1, "{:#}", doc["findings"]);
    assert_eq!(
        (
            &absent[0]["node"],
            &absent[0]["iface"],
            &absent[0]["subnet"],
            &absent[0]["why"]
        ),
        (
            &serde_json::json!(1),
            &serde_json::json!("net2"),
            &serde_json::json!("198.19.2.0"),
            &serde_json::json!("down")
        )
    );
    assert_eq!(doc["answer"]["answer"], "not_ready");
    // The same run as text, with `oifcfg getif`'s output on stdin (`--oifcfg -`): the
    // plain answer names n2's NIC.
    let mut argv = vec![
        lab_support::BIN,
        "--no-store",
        "mesh",
        "--oifcfg",
        "-",
        "--tests",
        "rr",
        "--time",
        "300ms",
    ];
    let ns = nodes(3);
    argv.extend(ns.iter().map(String::as_str));
    let mut child = lab
        .exec_cmd("n1", &argv)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(getif.as_bytes()).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let t = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        t.starts_with("NOT ready: node n2: its NIC net2 is down: the cluster_interconnect subnet 198.19.2.0 is unusable cluster-wide"),
        "{t}"
    );
    assert!(t.contains("net net1 HAIP  169.254.0.0/18"), "{t}");
    assert!(t.contains("  HAIP: link-local addresses on net1"), "{t}");
    assert!(
        t.contains("  oifcfg: net2 198.19.2.0 cluster_interconnect"),
        "{t}"
    );
    // Not the public subnet: oifcfg marks it public.
    assert!(!t.contains("198.19.100.0/24"), "{t}");
}
