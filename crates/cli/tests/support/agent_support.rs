//! The one test agent of the CLI's test binaries: a real `mtuperf serve` (a process:
//! its signals, its log and its exit are what some tests look at) on loopback, bound
//! to port 0, its address read from its first "listening on" log line, its stderr
//! kept in a file (its log), killed on drop. [`AgentProc::start`] for the usual agent,
//! [`Spec`] for another address, global flags (`--key-file`) or a wrapper command
//! (`prlimit`, `unshare`).
#![allow(dead_code)]

use std::ffi::OsString;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

/// How long an agent may take to say where it listens.
const START_WITHIN: Duration = Duration::from_secs(10);

/// How to start the agent: `[WRAPPER...] mtuperf GLOBAL... serve --bind BIND --port
/// PORT EXTRA...`.
#[derive(Debug, Clone)]
pub struct Spec {
    /// A command the agent runs under, which must exec the command it is given.
    pub wrapper: Vec<OsString>,
    /// Flags before `serve` (`--key-file K`, `--db D`, `--no-store`).
    pub global: Vec<OsString>,
    pub bind: String,
    pub port: u16,
    /// Flags after `serve`'s address.
    pub extra: Vec<OsString>,
}

impl Spec {
    /// `serve --bind 127.0.0.1 --port 0 EXTRA`.
    pub fn new(extra: &[&str]) -> Spec {
        Spec {
            wrapper: Vec::new(),
            global: Vec::new(),
            bind: "127.0.0.1".into(),
            port: 0,
            extra: extra.iter().map(OsString::from).collect(),
        }
    }

    pub fn global<S: Into<OsString>>(mut self, flags: impl IntoIterator<Item = S>) -> Spec {
        self.global.extend(flags.into_iter().map(Into::into));
        self
    }

    pub fn wrapper<S: Into<OsString>>(mut self, cmd: impl IntoIterator<Item = S>) -> Spec {
        self.wrapper = cmd.into_iter().map(Into::into).collect();
        self
    }

    pub fn at(mut self, bind: &str, port: u16) -> Spec {
        self.bind = bind.into();
        self.port = port;
        self
    }

    fn command(&self, log: &Log) -> Command {
        let mut c = match self.wrapper.split_first() {
            Some((w, rest)) => {
                let mut c = Command::new(w);
                c.args(rest).arg(BIN);
                c
            }
            None => Command::new(BIN),
        };
        c.env_remove("MTUPERF_KEY_FILE")
            .env_remove("MTUPERF_DB")
            .args(&self.global)
            .args([
                "serve",
                "--bind",
                &self.bind,
                "--port",
                &self.port.to_string(),
            ])
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log.path).expect("the agent's log file"));
        c
    }

    /// Starts the agent and waits until it listens; else every line it wrote (and
    /// the process is killed).
    pub fn try_start(&self) -> Result<AgentProc, Vec<String>> {
        let log = Log::new();
        let mut child = self.command(&log).spawn().expect("start mtuperf serve");
        let Some(at) = log.find_from(0, "listening on", START_WITHIN) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(log.lines());
        };
        let line = log.lines().swap_remove(at);
        let Some(addr) = listening_on(&line) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(log.lines());
        };
        let early = log.lines().drain(..at).collect();
        Ok(AgentProc {
            child,
            addr,
            early,
            log,
            read: Mutex::new(at + 1),
        })
    }

    /// [`Spec::try_start`], which must succeed.
    pub fn start(&self) -> AgentProc {
        self.try_start()
            .unwrap_or_else(|seen| panic!("the agent did not start ({self:?}): {seen:?}"))
    }
}

/// The address of a "listening on ADDR" line, text or JSON (`..."msg":"listening on
/// ADDR",...`).
fn listening_on(line: &str) -> Option<SocketAddr> {
    line.split("listening on ")
        .nth(1)?
        .split(['"', ' ', '\n'])
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The agent's stderr, a file: what the agent wrote is there as soon as its write
/// returned (no reader in between), so a test that saw an effect finds its line.
struct Log {
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Log {
    fn new() -> Log {
        let dir = tempfile::tempdir().expect("a directory for the agent's log");
        Log {
            path: dir.path().join("agent.log"),
            _dir: dir,
        }
    }

    /// The whole lines written so far.
    fn lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.path).unwrap_or_default();
        let whole = text.rfind('\n').map_or("", |end| &text[..end]);
        whole.lines().map(String::from).collect()
    }

    /// The index of the first line at or after `from` containing `what`, waiting up
    /// to `within` for it.
    fn find_from(&self, from: usize, what: &str, within: Duration) -> Option<usize> {
        let deadline = Instant::now() + within;
        loop {
            let lines = self.lines();
            if let Some(i) = lines.iter().skip(from).position(|x| x.contains(what)) {
                return Some(from + i);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

pub struct AgentProc {
    pub child: Child,
    pub addr: SocketAddr,
    /// Log lines before the first "listening on" line (the metrics listener's).
    pub early: Vec<String>,
    log: Log,
    /// The lines [`AgentProc::next_line`] and [`AgentProc::wait_for`] have passed.
    read: Mutex<usize>,
}

impl AgentProc {
    /// `mtuperf serve --bind 127.0.0.1 --port 0 EXTRA`, listening.
    pub fn start(extra: &[&str]) -> AgentProc {
        Spec::new(extra).start()
    }

    pub fn target(&self) -> String {
        self.addr.to_string()
    }

    /// Log lines not read yet.
    pub fn drain_log(&self) -> Vec<String> {
        let mut read = self.read.lock().unwrap();
        let lines = self.log.lines();
        let new = lines.get(*read..).unwrap_or_default().to_vec();
        *read = lines.len();
        new
    }

    /// The next log line not read yet, waiting up to `within`.
    pub fn next_line(&self, within: Duration) -> Option<String> {
        let mut read = self.read.lock().unwrap();
        let at = self.log.find_from(*read, "", within)?;
        *read = at + 1;
        self.log.lines().get(at).cloned()
    }

    /// The first line not read yet containing `what`, waiting up to `within`; else
    /// every line not read yet.
    pub fn wait_for(&self, what: &str, within: Duration) -> Result<String, Vec<String>> {
        let mut read = self.read.lock().unwrap();
        match self.log.find_from(*read, what, within) {
            Some(at) => {
                *read = at + 1;
                Ok(self.log.lines().swap_remove(at))
            }
            None => Err(self.log.lines().get(*read..).unwrap_or_default().to_vec()),
        }
    }

    /// The whole log so far, read or not.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log.path).unwrap_or_default()
    }

    pub fn assert_alive(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "agent exited; log: {}",
            self.log_text()
        );
    }
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `mtuperf` with a private history database (a process: for signals, closed pipes,
/// the environment).
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
