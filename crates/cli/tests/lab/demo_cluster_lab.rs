//! `mtuperf demo --cluster` end to end, with the real binary and real namespaces (root
//! needed; otherwise the lab part prints why and passes): a 6-node, 2-network cluster
//! lab with two faults, a path-only mesh from inside n1, the lab removed afterwards.
use crate::lab_support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use lab_support::{mtuperf, output_within, text, BIN};
use mtuperf_lab::STATE_ROOT;

/// `--cluster` takes neither `--loopback` nor the compare demo's `--time`/`--repeat`.
#[test]
fn demo_cluster_refuses_the_plain_demos_flags() {
    for extra in [
        ["--loopback"].as_slice(),
        &["--time", "1s"],
        &["--repeat", "3"],
    ] {
        let mut argv = vec!["--no-store", "demo", "--cluster"];
        argv.extend(extra);
        let out = mtuperf(&argv);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", text(&out));
        assert!(text(&out).contains("cannot be used with"), "{}", text(&out));
    }
}

/// The demo finishes in under a minute, exits 0, prints both matrices and findings that
/// name n3's NIC on net A (net1) and n5's switch port on net B (net2), writes the
/// mesh grid, and leaves no namespace, agent state or lab behind.
#[test]
fn demo_cluster_finds_both_faults_in_under_a_minute_and_removes_its_lab() {
    require_lab!(false);
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir.path())
        .args(["--no-store", "demo", "--cluster", "-o", "grid.html"]);
    let t0 = Instant::now();
    // A stall guard well above the bound, so a slow run fails on the assertion below
    // with its output rather than by being killed.
    let out = output_within(cmd, Duration::from_mins(4));
    let took = t0.elapsed();
    let all = text(&out);
    eprintln!("demo --cluster: {:.1} s", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(took < Duration::from_mins(1), "took {took:?}:\n{all}");
    assert!(
        all.contains("mesh: 6 nodes, 2 networks, 60 pairs: "),
        "{all}"
    );
    assert!(all.contains("net A  198.19.1.0/24  expect 9000"), "{all}");
    assert!(all.contains("net B  198.19.2.0/24  expect 9000"), "{all}");
    // The plain answer first: stdout starts with it (progress went to stderr).
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("NOT ready: the NIC of node n3 on net A is at 1500 (expected 9000): ip link set dev net1 mtu 9000 on node n3"),
        "{all}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("demo: building cluster lab"),
        "progress on stderr: {all}"
    );
    assert!(
        all.contains(
            "NIC net1 of node n3 on net A (198.19.1.0/24) is at MTU 1500, below the network's 9000"
        ),
        "{all}"
    );
    assert!(
        all.contains("every path through node n5 on net B (198.19.2.0/24) stops above 1500 in both directions, silently"),
        "{all}"
    );
    assert!(
        all.contains("the mesh named exactly the two injected faults"),
        "{all}"
    );
    // The RAC answer (issue 30): the block test on every pair, the checks per
    // network, the kernel counters; blocks lost only through the faulty nodes.
    assert!(
        all.contains("rr: UDP 8 KiB blocks for 128 B requests, one in flight per pair; a block unanswered within 500 ms is lost"),
        "{all}"
    );
    assert!(
        all.contains("checks (per network, as cluvfy prints them):"),
        "{all}"
    );
    for net in ["net A  198.19.1.0/24", "net B  198.19.2.0/24"] {
        for (check, status) in [
            ("MTU 9000 both ways", "FAILED"),
            ("reachability", "PASSED"),
            ("lost blocks = 0", "FAILED"),
        ] {
            assert!(
                all.lines().any(|l| l.starts_with(&format!("  {net}"))
                    && l.contains(check)
                    && l.contains(status)),
                "{net} {check} {status}:\n{all}"
            );
        }
    }
    assert_eq!(all.matches("rr block latency p50/p99").count(), 2, "{all}");
    assert!(all.contains("\nkernel counters over the run"), "{all}");
    assert!(
        all.contains("(RAC's gc blocks lost), every one through those faults' nodes; its p99 check's limit is 50ms here"),
        "{all}"
    );
    // Each faulty node's row: flagged toward all five others, nothing else flagged.
    assert_eq!(all.matches("NIC 1500|1500").count(), 10, "{all}");
    assert_eq!(all.matches("PORT 1500|1500").count(), 10, "{all}");
    assert_eq!(all.matches("ok 9000").count(), 40, "{all}");
    let html = std::fs::read_to_string(dir.path().join("grid.html")).expect("grid.html");
    assert!(html.contains("<table class=\"grid\">"), "grid");
    // The lab is gone: namespaces, state, agents.
    let name = all
        .split("building cluster lab \"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("lab name in the output")
        .to_string();
    assert!(all.contains("lab removed"), "{all}");
    assert_lab_gone(&name);
}

/// No namespace or state of lab `name` is left.
fn assert_lab_gone(name: &str) {
    let prefix = format!("mtlab-{name}-");
    let left: Vec<String> = std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    assert!(
        !std::path::Path::new(STATE_ROOT).join(name).exists(),
        "lab state left"
    );
}

/// Ctrl-C sent to the demo alone while the mesh runs: the demo stops the mesh, prints
/// what it has, exits 130 and removes its lab.
#[test]
fn demo_cluster_interrupted_removes_its_lab() {
    require_lab!(false);
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .args(["--no-store", "demo", "--cluster", "-o", "grid.html"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mtuperf");
    // Progress comes on stderr (stdout starts with the results), each line as it
    // happens.
    let (tx, rx) = std::sync::mpsc::channel();
    let lines = |pipe: Box<dyn std::io::Read + Send>,
                 tx: Option<std::sync::mpsc::Sender<String>>| {
        std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                if let Some(tx) = &tx {
                    let _ = tx.send(line.clone());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        })
    };
    let progress = lines(Box::new(child.stderr.take().unwrap()), Some(tx));
    let results = lines(Box::new(child.stdout.take().unwrap()), None);
    let mut name = None;
    loop {
        let line = rx
            .recv_timeout(Duration::from_mins(2))
            .expect("the demo says it runs the mesh");
        if let Some(n) = line.split("building cluster lab \"").nth(1) {
            name = n.split('"').next().map(str::to_string);
        }
        if line.contains("running `mtuperf mesh") {
            break;
        }
    }
    let name = name.expect("lab name in the output");
    // Some pairs under way, not all (the whole mesh takes well over a second).
    std::thread::sleep(Duration::from_secs(1));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let deadline = Instant::now() + Duration::from_mins(2);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("the demo did not stop within 2 min of Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let all = format!("{}{}", results.join().unwrap(), progress.join().unwrap());
    assert_eq!(status.code(), Some(130), "{all}");
    assert!(all.contains("lab removed"), "{all}");
    assert_lab_gone(&name);
}
