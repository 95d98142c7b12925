//! `mtuperf doctor` inside lab namespaces: per-network-namespace settings planted wrong
//! in one namespace are found exactly, a correctly set namespace has no FAIL for them,
//! and `--peer` against a lab agent reports the cross-node MTU mismatch. Needs root and
//! the lab tools; otherwise each test prints why and passes.
use crate::lab_support;

use std::collections::BTreeSet;

use lab_support::{text, TestLab, BIN};
use mtuperf_lab::{Lab, Scenario};
use serde_json::Value;

fn validator() -> jsonschema::Validator {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/doctor.schema.json"
    );
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Runs doctor in `host`'s namespace; returns (exit code, document).
fn doctor(lab: &TestLab, host: &str, args: &[&str]) -> (i32, Value) {
    let argv = [
        &[BIN, "--no-store", "doctor", "--json", "--sample", "0s"][..],
        args,
    ]
    .concat();
    let out = lab.exec(host, &argv);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor output is not JSON ({e}): {}", text(&out)));
    let errors: Vec<String> = validator()
        .iter_errors(&doc)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "schema: {errors:?}");
    (out.status.code().unwrap_or(-1), doc)
}

fn findings(doc: &Value, part: &str) -> Vec<Value> {
    doc[part]["findings"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// FAILs among the per-network-namespace checks (interfaces and net.ipv4.*), as
/// "id subject". Host-wide net.core.* values are the same in every namespace.
fn per_netns_fails(doc: &Value) -> BTreeSet<String> {
    findings(doc, "local")
        .iter()
        .filter(|f| f["status"] == "FAIL")
        .map(|f| {
            format!(
                "{} {}",
                f["id"].as_str().unwrap(),
                f["subject"].as_str().unwrap()
            )
        })
        .filter(|s| s.starts_with("iface.") || s.starts_with("sysctl.net.ipv4."))
        .collect()
}

fn sysctls(lab: &TestLab, host: &str, settings: &[&str]) {
    for s in settings {
        let out = lab.exec(host, &["sysctl", "-q", "-w", s]);
        assert!(
            out.status.success(),
            "sysctl -w {s} in {host}: {}",
            text(&out)
        );
    }
}

const BDP_ARGS: &[&str] = &["--rtt", "10ms", "--bandwidth", "1G"]; // 1.25 MB in flight

#[test]
fn planted_per_namespace_problems_are_found_exactly() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "std", "--scenario", "jumbo"]);
    // Correct values in the jumbo server's namespace only.
    sysctls(
        &lab,
        "jumbo",
        &[
            "net.ipv4.ipfrag_high_thresh=16777216",
            "net.ipv4.ipfrag_low_thresh=15728640",
            "net.ipv4.conf.all.rp_filter=2",
            "net.ipv4.tcp_rmem=4096 131072 6291456",
            "net.ipv4.tcp_wmem=4096 16384 4194304",
            "net.ipv4.tcp_mtu_probing=1",
        ],
    );
    // Wrong values in the client's namespace: reassembly memory below MOS 2008933.1,
    // strict rp_filter with two private NICs, tcp_rmem maximum below the BDP; std0
    // has MTU 1500 by construction.
    sysctls(
        &lab,
        "client",
        &[
            "net.ipv4.ipfrag_low_thresh=3145728",
            "net.ipv4.ipfrag_high_thresh=8388608",
            "net.ipv4.conf.all.rp_filter=1",
            "net.ipv4.tcp_rmem=4096 87380 262144",
            "net.ipv4.tcp_wmem=4096 16384 4194304",
        ],
    );
    let (code, bad) = doctor(
        &lab,
        "client",
        &[&["--iface", "jumbo0", "--iface", "std0"][..], BDP_ARGS].concat(),
    );
    assert_eq!(code, 1, "a FAIL exits 1");
    let expected: BTreeSet<String> = [
        "iface.mtu std0",
        "iface.rp_filter jumbo0",
        "iface.rp_filter std0",
        "sysctl.net.ipv4.ipfrag_high_thresh net.ipv4.ipfrag_high_thresh",
        "sysctl.net.ipv4.ipfrag_low_thresh net.ipv4.ipfrag_low_thresh",
        "sysctl.net.ipv4.tcp_rmem net.ipv4.tcp_rmem",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(per_netns_fails(&bad), expected);
    let all = findings(&bad, "local");
    let rp = all
        .iter()
        .find(|f| f["id"] == "iface.rp_filter" && f["subject"] == "std0")
        .unwrap();
    assert!(
        rp["fix"]
            .as_str()
            .unwrap()
            .contains("net.ipv4.conf.all.rp_filter=2"),
        "{rp}"
    );
    assert_eq!(bad["local"]["facts"]["selection"], "given with --iface");

    let (_, good) = doctor(
        &lab,
        "jumbo",
        &[&["--iface", "eth0"][..], BDP_ARGS].concat(),
    );
    assert_eq!(per_netns_fails(&good), BTreeSet::new(), "{good:#}");
    let mtu = findings(&good, "local")
        .into_iter()
        .find(|f| f["id"] == "iface.mtu")
        .unwrap();
    assert_eq!(
        (mtu["status"].as_str(), mtu["measured"].as_str()),
        (Some("PASS"), Some("9000"))
    );
}

#[test]
fn peer_run_reports_the_cross_node_mtu_mismatch() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "mismatch", "--scenario", "jumbo"]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let state = Lab::load(&lab.name).unwrap().unwrap();
    let cross_mtu = |scenario: Scenario| {
        let target = state.target(scenario).unwrap().to_string();
        let (_, doc) = doctor(&lab, "client", &["--peer", &target]);
        assert_eq!(
            doc["local"]["facts"]["selection"],
            format!("route to {target}"),
            "{doc:#}"
        );
        assert!(doc["peer"]["findings"]
            .as_array()
            .is_some_and(|f| !f.is_empty()));
        doc["cross"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "cross.mtu")
            .cloned()
            .unwrap_or_else(|| panic!("no cross.mtu: {doc:#}"))
    };
    let m = cross_mtu(Scenario::Mismatch);
    assert_eq!(m["status"], "FAIL", "{m}");
    assert_eq!(m["measured"], "local 9000, peer 1500");
    // Toward the expected 9000, as the peer's own iface.mtu finding: raise the peer's
    // eth0, never lower this host's mismatch0.
    assert!(
        m["fix"]
            .as_str()
            .unwrap()
            .starts_with("ip link set dev eth0 mtu 9000  # on the peer"),
        "{m}"
    );
    let j = cross_mtu(Scenario::Jumbo);
    assert_eq!(j["status"], "PASS", "{j}");
    assert_eq!(j["measured"], "local 9000, peer 9000");
}
