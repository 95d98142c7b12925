//! `mtuperf mesh` against faults in a cluster lab (issue 28: deadlines; issue 34:
//! an interrupted mesh, findings grouped by cause), with the real binary, real
//! agents and real namespaces (root needed; otherwise each test prints why and
//! passes). The orchestrator runs inside node n1: traffic stays in the lab.
use crate::lab_support;

use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use lab_support::{mtuperf, text, TestLab, BIN};
use mtuperf_lab::Lab;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Validates `doc` against `schemas/mesh.schema.json`.
fn assert_schema(doc: &serde_json::Value) {
    let path = format!(
        "{}/../../schemas/mesh.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "mesh: {errors:?}\n{doc:#}");
}

/// Sends SIGCONT to a stopped agent on drop, so the lab can be taken down even when
/// an assertion fails first.
struct Stopped(Pid);
impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGCONT);
    }
}

/// A 4-node, 1-network cluster lab with its keyed agents (extra agent arguments after
/// `--`).
fn cluster(agent_args: &[&str]) -> TestLab {
    let lab = TestLab::up(&["--scenario", "cluster", "--nodes", "4", "--nets", "1"]);
    let mut argv = vec!["lab", "serve", "--name", &lab.name];
    if !agent_args.is_empty() {
        argv.push("--");
        argv.extend(agent_args);
    }
    let serve = mtuperf(&argv);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    lab
}

