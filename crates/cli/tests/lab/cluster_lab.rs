//! End-to-end tests of `mtuperf lab up --scenario cluster` with the real binary and
//! real namespaces (root needed; otherwise each test prints why and passes). Every
//! test builds its own lab under a unique name, removed by a guard even on failure.
//! Traffic goes only between the lab's own namespaces.
use crate::lab_support;

use std::collections::BTreeSet;
use std::process::{Command, Output, Stdio};

use lab_support::{mtuperf, text, TestLab};
use mtuperf_lab::Lab;

/// 8972 + 28 = 9000 bytes, don't fragment, one echo, 1 s deadline.
const BIG: &[&str] = &["ping", "-q", "-M", "do", "-s", "8972", "-c", "1", "-W", "1"];
const BIG_V6: &[&str] = &[
    "ping", "-6", "-q", "-M", "do", "-s", "8952", "-c", "1", "-W", "1",
];
const SMALL: &[&str] = &["ping", "-q", "-c", "1", "-W", "2"];

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
    assert!(errors.is_empty(), "{name}: {errors:?}\n{doc:#}");
}

fn v4(net: u8, node: u8) -> String {
    format!("198.19.{net}.{node}")
}

/// Runs every (from host, ping argv, to address) at once; returns the outputs in order.
fn pings(lab: &TestLab, runs: &[(String, &[&str], String)]) -> Vec<Output> {
    let children: Vec<_> = runs
        .iter()
        .map(|(from, argv, to)| {
            lab.exec_cmd(from, &[*argv, &[to.as_str()]].concat())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start ping")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("ping output"))
        .collect()
}

fn lab_netns(prefix: &str) -> Vec<String> {
    let out = Command::new("ip").args(["netns", "list"]).output().unwrap();
    text(&out)
        .lines()
        .filter(|l| l.starts_with(prefix))
        .map(ToString::to_string)
        .collect()
}

fn host_links() -> String {
    text(
        &Command::new("ip")
            .args(["-o", "link", "show"])
            .output()
            .unwrap(),
    )
}

/// Five nodes, two networks; n3's NIC on net1 at 1500, sw2's port toward n4 at 1500.
/// Every ordered pair on both networks gets a 9000-byte DF ping: exactly the pairs
/// through the two faults fail, in both directions, and the switch-port ones fail
/// without any ICMP reaching the sender. Then `lab down` leaves nothing behind.
#[test]
fn cluster_faults_fail_exactly_their_pairs_and_down_leaves_nothing() {
    require_lab!(false);
    let before = host_links();
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "5",
        "--nets",
        "2",
        "--fault",
        "nic-mtu=n3:1:1500",
        "--fault",
        "port-mtu=n4:2:1500",
    ]);
    let prefix = format!("mtlab-{}-", lab.name);
    // 5 nodes and one switch per network.
    assert_eq!(lab_netns(&prefix).len(), 7, "{:?}", lab_netns(&prefix));
    let mut runs = Vec::new();
    for net in 1..=2u8 {
        for a in 1..=5u8 {
            for b in (1..=5u8).filter(|&b| b != a) {
                runs.push((format!("n{a}"), BIG, v4(net, b)));
            }
        }
    }
    let outs = pings(&lab, &runs);
    let failed: BTreeSet<String> = runs
        .iter()
        .zip(&outs)
        .filter(|(_, o)| !o.status.success())
        .map(|((from, _, to), _)| format!("{from}->{to}"))
        .collect();
    let faulted = |net: u8, node: u8| {
        let mut v = BTreeSet::new();
        for other in (1..=5u8).filter(|&o| o != node) {
            v.insert(format!("n{node}->{}", v4(net, other)));
            v.insert(format!("n{other}->{}", v4(net, node)));
        }
        v
    };
    let want: BTreeSet<String> = faulted(1, 3).union(&faulted(2, 4)).cloned().collect();
    assert_eq!(failed, want, "pairs failing at 9000 bytes");
    // Silent both ways at the switch port: no frag-needed, no learned PMTU.
    for (from, to) in [("n1", v4(2, 4)), ("n4", v4(2, 1))] {
        let route = text(&lab.exec(from, &["ip", "route", "get", &to]));
        assert!(!route.contains("mtu"), "ICMP reached {from}: {route}");
    }
    let v6 = pings(
        &lab,
        &[
            ("n1".into(), BIG_V6, "fd6d:7475:19:2::2".into()),
            ("n1".into(), BIG_V6, "fd6d:7475:19:2::4".into()),
            ("n1".into(), SMALL, "198.19.2.4".into()),
        ],
    );
    assert!(v6[0].status.success(), "clean v6 pair: {}", text(&v6[0]));
    assert!(!v6[1].status.success(), "v6 through the 1500 port");
    assert!(v6[2].status.success(), "small ping through the 1500 port");
    let out = mtuperf(&["lab", "down", "--name", &lab.name]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(lab_netns(&prefix).is_empty(), "{:?}", lab_netns(&prefix));
    assert_eq!(host_links(), before, "the host's links changed");
    assert!(Lab::load(&lab.name).unwrap().is_none(), "state left behind");
}

/// A routed segment teaches the sender PMTU 1500 by ICMP; a black-hole one drops
/// big packets with no ICMP; both forward small ones (v4 by proxy ARP, v6 by proxy
/// NDP). Loss on n2 drops about the share asked of the echoes crossing it, and
/// `lab status` names every fault.
#[test]
fn cluster_routed_blackhole_and_loss_faults() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "4",
        "--nets",
        "1",
        "--fault",
        "routed=n3:1",
        "--fault",
        "blackhole=n4:1:1500",
        "--fault",
        "loss=n2:1:30",
    ]);
    let small = pings(
        &lab,
        &[
            ("n1".into(), SMALL, v4(1, 3)),
            ("n1".into(), SMALL, v4(1, 4)),
            ("n4".into(), SMALL, v4(1, 3)),
            (
                "n1".into(),
                &["ping", "-6", "-q", "-c", "1", "-W", "2"],
                "fd6d:7475:19:1::4".into(),
            ),
        ],
    );
    for o in &small {
        assert!(o.status.success(), "small ping: {}", text(o));
    }
    let big = pings(
        &lab,
        &[("n1".into(), BIG, v4(1, 3)), ("n1".into(), BIG, v4(1, 4))],
    );
    assert!(
        big.iter().all(|o| !o.status.success()),
        "big pings must fail"
    );
    let route = |to: &str| text(&lab.exec("n1", &["ip", "route", "get", to]));
    assert!(
        route(&v4(1, 3)).contains("mtu 1500"),
        "{}",
        route(&v4(1, 3))
    );
    assert!(!route(&v4(1, 4)).contains("mtu"), "{}", route(&v4(1, 4)));
    // 400 echoes to n2: the request and the reply each meet 30% loss (n2's input and
    // output on net1), so about 49% are answered.
    let flood = ["ping", "-q", "-c", "400", "-i", "0.002", "-W", "1"];
    let lossy = pings(&lab, &[("n1".into(), &flood, v4(1, 2))]);
    let got = received(&text(&lossy[0]));
    assert!(
        (120..=280).contains(&got),
        "received {got} of 400: {}",
        text(&lossy[0])
    );
    let st = mtuperf(&["lab", "status", "--name", &lab.name, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&st.stdout).expect("status JSON");
    assert_schema("lab-status", &v);
    let specs: Vec<&str> = v["cluster"]["faults"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["spec"].as_str())
        .collect();
    assert_eq!(
        specs,
        ["routed=n3:1:1500", "blackhole=n4:1:1500", "loss=n2:1:30"]
    );
    assert_eq!(v["cluster"]["faults"][1]["router"], "n4-net1-rt");
}

