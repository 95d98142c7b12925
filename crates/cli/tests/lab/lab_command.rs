//! End-to-end tests of `mtuperf lab` with the real binary. They need root (or
//! CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2/nftables/ethtool/tc; otherwise each
//! prints why and passes. Every test builds its own lab under a unique name, removed
//! by a guard even when the test fails.
use crate::lab_support;

use std::process::Command;

use lab_support::{count_of, mtuperf, text, TestLab};
use mtuperf_lab::{unique_name, Lab};

const BIG_V4: &[&str] = &["ping", "-M", "do", "-s", "8972", "-c", "1", "-W", "1"];
const BIG_V6: &[&str] = &["ping", "-6", "-M", "do", "-s", "8952", "-c", "1", "-W", "1"];

#[test]
fn jumbo_carries_9000_and_std_does_not() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "std", "--scenario", "jumbo"]);
    let ping = |argv: &[&str], dst: &str| {
        lab.exec("client", &[argv, &[dst]].concat())
            .status
            .success()
    };
    assert!(ping(BIG_V4, "198.18.2.2"), "8972-byte DF ping over jumbo");
    assert!(
        !ping(BIG_V4, "198.18.1.2"),
        "8972-byte DF ping over std must fail"
    );
    assert!(
        ping(BIG_V6, "fd6d:7475:0:2::2"),
        "8952-byte ping -6 over jumbo"
    );
    assert!(
        !ping(BIG_V6, "fd6d:7475:0:1::2"),
        "8952-byte ping -6 over std must fail"
    );
}

#[test]
fn routed_router_teaches_the_client_pmtu_1500() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "routed"]);
    for (big, dst) in [(BIG_V4, "198.18.13.2"), (BIG_V6, "fd6d:7475:0:13::2")] {
        assert!(!lab.exec("client", &[big, &[dst]].concat()).status.success());
        let route = text(&lab.exec("client", &["ip", "route", "get", dst]));
        assert!(
            route.contains("mtu 1500"),
            "no learned PMTU for {dst}: {route}"
        );
    }
}

#[test]
fn blackhole_swallows_big_packets_silently() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "blackhole"]);
    let small = |dst: &str| {
        lab.exec("client", &["ping", "-c", "1", "-W", "2", dst])
            .status
            .success()
    };
    for (big, dst) in [(BIG_V4, "198.18.14.2"), (BIG_V6, "fd6d:7475:0:14::2")] {
        assert!(small(dst), "small ping to {dst}");
        let out = lab.exec("client", &[big, &[dst]].concat());
        assert!(
            !out.status.success(),
            "big DF ping must vanish: {}",
            text(&out)
        );
        let route = text(&lab.exec("client", &["ip", "route", "get", dst]));
        assert!(
            !route.contains("mtu"),
            "no ICMP may reach the client: {route}"
        );
        assert!(small(dst), "small ping to {dst} after the big one");
    }
}

#[test]
fn mismatch_drops_8k_datagrams_but_not_1k() {
    require_lab!(true);
    let lab = TestLab::up(&["--scenario", "mismatch"]);
    let counts = lab.udp_counts("mismatch", "198.18.5.2", &["8000x20", "1000x20"]);
    assert_eq!(count_of(&counts, 8000), 0, "{counts}");
    assert_eq!(count_of(&counts, 1000), 20, "{counts}");
}

#[test]
fn loss_drops_about_the_given_share_of_udp() {
    require_lab!(true);
    let lab = TestLab::up(&["--scenario", "std", "--loss", "5"]);
    let counts = lab.udp_counts("std", "198.18.1.2", &["64x2000"]);
    let lost = 1.0 - count_of(&counts, 64) as f64 / 2000.0;
    assert!((0.02..=0.09).contains(&lost), "lost {lost:.3} ({counts})");
}

fn host_view() -> (String, String) {
    let links = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    let tables = Command::new("nft")
        .args(["list", "tables"])
        .output()
        .unwrap();
    (text(&links), text(&tables))
}

#[test]
fn down_removes_everything_and_twice_is_fine() {
    require_lab!(false);
    let before = host_view();
    let lab = TestLab::up(&["--offload", "off", "--rate", "1gbit", "--loss", "1"]);
    let prefix = format!("mtlab-{}-", lab.name);
    let netns = || text(&Command::new("ip").args(["netns", "list"]).output().unwrap());
    // client, 7 servers, 3 routers (routed, blackhole, asym), 1 switch (switchport).
    assert_eq!(
        netns().lines().filter(|l| l.starts_with(&prefix)).count(),
        12
    );
    let tables = text(&lab.exec("blackhole-router", &["nft", "list", "tables"]));
    assert!(
        tables.contains("mtlab_blackhole") && !before.1.contains("mtlab"),
        "{tables}"
    );
    let out = mtuperf(&["lab", "down", "--name", &lab.name]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!netns().contains(&prefix), "{}", netns());
    assert_eq!(
        host_view(),
        before,
        "the host's links or nft tables changed"
    );
    let again = mtuperf(&["lab", "down", "--name", &lab.name]);
    assert!(
        again.status.success() && text(&again).contains("nothing to remove"),
        "{}",
        text(&again)
    );
}

#[test]
fn status_json_lists_hosts_and_missing_lab_says_so() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "routed", "--scenario", "std"]);
    let out = mtuperf(&["lab", "status", "--name", &lab.name, "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/lab-status.schema.json"
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let errors: Vec<String> = jsonschema::validator_for(&schema)
        .unwrap()
        .iter_errors(&v)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let hosts: Vec<&str> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["name"].as_str())
        .collect();
    assert_eq!(hosts, ["client", "std", "routed-router", "routed"]);
    let missing = mtuperf(&["lab", "status", "--name", &unique_name()]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing).contains("no lab named"),
        "{}",
        text(&missing)
    );
    assert_eq!(
        lab.exec("std", &["sh", "-c", "exit 7"]).status.code(),
        Some(7)
    );
}

/// Needs the agent (`mtuperf serve --bind ADDR`): checks that its port answers from
/// the client, then that `lab down` stops it.
#[test]
fn serve_starts_agents_that_answer_and_down_stops_them() {
    require_lab!(true);
    let lab = TestLab::up(&["--scenario", "std", "--scenario", "jumbo"]);
    let out = mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let connect = "import socket, sys; socket.create_connection((sys.argv[1], 7878), 2).close()";
    for dst in ["198.18.1.2", "198.18.2.2", "fd6d:7475:0:1::2"] {
        let c = lab.exec("client", &["python3", "-c", connect, dst]);
        assert!(c.status.success(), "agent port on {dst}: {}", text(&c));
    }
    let pids: Vec<u32> = Lab::load(&lab.name)
        .unwrap()
        .unwrap()
        .agents
        .iter()
        .map(|a| a.pid)
        .collect();
    assert_eq!(pids.len(), 2);
    assert!(Lab::down(&lab.name, false).unwrap());
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.contains(") Z"),
            "agent {pid} still runs: {stat}"
        );
    }
}
