//! `serve --watch` resolves every peer name at start (issue 28): a name that does not
//! resolve is refused before the agent starts, naming the flag, the value and why,
//! from `--watch` or from `--watch-file`. Names are resolved again at each check: a
//! watcher whose hosts file (its own, in a mount namespace) moves the name to another
//! agent checks that agent from the next cycle on.
use crate::agent_support;
use crate::watch_support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agent_support::{mtuperf, BIN};
use watch_support::keygen;

/// A child whose stderr lines arrive on a channel; killed on drop.
struct Logged {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Logged {
    fn spawn(cmd: &mut Command) -> Logged {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Logged { child, lines }
    }

    /// The first line containing `what` within `within`, with every line seen.
    fn wait_for(&self, what: &str, within: Duration) -> Result<String, Vec<String>> {
        let deadline = Instant::now() + within;
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(l) if l.contains(what) => return Ok(l),
                Ok(l) => seen.push(l),
                Err(_) => break,
            }
        }
        Err(seen)
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A keyed agent on `ip:port`, once it listens.
fn agent_on(key: &Path, ip: &str, port: u16) -> (Logged, u16) {
    let a = Logged::spawn(
        Command::new(BIN)
            .env_remove("MTUPERF_KEY_FILE")
            .arg("--no-store")
            .arg("--key-file")
            .arg(key)
            .args(["serve", "--bind", ip, "--port", &port.to_string()]),
    );
    let line = a
        .wait_for("listening on", Duration::from_secs(10))
        .unwrap_or_else(|seen| panic!("agent on {ip} did not start: {seen:?}"));
    let port = line
        .rsplit(':')
        .next()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no port in {line}"));
    (a, port)
}

#[test]
fn a_watch_peer_name_is_resolved_again_at_each_check() {
    let has = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !has("unshare") || !has("mount") {
        eprintln!("skipped: needs unshare and mount");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "k");
    // Two agents on one port, at two addresses the name will point to in turn.
    let (_first, port) = agent_on(&key, "127.0.0.1", 0);
    let (_second, _) = agent_on(&key, "127.0.0.2", port);
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, "127.0.0.1 localhost\n127.0.0.1 watched-peer.test\n").unwrap();
    // The watcher reads its own /etc/hosts: the file above, bind-mounted in a mount
    // namespace of its own (rewritten in place below, so the mount keeps seeing it).
    let peer = format!("watched-peer.test:{port}");
    let script = format!(
        "mount --bind {} /etc/hosts && exec \"$0\" \"$@\"",
        hosts.display()
    );
    let db = dir.path().join("h.db");
    let mut cmd = Command::new("unshare");
    cmd.args(["-m", "sh", "-c", &script, BIN])
        .env_remove("MTUPERF_KEY_FILE")
        .arg("--db")
        .arg(&db)
        .arg("--key-file")
        .arg(&key)
        .args(["serve", "--bind", "127.0.0.1", "--port", "0"])
        .args(["--watch", &peer, "--watch-every", "10s"])
        // The next cycle is awaited: not stretched on a host short of CPU.
        .args(["--watch-max-slowdown", "1"]);
    let watcher = Logged::spawn(&mut cmd);
    let first = format!("{peer} (127.0.0.1:{port} via lo): ok");
    if let Err(seen) = watcher.wait_for(&first, Duration::from_secs(15)) {
        if seen.iter().any(|l| l.contains("mount")) {
            eprintln!("skipped: no mount namespace here: {seen:?}");
            return;
        }
        panic!("no check of {first:?}: {seen:?}");
    }
    // The name moves to the second agent: the next cycle checks it there.
    std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&hosts)
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(b"127.0.0.1 localhost\n127.0.0.2 watched-peer.test\n")
        })
        .unwrap();
    let second = format!("{peer} (127.0.0.2:{port} via lo): ok");
    if let Err(seen) = watcher.wait_for(&second, Duration::from_secs(20)) {
        panic!("the name was not resolved again: no {second:?} in {seen:?}");
    }
}

#[test]
fn an_unresolvable_watch_peer_is_refused_at_start_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let key = keygen(dir.path(), "k");
    let db = dir.path().join("h.db");
    // `.invalid` never resolves (RFC 6761).
    let bad = "no-such-peer.invalid";
    let out = mtuperf(&db)
        .args(["serve", "--bind", "127.0.0.1", "--port", "0", "--key-file"])
        .arg(&key)
        .args(["--watch", &format!("127.0.0.1:7878,{bad}")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("invalid value \"{bad}\" for --watch"))
            && err.contains("cannot resolve")
            && err.contains("peer names that resolve"),
        "{err}"
    );
    // The same name in a peers file names that flag.
    let peers = dir.path().join("peers");
    std::fs::write(&peers, format!("# peers\n127.0.0.1\n{bad}:7878\n")).unwrap();
    let out = mtuperf(&db)
        .args(["serve", "--bind", "127.0.0.1", "--port", "0", "--key-file"])
        .arg(&key)
        .arg("--watch-file")
        .arg(&peers)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("invalid value \"{bad}:7878\" for --watch-file")),
        "{err}"
    );
}
