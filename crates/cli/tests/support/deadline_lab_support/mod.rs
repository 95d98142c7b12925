//! Helpers of the deadline lab tests: a one-scenario lab with its agent, a client
//! command run in the lab's client namespace with its own history, faults injected
//! in the agent's namespace (nftables drop-all, SIGSTOP of the agent), and the stored
//! run read back.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mtuperf_lab::{check_environment, LabGuard, LabOptions, Scenario};

use crate::agent_support::AgentProc;

pub const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

/// A lab (std scenario only) with its agent serving, or None without privileges or
/// nftables (the test is then skipped, saying why).
pub fn lab() -> Option<LabGuard> {
    lab_at(None)
}

/// As [`lab`], with every link shaped to `rate` bit/s when given.
pub fn lab_at(rate: Option<u64>) -> Option<LabGuard> {
    if let Err(e) = check_environment() {
        eprintln!("skipped: {e}");
        return None;
    }
    if !mtuperf_lab::env::tool_in_path("nft") {
        eprintln!("skipped: nft (nftables) not in PATH");
        return None;
    }
    std::env::set_var("MTUPERF_BIN", BIN);
    let mut lab = LabGuard::up(LabOptions {
        scenarios: vec![Scenario::Std],
        rate,
        ..LabOptions::default()
    })
    .unwrap();
    lab.serve(&[]).unwrap();
    Some(lab)
}

/// The live interval lines asked of a client whose test's start must be known.
pub const LIVE: [&str; 2] = ["--interval", "500ms"];

/// A client command running in the lab's client namespace, with its own history.
/// Its stdout is read as it comes, so the first live interval line (with [`LIVE`])
/// tells when its test really started, however slow the start on a loaded host.
pub struct Client {
    pub child: Child,
    pub started: Instant,
    pub db: PathBuf,
    first_line: Arc<OnceLock<Instant>>,
    stdout: Option<std::thread::JoinHandle<String>>,
    dir: tempfile::TempDir,
}

impl Client {
    /// Starts `mtuperf --db DB CMD TARGET ARGS` in the client namespace.
    pub fn start(lab: &LabGuard, cmd: &str, args: &[&str]) -> Client {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.db");
        let target = lab.target(Scenario::Std).unwrap().to_string();
        let mut argv: Vec<String> = vec![
            BIN.into(),
            "--db".into(),
            db.display().to_string(),
            cmd.into(),
            target,
        ];
        argv.extend(args.iter().map(|s| (*s).to_string()));
        let mut child = lab
            .exec_command("client", &argv)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let first_line = Arc::new(OnceLock::new());
        let out = child.stdout.take().unwrap();
        let seen = first_line.clone();
        let stdout = std::thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                // stream: "0.00-0.50", rr: "0.00 -   0.50".
                let compact: String = line.split_whitespace().collect();
                if compact.starts_with("0.00-0.50") {
                    let _ = seen.set(Instant::now());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        Client {
            child,
            started: Instant::now(),
            db,
            first_line,
            stdout: Some(stdout),
            dir,
        }
    }

    /// Sleeps until `secs` after the test's start: the first live interval line
    /// (0.5 s in) minus 0.5 s. Needs [`LIVE`] in the arguments.
    pub fn at(&self, secs: f64) {
        let limit = Instant::now() + Duration::from_secs(30);
        let first = loop {
            if let Some(t) = self.first_line.get() {
                break *t;
            }
            assert!(Instant::now() < limit, "the client's test never started");
            std::thread::sleep(Duration::from_millis(10));
        };
        let t = first + Duration::from_secs_f64((secs - 0.5).max(0.0));
        std::thread::sleep(t.saturating_duration_since(Instant::now()));
    }

    pub fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{sig} client");
    }

