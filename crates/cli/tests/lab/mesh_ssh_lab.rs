//! `mesh --ssh` end to end in a cluster lab with an OpenSSH server in every node (issue
//! 31): real sshd, real ssh client with the lab's generated keys (`lab sshd`), real
//! namespaces (root needed; otherwise each test prints why and passes). The nodes are
//! namespaces of one machine sharing one filesystem and process table, so "nothing
//! left behind" is: no mtuperf process in any node namespace, no ssh client left in
//! the coordinator's, and each node's session TMPDIR (`lab sshd` gives each its own)
//! empty.
use crate::lab_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use lab_support::{mtuperf, text, TestLab, BIN};
use mtuperf_lab::Lab;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Why these tests cannot run here (besides the lab's own needs): OpenSSH missing.
fn ssh_missing() -> Option<String> {
    if !std::path::Path::new(mtuperf_lab::SSHD).is_file() {
        return Some(format!(
            "{} not found (apt-get install openssh-server)",
            mtuperf_lab::SSHD
        ));
    }
    ["ssh", "ssh-keygen"]
        .into_iter()
        .find(|t| !mtuperf_lab::env::tool_in_path(t))
        .map(|t| format!("{t} not in PATH (apt-get install openssh-client)"))
}

macro_rules! require_ssh_lab {
    () => {
        require_lab!(false);
        if let Some(why) = ssh_missing() {
            eprintln!("skipping: {why}");
            return;
        }
    };
}

/// A cluster lab with sshd in every node.
struct SshLab {
    lab: TestLab,
    config: String,
    nodes: u8,
    /// Each node's sshd pid.
    sshd: Vec<u32>,
    /// Dropped last: the machine share is given back once the lab is down.
    _heavy: lab_support::Heavy,
}

impl SshLab {
    fn up(nodes: u8, nets: u8, faults: &[&str]) -> SshLab {
        let heavy = lab_support::Heavy::take();
        let (n, k) = (nodes.to_string(), nets.to_string());
        let mut args = vec!["--scenario", "cluster", "--nodes", &n, "--nets", &k];
        for f in faults {
            args.extend(["--fault", f]);
        }
        let lab = TestLab::up(&args);
        let out = mtuperf(&["lab", "sshd", "--name", &lab.name, "--json"]);
        assert!(out.status.success(), "lab sshd: {}", text(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let config = doc["config"].as_str().unwrap().to_string();
        let sshd = doc["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["pid"].as_u64().unwrap() as u32)
            .collect();
        SshLab {
            lab,
            config,
            nodes,
            sshd,
            _heavy: heavy,
        }
    }

    /// The coordinator: `mtuperf ARGS` started directly inside n1 (so a signal sent to
    /// the child reaches mtuperf itself), stdout and stderr piped.
    fn coordinator(&self, args: &[&str]) -> Child {
        let lab = Lab::load(&self.lab.name).unwrap().unwrap();
        let argv: Vec<String> = std::iter::once(BIN)
            .chain(args.iter().copied())
            .map(String::from)
            .collect();
        lab.exec_command("n1", &argv)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// `--no-store mesh --ssh --ssh-command "ssh -F CONFIG" --ssh-copy always
    /// --net 198.19.0.0/16 EXTRA... n1..nN`: the copy path is always taken (the lab's
    /// nodes have no mtuperf on their PATH anyway).
    fn mesh_args(&self, extra: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = [
            "--no-store",
            "mesh",
            "--ssh",
            "--ssh-command",
            &format!("ssh -F {}", self.config),
            "--ssh-copy",
            "always",
            "--net",
            "198.19.0.0/16",
        ]
        .iter()
        .map(ToString::to_string)
        .collect();
        v.extend(extra.iter().map(ToString::to_string));
        v.extend((1..=self.nodes).map(|i| format!("n{i}")));
        v
    }

    /// What a run left: mtuperf processes in the node namespaces, ssh clients in
    /// n1's, entries in the nodes' session TMPDIRs.
    fn leftovers(&self) -> Vec<String> {
        let lab = Lab::load(&self.lab.name).unwrap().unwrap();
        let mut left = Vec::new();
        for i in 1..=self.nodes {
            let node = format!("n{i}");
            let ns = lab.netns(&node).unwrap();
            for pid in mtuperf_sys::netns::pids(&ns) {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                let comm = comm.trim();
                if comm == "mtuperf" || (i == 1 && comm == "ssh") {
                    let args = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                    left.push(format!(
                        "{node}: pid {pid} {comm}: {}",
                        String::from_utf8_lossy(&args).replace('\0', " ")
                    ));
                }
            }
            let tmp = lab.ssh_dir().join(format!("tmp-{node}"));
            for e in std::fs::read_dir(&tmp).unwrap() {
                left.push(format!("{node}: {}", e.unwrap().path().display()));
            }
        }
        left
    }

    /// Polls [`Self::leftovers`] until empty or `limit` passes; what is left then.
    fn leftovers_within(&self, limit: Duration) -> Vec<String> {
        let until = Instant::now() + limit;
        loop {
            let left = self.leftovers();
            if left.is_empty() || Instant::now() >= until {
                return left;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Validates `doc` against `schemas/mesh.schema.json`.
fn assert_mesh_schema(doc: &serde_json::Value) {
    let path = format!(
        "{}/../../schemas/mesh.schema.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "mesh schema: {errors:?}");
}

/// The pids of mtuperf processes in `node`'s namespace.
fn agents_in(l: &SshLab, node: &str) -> Vec<u32> {
    let lab = Lab::load(&l.lab.name).unwrap().unwrap();
    let ns = lab.netns(node).unwrap();
    mtuperf_sys::netns::pids(&ns)
        .into_iter()
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/comm")).is_ok_and(|c| c.trim() == "mtuperf")
        })
        .collect()
}

/// Reads stderr lines until `n` agents said ready (or stderr ends): the lines read.
fn wait_ready(child: &mut Child, n: usize) -> Vec<String> {
    let err = child.stderr.take().unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(err).lines() {
        let line = line.unwrap();
        lines.push(line);
        if lines
            .iter()
            .filter(|l| l.contains(" ready: agent on "))
            .count()
            == n
        {
            break;
        }
    }
    lines
}

/// Waits for `child` to exit within `limit` (killed and failed otherwise).
fn exit_within(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let until = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() >= until {
            let _ = child.kill();
            panic!("the coordinator did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Five nodes, two networks, n2's NIC on net1 at 1500 and sw2's port toward n4 at 1500:
/// from nothing installed (this binary copied to each node, its checksum checked), the
/// mesh names exactly the two faults, every node said ready and had its directory
/// removed, and nothing is left in any node.
#[test]
fn mesh_over_ssh_names_the_faults_and_leaves_nothing() {
    require_ssh_lab!();
    let l = SshLab::up(5, 2, &["nic-mtu=n2:1:1500", "port-mtu=n4:2:1500"]);
    let mut args = l.mesh_args(&["--json"]);
    args.insert(0, BIN.into());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let t0 = Instant::now();
    let out = l.lab.exec("n1", &argv);
    eprintln!(
        "mesh --ssh, 5 nodes x 2 networks from nothing installed: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    for i in 1..=5 {
        assert!(
            err.contains(&format!("ssh: n{i} ready: agent on 198.19.1.{i}:"))
                && err.contains(&format!("tmp-n{i}/mtuperf-ssh.")),
            "n{i} not ready with a copied binary: {err}"
        );
    }
    assert!(
        err.contains("this mtuperf copied to") && err.contains("SHA-256 checked"),
        "{err}"
    );
    assert!(
        err.contains("private directories removed on 5 of 5 nodes"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(String, String, String)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let node = &doc["nodes"][f["node"].as_u64().unwrap() as usize]["label"];
            let net = &doc["networks"][f["net"].as_u64().unwrap() as usize]["name"];
            (
                f["diagnosis"]["class"].as_str().unwrap().into(),
                node.as_str().unwrap().into(),
                net.as_str().unwrap().into(),
            )
        })
        .collect();
    let want = [("nic_mtu", "n2", "A"), ("switch_port", "n4", "B")]
        .map(|(k, n, x)| (k.to_string(), n.to_string(), x.to_string()));
    assert_eq!(found, want, "{}", String::from_utf8_lossy(&out.stdout));
    // Each node's agent listened on its interconnect addresses only.
    assert_eq!(doc["networks"].as_array().unwrap().len(), 2);
    let left = l.leftovers();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A node whose sshd is not running is a finding naming it and ssh's own words; the
/// other nodes are still checked (their pair passes) and nothing is left.
#[test]
fn a_node_without_sshd_is_named_and_the_others_are_checked() {
    require_ssh_lab!();
    let l = SshLab::up(3, 1, &[]);
    kill(Pid::from_raw(l.sshd[2] as i32), Signal::SIGKILL).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut args = l.mesh_args(&["--json"]);
    args.insert(0, BIN.into());
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = l.lab.exec("n1", &argv);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ssh: n3 failed: ssh: connect to host 198.19.1.3 port 22: Connection refused"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_mesh_schema(&doc);
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["kind"], "unreachable");
    // Stored typed: the step and ssh's own words as the cause, no sentence of ours.
    let error = &findings[0]["error"];
    assert_eq!(error["kind"], "ssh", "{error}");
    assert_eq!(error["failure"]["step"], "connect", "{error}");
    assert_eq!(error["failure"]["cause"]["kind"], "said", "{error}");
    assert_eq!(
        error["failure"]["cause"]["text"],
        "ssh: connect to host 198.19.1.3 port 22: Connection refused"
    );
    assert_eq!(&doc["nodes"][2]["error"], error);
    // n1 and n2 were checked: their cells carry 9000 both ways.
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2, "{cells:?}");
    assert!(cells.iter().all(|c| c["verdict"] == "ok"), "{cells:?}");
    let left = l.leftovers();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A node's agent that dies mid-run (kill -9 on the node): the run goes on, the pairs
/// with that node are findings naming it, its trap removed its directory, and nothing
/// is left anywhere.
#[test]
fn a_node_whose_agent_dies_mid_run_is_named_and_cleaned() {
    require_ssh_lab!();
    let l = SshLab::up(3, 1, &[]);
    let args = l.mesh_args(&[
        "--tests",
        "path,rr",
        "--time",
        "2s",
        // Open-loop rr: the agents run, without taking the CPU the other tests need.
        "--rate",
        "200",
        "--max-block-p99",
        "10s",
        "--json",
    ]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut c = l.coordinator(&argv);
    wait_ready(&mut c, 3);
    std::thread::sleep(Duration::from_secs(1));
    let victims = agents_in(&l, "n3");
    assert_eq!(victims.len(), 1, "one agent on n3: {victims:?}");
    kill(Pid::from_raw(victims[0] as i32), Signal::SIGKILL).unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut c.stdout.take().unwrap(), &mut rest).unwrap();
    let status = exit_within(&mut c, Duration::from_mins(2));
    assert_eq!(status.code(), Some(1), "{rest}");
    let doc: serde_json::Value = serde_json::from_str(&rest).unwrap();
    assert_mesh_schema(&doc);
    let findings = doc["findings"].as_array().unwrap();
    let n3 = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n["label"] == "n3")
        .unwrap();
    assert!(
        findings.iter().any(|f| f["node"] == n3),
        "no finding names n3: {findings:?}"
    );
    let left = l.leftovers();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// Ctrl-C of the coordinator while the agents run: it stops them all (exit 130) and
/// nothing is left once it has exited.
#[test]
fn ctrl_c_of_the_coordinator_stops_every_agent() {
    require_ssh_lab!();
    let l = SshLab::up(4, 1, &[]);
    let args = l.mesh_args(&[
        "--tests",
        "path,rr,stream",
        "--time",
        "3s",
        // Open-loop rr: the agents run, without taking the CPU the other tests need.
        "--rate",
        "200",
        "--max-block-p99",
        "10s",
    ]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut c = l.coordinator(&argv);
    let said = wait_ready(&mut c, 4);
    assert_eq!(
        said.iter().filter(|s| s.contains(" ready: ")).count(),
        4,
        "{said:?}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert!(!l.leftovers().is_empty(), "the agents run during the mesh");
    kill(Pid::from_raw(c.id() as i32), Signal::SIGINT).unwrap();
    let status = exit_within(&mut c, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    let left = l.leftovers();
    assert!(left.is_empty(), "left behind after Ctrl-C: {left:?}");
}

/// `kill -9` of the coordinator: nobody says stop, but every agent sees its SSH
/// channel close (or, failing that, its lease and its lifetime end it): within a
/// deadline nothing is left, ssh clients included.
#[test]
fn kill_9_of_the_coordinator_leaves_nothing_once_the_agents_notice() {
    require_ssh_lab!();
    let l = SshLab::up(4, 1, &[]);
    let args = l.mesh_args(&[
        "--tests",
        "path,rr,stream",
        "--time",
        "3s",
        // Open-loop rr: the agents run, without taking the CPU the other tests need.
        "--rate",
        "200",
        "--ssh-lifetime",
        "40s",
    ]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut c = l.coordinator(&argv);
    wait_ready(&mut c, 4);
    std::thread::sleep(Duration::from_secs(1));
    assert!(!l.leftovers().is_empty(), "the agents run during the mesh");
    c.kill().unwrap();
    c.wait().unwrap();
    let t0 = Instant::now();
    let left = l.leftovers_within(Duration::from_secs(45));
    eprintln!(
        "after kill -9: nothing left after {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(left.is_empty(), "left behind after kill -9: {left:?}");
}

/// A coordinator that hangs (SIGSTOP: its SSH connections stay up, its pings stop):
/// the agents' hard lifetime (`--ssh-lifetime 10s`, shorter than their 20 s lease)
/// ends them and their directories go; once the coordinator is gone, nothing is left.
#[test]
fn a_hung_coordinator_is_outlived_by_the_agents_lifetime() {
    require_ssh_lab!();
    let l = SshLab::up(3, 1, &[]);
    let args = l.mesh_args(&[
        "--tests",
        "path,rr,stream",
        "--time",
        "5s",
        // Open-loop rr: the agents run, without taking the CPU the other tests need.
        "--rate",
        "200",
        "--ssh-lifetime",
        "10s",
    ]);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut c = l.coordinator(&argv);
    wait_ready(&mut c, 3);
    let pid = Pid::from_raw(c.id() as i32);
    kill(pid, Signal::SIGSTOP).unwrap();
    let t0 = Instant::now();
    // Only the nodes' side: the coordinator itself is stopped, not gone, and the ssh
    // clients of a stopped parent stay as zombies.
    let me = format!("pid {} ", c.id());
    let agents_left = || {
        let all = l.leftovers().into_iter();
        all.filter(|x| !x.contains(" ssh: ") && !x.contains(&me))
            .collect::<Vec<_>>()
    };
    let until = t0 + Duration::from_secs(40);
    while !agents_left().is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
    }
    let left = agents_left();
    eprintln!(
        "hung coordinator: agents gone after {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    kill(pid, Signal::SIGKILL).unwrap();
    c.wait().unwrap();
    assert!(
        left.is_empty(),
        "left behind while the coordinator hung: {left:?}"
    );
    let left = l.leftovers_within(Duration::from_secs(10));
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// `lab sshd` refuses a lab that is not a cluster, naming what it needs.
#[test]
fn lab_sshd_needs_a_cluster_lab() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "std"]);
    let out = mtuperf(&["lab", "sshd", "--name", &lab.name]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("a cluster lab"), "{}", text(&out));
}
