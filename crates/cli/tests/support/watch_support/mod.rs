//! Helpers of the watch and metrics tests: a plain GET of the metrics listener, the
//! value of one series, the TCP ports a process listens on, promtool.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// GET `path` from `addr`; the status line and the body. A bare HTTP/1.0 request
/// keeps the tests free of an HTTP client crate.
pub fn get(addr: SocketAddr, path: &str) -> (String, String) {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(s, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).expect("response");
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    (
        head.lines().next().unwrap_or("").to_string(),
        body.to_string(),
    )
}

/// The metrics listener's address from the agent's "metrics served on" log line.
pub fn metrics_addr(lines: &[String]) -> SocketAddr {
    lines
        .iter()
        .find_map(|l| l.split("metrics served on http://").nth(1))
        .and_then(|r| r.strip_suffix("/metrics"))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no metrics line in {lines:?}"))
}

/// The value of the series `name{labels...}` whose labels include every `want`
/// pair, from a text exposition.
pub fn value(text: &str, name: &str, want: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter(|l| l.starts_with(name) && l[name.len()..].starts_with(['{', ' ']))
        .find(|l| {
            want.iter()
                .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
}

/// TCP ports in LISTEN state owned by process `pid` (its socket inodes matched
/// against /proc/net/tcp and tcp6).
pub fn listening_ports(pid: u32) -> Vec<u16> {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("fd dir")
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|t| {
            t.to_string_lossy()
                .strip_prefix("socket:[")
                .and_then(|r| r.strip_suffix(']'))
                .map(str::to_string)
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 9 && f[3] == "0A" && inodes.iter().any(|i| i == f[9]) {
                let port = f[1].rsplit(':').next().unwrap();
                ports.push(u16::from_str_radix(port, 16).unwrap());
            }
        }
    }
    ports.sort_unstable();
    ports
}

/// promtool, or None with the reason printed (CI installs it: there it must exist).
pub fn promtool() -> Option<Command> {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("promtool").is_file()));
    if found {
        return Some(Command::new("promtool"));
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "promtool missing in CI: .ci/run installs Debian's prometheus package"
    );
    eprintln!("skipping: promtool not in PATH (apt-get install prometheus)");
    None
}

/// Runs promtool with `args`, feeding `stdin`; panics with its output unless it succeeds.
pub fn promtool_ok(args: &[&str], stdin: Option<&str>) {
    let Some(mut c) = promtool() else { return };
    c.args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("start promtool");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("promtool");
    assert!(
        out.status.success(),
        "promtool {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// contrib/prometheus in the repository.
pub fn contrib() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../contrib/prometheus")
}

/// A new key file in `dir`.
pub fn keygen(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    let out = Command::new(env!("CARGO_BIN_EXE_mtuperf"))
        .args(["keygen", "-o"])
        .arg(&p)
        .output()
        .expect("keygen");
    assert!(out.status.success(), "{out:?}");
    p
}