fn received(ping: &str) -> u32 {
    ping.split(',')
        .find_map(|p| p.trim().strip_suffix(" received"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// `lab serve` starts a keyed agent on every node; each answers on every network
/// from inside another node, `--json` lists every node's addresses and the key, and
/// `lab down` stops them.
#[test]
fn cluster_serve_starts_agents_reachable_from_other_nodes() {
    require_lab!(true);
    let lab = TestLab::up(&["--scenario", "cluster", "--nodes", "3", "--nets", "2"]);
    let out = mtuperf(&["lab", "serve", "--name", &lab.name, "--json"]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("serve JSON");
    assert_schema("lab-serve", &v);
    let st = mtuperf(&["lab", "status", "--name", &lab.name, "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&st.stdout).expect("status JSON");
    assert_schema("lab-status", &status);
    assert_eq!(status["hosts"][0]["agent"]["alive"], true, "{status:#}");
    let key = v["key_file"].as_str().expect("key file");
    assert!(std::path::Path::new(key).is_file(), "{key}");
    let agents = v["agents"].as_array().unwrap();
    let hosts: Vec<&str> = agents.iter().filter_map(|a| a["host"].as_str()).collect();
    assert_eq!(hosts, ["n1", "n2", "n3"]);
    let connect = "import socket, sys; socket.create_connection((sys.argv[1], 7878), 2).close()";
    for a in agents {
        assert_eq!(a["alive"], true, "{a}");
        let nets = a["nets"].as_array().unwrap();
        assert_eq!(nets.len(), 2, "{a}");
        let from = if a["host"] == "n1" { "n2" } else { "n1" };
        for n in nets {
            for addr in [n["v4"].as_str().unwrap(), n["v6"].as_str().unwrap()] {
                let c = lab.exec(from, &["python3", "-c", connect, addr]);
                assert!(
                    c.status.success(),
                    "agent on {addr} from {from}: {}",
                    text(&c)
                );
            }
        }
    }
    // The text form names the key and every node's addresses.
    let again = text(&mtuperf(&["lab", "serve", "--name", &lab.name]));
    assert!(
        again.contains(key) && again.contains("198.19.2.3"),
        "{again}"
    );
    let pids: Vec<u32> = Lab::load(&lab.name)
        .unwrap()
        .unwrap()
        .agents
        .iter()
        .map(|a| a.pid)
        .collect();
    assert_eq!(pids.len(), 3, "serving twice starts nothing new");
    assert!(Lab::down(&lab.name, false).unwrap());
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.contains(") Z"),
            "agent {pid} still runs: {stat}"
        );
    }
}

/// Bad sizes and faults are refused with the flag, the value and what is allowed,
/// before anything is built.
#[test]
fn cluster_refuses_bad_sizes_and_faults() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--nodes", "65"],
            "invalid value \"65\" for --nodes: allowed 2 to 64",
        ),
        (
            &["--nets", "5"],
            "invalid value \"5\" for --nets: allowed 1 to 4",
        ),
        (
            &["--fault", "nic-mtu=n9:1:1500"],
            "allowed a node from n1 to n4",
        ),
        (
            &["--fault", "mtu=n1:1"],
            "allowed nic-mtu, port-mtu, routed, blackhole, inbound, outbound, loss",
        ),
    ];
    for (args, want) in cases {
        let name = mtuperf_lab::unique_name();
        let argv = [
            &["lab", "up", "--name", &name, "--scenario", "cluster"][..],
            args,
        ]
        .concat();
        let out = mtuperf(&argv);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(want), "{args:?}: {}", text(&out));
        assert!(Lab::load(&name).unwrap().is_none());
    }
    let out = mtuperf(&["lab", "up", "--name", "x", "--fault", "loss=n1:1:5"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("add --scenario cluster"),
        "{}",
        text(&out)
    );
}

/// The library entry the mesh tests use: `LabOptions::cluster` through a `LabGuard`,
/// then the nodes' addresses from `Lab::cluster_status`; the guard removes the lab.
#[test]
fn cluster_builds_through_the_library_api() {
    require_lab!(false);
    let faults = ["port-mtu=n2:1:1500".to_string()];
    let spec = mtuperf_lab::cluster::parse(3, 1, &faults).unwrap();
    let prefix;
    {
        let lab = mtuperf_lab::LabGuard::up(mtuperf_lab::LabOptions::cluster("x", spec)).unwrap();
        prefix = format!("mtlab-{}-", lab.name);
        let st = lab.cluster_status().expect("a cluster lab");
        let addrs: Vec<String> = st
            .members
            .iter()
            .map(|m| format!("{} {}", m.name, m.addresses[0].v4))
            .collect();
        assert_eq!(addrs, ["n1 198.19.1.1", "n2 198.19.1.2", "n3 198.19.1.3"]);
        assert_eq!(st.faults[0].spec, "port-mtu=n2:1:1500");
        assert_eq!(lab_netns(&prefix).len(), 4);
        assert!(lab.scenarios.is_empty() && lab.agent_hosts().len() == 3);
    }
    assert!(lab_netns(&prefix).is_empty(), "{:?}", lab_netns(&prefix));
}

/// A cluster build cut short (no state file yet) leaves namespaces only: `lab down`
/// still finds every host name a cluster can have and removes them.
#[test]
fn down_removes_an_interrupted_cluster_without_state() {
    require_lab!(false);
    let name = mtuperf_lab::unique_name();
    // Removes them even if an assertion fails first.
    let _guard = TestLab { name: name.clone() };
    let prefix = format!("mtlab-{name}-");
    for host in ["n7", "sw2", "n3-net2-rt", "n64"] {
        let ns = format!("{prefix}{host}");
        let out = Command::new("ip")
            .args(["netns", "add", &ns])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    assert_eq!(lab_netns(&prefix).len(), 4);
    let out = mtuperf(&["lab", "down", "--name", &name]);
    assert!(text(&out).contains("removed"), "{}", text(&out));
    assert!(lab_netns(&prefix).is_empty(), "{:?}", lab_netns(&prefix));
}
