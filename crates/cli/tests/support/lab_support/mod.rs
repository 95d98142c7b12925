//! Helpers of the lab tests: a lab guard driving the CLI, UDP sender/receiver scripts.
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mtuperf_lab::{env, unique_name, Lab};

pub const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

/// Counts received datagrams by size: waits up to 5 s for the first, then stops after
/// 1 s of silence; prints "ready" once bound, then "size:count ...".
const RECEIVER: &str = r#"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
s.settimeout(5.0)
sizes = {}
try:
    while True:
        d = s.recv(65535)
        sizes[len(d)] = sizes.get(len(d), 0) + 1
        s.settimeout(1.0)
except socket.timeout:
    pass
print(" ".join(f"{k}:{v}" for k, v in sorted(sizes.items())), flush=True)
"#;

/// Sends SIZExCOUNT datagrams for each argument, paced in bursts of 50.
const SENDER: &str = r#"
import socket, sys, time
dst = (sys.argv[1], int(sys.argv[2]))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for spec in sys.argv[3:]:
    size, count = map(int, spec.split("x"))
    for i in range(count):
        s.sendto(b"x" * size, dst)
        if i % 50 == 49:
            time.sleep(0.005)
"#;

pub fn skip_reason(python: bool) -> Option<String> {
    if let Err(e) = env::check_environment() {
        return Some(e.to_string());
    }
    (python && !env::tool_in_path("python3")).then(|| "python3 not in PATH".into())
}

#[macro_export]
macro_rules! require_lab {
    ($python:expr) => {
        if let Some(why) = $crate::lab_support::skip_reason($python) {
            eprintln!("skipping: {why}");
            return;
        }
    };
}

pub fn mtuperf(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().expect("run mtuperf")
}

pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A lab built through the CLI, removed on drop.
pub struct TestLab {
    pub name: String,
}

impl TestLab {
    pub fn up(args: &[&str]) -> TestLab {
        let lab = TestLab {
            name: unique_name(),
        };
        let out = mtuperf(&[&["lab", "up", "--name", &lab.name][..], args].concat());
        assert!(out.status.success(), "lab up failed: {}", text(&out));
        lab
    }

    pub fn exec_cmd(&self, host: &str, argv: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(["lab", "exec", "--name", &self.name, host, "--"])
            .args(argv);
        c
    }

    pub fn exec(&self, host: &str, argv: &[&str]) -> Output {
        self.exec_cmd(host, argv).output().expect("run lab exec")
    }

    /// Runs RECEIVER in `host` on addr:9999 while SENDER runs in the client.
    pub fn udp_counts(&self, host: &str, addr: &str, specs: &[&str]) -> String {
        let mut rx = self
            .exec_cmd(host, &["python3", "-c", RECEIVER, addr, "9999"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("start receiver");
        let mut out = BufReader::new(rx.stdout.take().expect("stdout"));
        let mut line = String::new();
        out.read_line(&mut line).expect("receiver ready");
        assert_eq!(line.trim(), "ready");
        let tx = self.exec(
            "client",
            &[&["python3", "-c", SENDER, addr, "9999"][..], specs].concat(),
        );
        assert!(tx.status.success(), "sender: {}", text(&tx));
        let mut counts = String::new();
        out.read_to_string(&mut counts).expect("receiver output");
        assert!(rx.wait().expect("receiver exit").success());
        counts.trim().to_string()
    }
}

impl Drop for TestLab {
    fn drop(&mut self) {
        let _ = Lab::down(&self.name, false);
    }
}

pub fn count_of(counts: &str, size: usize) -> usize {
    counts
        .split_whitespace()
        .filter_map(|kv| kv.split_once(':'))
        .find(|(k, _)| k.parse() == Ok(size))
        .map_or(0, |(_, v)| v.parse().unwrap())
}

/// Runs `cmd` with a deadline (killed after it), collecting its output.
#[allow(dead_code)] // the demo tests' helper; lab.rs includes this module too
pub fn output_within(mut cmd: Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mtuperf");
    let (mut out, mut err) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mtuperf did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
    }
}

/// A share of the machine for tests that load it hard enough to miss their own
/// deadlines when too many run at once (every node of a 5-node lab copying this
/// 60 MB debug binary over SSH and checksumming it): at most `HEAVY_AT_ONCE` hold one,
/// whatever `RUST_TEST_THREADS` says. Dropping the guard gives the share back.
pub struct Heavy(());

const HEAVY_AT_ONCE: usize = 2;

static HEAVY: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

impl Heavy {
    pub fn take() -> Heavy {
        let (lock, cv) = &HEAVY;
        let mut n = lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *n >= HEAVY_AT_ONCE {
            n = cv
                .wait(n)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *n += 1;
        Heavy(())
    }
}

impl Drop for Heavy {
    fn drop(&mut self) {
        let (lock, cv) = &HEAVY;
        *lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) -= 1;
        cv.notify_one();
    }
}