    /// Waits for the exit (killed after `within`, which fails the test); returns the
    /// output and how long the client ran from its test's start (or its spawn).
    pub fn finish(mut self, within: Duration) -> (Output, Duration, PathBuf, tempfile::TempDir) {
        let from = self.first_line.get().map_or(self.started, |t| {
            t.checked_sub(Duration::from_millis(500)).unwrap_or(*t)
        });
        while self.child.try_wait().unwrap().is_none() {
            if from.elapsed() > within {
                let _ = self.child.kill();
                let out = self.child.wait_with_output().unwrap();
                panic!(
                    "client still running after {within:?}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let took = from.elapsed();
        let mut out = self.child.wait_with_output().unwrap();
        out.stdout = self
            .stdout
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
            .into_bytes();
        (out, took, self.db, self.dir)
    }
}

/// Drops every packet in and out of the agent's namespace (nftables).
pub fn drop_all(lab: &LabGuard) {
    let ns = lab.netns(Scenario::Std.server_host()).unwrap();
    let rules = "table inet mtuperf_drop {\n chain in { type filter hook input priority -300; policy drop; }\n chain out { type filter hook output priority -300; policy drop; }\n}\n";
    let mut c = Command::new("ip")
        .args(["netns", "exec", &ns, "nft", "-f", "-"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut c.stdin.take().unwrap(), rules.as_bytes()).unwrap();
    assert!(c.wait().unwrap().success(), "nft drop-all in {ns}");
}

/// The pid of the lab's agent.
pub fn agent_pid(lab: &LabGuard) -> u32 {
    lab.agents
        .iter()
        .find(|a| a.host == Scenario::Std.server_host())
        .map(|a| a.pid)
        .expect("agent started")
}

pub fn kill(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

/// The last stored run's flag and document.
pub fn last_run(db: &std::path::Path) -> (bool, serde_json::Value) {
    let store = mtuperf_store::Store::open(db).unwrap();
    let run = store.last().unwrap().expect("a run was stored");
    (
        run.interrupted,
        serde_json::from_str(&run.document).unwrap(),
    )
}

/// (start s, end s, bytes or blocks moved) of each client interval of a stored
/// document.
pub fn client_intervals(doc: &serde_json::Value) -> Vec<(f64, f64, u64)> {
    let result = doc["runs"][0]["result"]
        .as_object()
        .or_else(|| doc["steps"][0]["result"].as_object())
        .expect("a stream or rr result");
    result["client"]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let moved = ["bytes_sent", "bytes_received", "blocks"]
                .iter()
                .map(|k| i[*k].as_u64().unwrap_or(0))
                .sum();
            (
                i["start_ns"].as_f64().unwrap() / 1e9,
                i["end_ns"].as_f64().unwrap() / 1e9,
                moved,
            )
        })
        .collect()
}

pub fn reason(doc: &serde_json::Value) -> String {
    let result = if doc["runs"].is_array() {
        &doc["runs"][0]["result"]
    } else {
        &doc["steps"][0]["result"]
    };
    // The document holds the typed causes; the words are report's.
    let causes: Vec<mtuperf_engine::Interrupt> =
        serde_json::from_value(result["interrupted_by"].clone()).unwrap_or_default();
    mtuperf_report::interrupt::words(&causes).unwrap_or_default()
}

/// An open agent (the shared test agent, `agent_support`) on 127.0.0.1, port chosen
/// by the kernel, with a directory for the clients' history; killed on drop.
pub struct LoopbackAgent {
    pub agent: AgentProc,
    pub addr: String,
    pub dir: tempfile::TempDir,
}

impl LoopbackAgent {
    pub fn start(extra: &[&str]) -> LoopbackAgent {
        let agent = AgentProc::start(extra);
        LoopbackAgent {
            addr: agent.target(),
            agent,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// `mtuperf --db DB CMD ADDR ARGS`, without waiting.
    pub fn client(&self, db: &std::path::Path, cmd: &str, args: &[&str]) -> Child {
        Command::new(BIN)
            .arg("--db")
            .arg(db)
            .env_remove("MTUPERF_KEY_FILE")
            .args([cmd, &self.addr])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// Checks a printed `--json` document against its schema (stream or rr).
pub fn assert_schema(doc: &serde_json::Value) {
    let text = if doc["runs"].is_array() {
        include_str!("../../../../../schemas/stream.schema.json")
    } else {
        include_str!("../../../../../schemas/rr.schema.json")
    };
    let schema: serde_json::Value = serde_json::from_str(text).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "schema: {errors:?}");
}
