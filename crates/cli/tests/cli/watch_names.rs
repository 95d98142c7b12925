//! `serve --watch` resolves every peer name at start (issue 28): a name that does not
//! resolve is refused before the agent starts, naming the flag, the value and why,
//! from `--watch` or from `--watch-file`. Names are resolved again at each check: a
//! watcher whose hosts file (its own, in a mount namespace) moves the name to another
//! agent checks that agent from the next cycle on.
use crate::agent_support;
use crate::watch_support;

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use agent_support::{mtuperf, AgentProc, Spec};
use watch_support::keygen;

/// A keyed agent on `ip:port`, once it listens.
fn agent_on(key: &Path, ip: &str, port: u16) -> (AgentProc, u16) {
    let a = Spec::new(&[])
        .global([
            OsStr::new("--no-store"),
            OsStr::new("--key-file"),
            key.as_os_str(),
        ])
        .at(ip, port)
        .start();
    let port = a.addr.port();
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
    // The next cycle is awaited (--watch-max-slowdown 1): not stretched on a host
    // short of CPU.
    let watch = ["--watch", &peer, "--watch-every", "10s"];
    let spec = Spec::new(&[&watch[..], &["--watch-max-slowdown", "1"]].concat())
        .wrapper(["unshare", "-m", "sh", "-c", &script])
        .global([
            OsStr::new("--db"),
            db.as_os_str(),
            OsStr::new("--key-file"),
            key.as_os_str(),
        ]);
    let watcher = match spec.try_start() {
        Ok(w) => w,
        Err(seen) if seen.iter().any(|l| l.contains("mount")) => {
            eprintln!("skipped: no mount namespace here: {seen:?}");
            return;
        }
        Err(seen) => panic!("the watcher did not start: {seen:?}"),
    };
    let first = format!("{peer} (127.0.0.1:{port} via lo): ok");
    if let Err(seen) = watcher.wait_for(&first, Duration::from_secs(15)) {
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
