//! A real `mtuperf serve` on loopback for end-to-end tests: bound to port 0, its
//! address read from its first log line, killed on drop.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

pub struct AgentProc {
    pub child: Child,
    pub addr: SocketAddr,
    pub log: mpsc::Receiver<String>,
    /// Log lines before the first "listening on" line.
    pub early: Vec<String>,
}

impl AgentProc {
    pub fn start(extra: &[&str]) -> AgentProc {
        let mut child = Command::new(BIN)
            .args(["serve", "--bind", "127.0.0.1", "--port", "0"])
            .args(extra)
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("start agent");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // Lines before the first "listening on" (the metrics listener's) are kept.
        let mut early = Vec::new();
        let first = loop {
            let line = rx
                .recv_timeout(Duration::from_secs(10))
                .expect("agent log line");
            if line.contains("listening on") || early.len() >= 8 {
                break line;
            }
            early.push(line);
        };
        let addr = first
            .rsplit("listening on ")
            .next()
            .and_then(|a| a.trim().parse().ok())
            .unwrap_or_else(|| panic!("no address in {first:?}"));
        AgentProc {
            child,
            addr,
            log: rx,
            early,
        }
    }

    pub fn target(&self) -> String {
        self.addr.to_string()
    }

    /// Log lines so far.
    pub fn drain_log(&self) -> Vec<String> {
        self.log.try_iter().collect()
    }
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mtuperf` with a private history database.
pub fn mtuperf(db: &std::path::Path) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--db").arg(db);
    c.env_remove("MTUPERF_KEY_FILE");
    c
}

/// Runs `cmd`, which must succeed, and returns its standard output as one JSON document.
pub fn json_of(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().expect("run mtuperf");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document on stdout")
}

/// Fails the test with every error when `doc` does not validate against `schema`
/// (the text of one of the repository's `schemas/*.schema.json`).
#[allow(dead_code)] // not every test binary that includes this module validates
pub fn assert_schema(doc: &serde_json::Value, schema: &str) {
    let v: serde_json::Value = serde_json::from_str(schema).unwrap();
    let validator = jsonschema::validator_for(&v).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema errors: {errors:?}");
}