/// Starts `mtuperf --no-store mesh ARGS n1=… n4=…` inside n1, output piped.
fn start_mesh(lab: &TestLab, args: &[&str]) -> Child {
    let mut argv = vec![BIN, "--no-store", "mesh"];
    argv.extend(args);
    argv.extend([
        "n1=198.19.1.1",
        "n2=198.19.1.2",
        "n3=198.19.1.3",
        "n4=198.19.1.4",
    ]);
    lab.exec_cmd("n1", &argv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mesh")
}

/// Waits for `child` (at most `limit`), returning its exit code, stdout and stderr.
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String, String) {
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let o = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let e = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            panic!("mesh did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    (status.code(), o.join().unwrap(), e.join().unwrap())
}

/// The pid of node `host`'s agent, as `lab serve` recorded it.
fn agent_pid(lab: &TestLab, host: &str) -> Pid {
    let state = Lab::load(&lab.name).unwrap().unwrap();
    let a = state.agents.iter().find(|a| a.host == host).unwrap();
    Pid::from_raw(i32::try_from(a.pid).unwrap())
}

/// The mesh process started in n1 (found by its command line in n1's namespace).
fn mesh_pid(lab: &TestLab) -> Option<Pid> {
    let ns = Lab::load(&lab.name).ok()??.netns("n1")?;
    mtuperf_sys::netns::pids(&ns).into_iter().find_map(|pid| {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        (args.iter().any(|a| *a == b"mesh") && !args.iter().any(|a| *a == b"exec"))
            .then(|| Pid::from_raw(i32::try_from(pid).unwrap()))
    })
}

/// n3's agent is stopped (SIGSTOP) 0.3 s into `--tests path,rr,stream`: the mesh
/// names n3, marks its pairs not measured, measures every other pair, and ends
/// within the deadline it printed at the start, far inside one --pair-timeout (109 s
/// before, for 3 × 60 s of deadlines).
#[test]
fn a_stopped_agent_is_named_and_the_rest_of_the_mesh_completes() {
    require_lab!(false);
    let lab = cluster(&[]);
    let n3 = agent_pid(&lab, "n3");
    let t0 = Instant::now();
    let child = start_mesh(
        &lab,
        &[
            "--json",
            "--max-block-p99",
            "10s",
            "--tests",
            "path,rr,stream",
            "--time",
            "500ms",
            "--net",
            "198.19.0.0/16",
        ],
    );
    std::thread::sleep(Duration::from_millis(300));
    kill(n3, Signal::SIGSTOP).unwrap();
    let stopped = Stopped(n3);
    let (code, out, err) = finish(child, Duration::from_mins(4));
    let took = t0.elapsed();
    drop(stopped);
    eprintln!(
        "mesh with n3 stopped 0.3 s in: {:.1} s\n{err}",
        took.as_secs_f64()
    );
    assert_eq!(code, Some(1), "{out}\n{err}");
    assert!(took < Duration::from_mins(1), "took {took:?}: {err}");
    assert!(err.contains("deadline"), "the deadline is printed: {err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("mesh JSON");
    assert_schema(&doc);
    assert!(
        doc["elapsed_ms"].as_u64() <= doc["deadline_ms"].as_u64(),
        "{doc:#}"
    );
    let findings = doc["findings"].as_array().unwrap();
    let kinds: Vec<&str> = findings.iter().filter_map(|f| f["kind"].as_str()).collect();
    assert_eq!(kinds, ["node_silent"], "{findings:#?}");
    assert_eq!(findings[0]["node"], 2);
    assert_eq!(findings[0]["silence"], "no_answer");
    for p in doc["pairs"].as_array().unwrap() {
        let with_n3 = p["from"] == 2 || p["to"] == 2;
        if with_n3 {
            assert!(
                p["failed"].as_array().is_none_or(Vec::is_empty),
                "no test with n3 is called failed: {p}"
            );
            if p["path"].is_null() {
                assert_eq!(p["not_measured"][0]["why"]["cause"], "node_silent", "{p}");
            }
        } else {
            for t in ["path", "rr", "stream"] {
                assert!(p.get(t).is_some(), "{t} of {p}");
            }
        }
    }
}

/// With `--allow 198.19.0.0/16` on every agent (as the docs advise) and no `--net`,
/// the mesh also tries the lab's IPv6 network, whose senders every agent refuses:
/// one finding for that cause with the count and examples, not one per pair; the
/// IPv4 network is measured and clean.
#[test]
fn refusals_of_one_cause_are_one_finding() {
    require_lab!(false);
    let lab = cluster(&["--allow", "198.19.0.0/16"]);
    let (code, out, err) = finish(start_mesh(&lab, &["--json"]), Duration::from_mins(3));
    assert_eq!(code, Some(1), "{out}\n{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("mesh JSON");
    assert_schema(&doc);
    let nets: Vec<&str> = doc["networks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n["cidr"].as_str())
        .collect();
    assert_eq!(nets.len(), 2, "{nets:?}");
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:#?}");
    let f = &findings[0];
    assert_eq!(f["kind"], "tests_failed");
    assert_eq!(f["count"], 12, "{f}");
    assert_eq!(f["examples"].as_array().unwrap().len(), 3, "{f}");
    assert_eq!(
        f["examples"][0]["error"]["refusal"]["reason"], "peer_not_authenticated",
        "{f}"
    );
    let v4 = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "ok")
        .count();
    assert_eq!(v4, 12, "the IPv4 network's 12 cells carry 9000");
    // The text: the cause once, with the count and three examples.
    let (_, t, _) = finish(start_mesh(&lab, &[]), Duration::from_mins(3));
    assert!(t.contains("findings (1):"), "{t}");
    assert!(
        t.contains("12 tests failed on net B") && t.contains("the peer's agent refused the sender"),
        "{t}"
    );
    assert_eq!(
        t.matches("is not allowed by the agent's --allow list")
            .count(),
        3,
        "{t}"
    );
}

/// Ctrl-C while the mesh runs: it says so once, with what was measured, prints the
/// cells it has, calls no interrupted pair a finding, and exits 130.
#[test]
fn an_interrupted_mesh_says_so_once_with_what_was_measured() {
    require_lab!(false);
    let lab = cluster(&[]);
    let child = start_mesh(
        &lab,
        &[
            "--max-block-p99",
            "10s",
            "--tests",
            "path,rr,stream",
            "--time",
            "2s",
            "--net",
            "198.19.0.0/16",
        ],
    );
    // Into the load tests: the path tests take a few seconds, each load round 2 s.
    let t0 = Instant::now();
    let pid = loop {
        if let Some(p) = mesh_pid(&lab) {
            break p;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no mesh process in n1"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_secs(6));
    kill(pid, Signal::SIGINT).unwrap();
    let (code, out, err) = finish(child, Duration::from_mins(1));
    assert_eq!(code, Some(130), "{out}\n{err}");
    assert_eq!(out.matches("interrupted after").count(), 1, "{out}");
    assert!(
        out.contains("pair tests not measured (no finding is drawn from them)"),
        "{out}"
    );
    assert!(!out.contains("failed"), "{out}");
    assert!(out.contains("no findings"), "{out}");
}
