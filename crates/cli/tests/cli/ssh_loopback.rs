//! `--ssh` of the one-peer commands and `serve --lifetime`, on loopback and without
//! root: a stand-in for ssh runs the remote command on this host (as if sshd had, with
//! `SSH_CONNECTION` saying the connection arrived on 127.0.0.1), so the bootstrap, the
//! copy and its checksum, the one-time key, the stop and the clean-up all run for real.
//! The OpenSSH client and server are exercised in `mesh_ssh_lab.rs`.
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use crate::inproc::{self, run_in};

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

/// A temporary directory with a stand-in ssh (`ssh`) and the node's TMPDIR (`tmp`).
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    /// `body` runs with the remote command as `$c`.
    fn new(body: &str) -> Fake {
        let dir = tempfile::tempdir().unwrap();
        let ssh = dir.path().join("ssh");
        std::fs::write(&ssh, format!("#!/bin/sh\nfor a; do c=$a; done\n{body}\n")).unwrap();
        std::os::unix::fs::PermissionsExt::set_mode(
            &mut std::fs::metadata(&ssh).unwrap().permissions(),
            0o755,
        );
        Command::new("chmod")
            .args(["755", ssh.to_str().unwrap()])
            .status()
            .unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Fake { dir }
    }

    /// Runs the remote command as sshd would for a connection to 127.0.0.1.
    fn local() -> Fake {
        Fake::new("SSH_CONNECTION='127.0.0.1 40000 127.0.0.1 22' exec sh -c \"$c\"")
    }

    fn tmp(&self) -> PathBuf {
        self.dir.path().join("tmp")
    }

    /// `mtuperf --no-store ARGS --ssh --ssh-command <fake> [--bind 127.0.0.1]` with the
    /// node's TMPDIR and PATH (`path`: what the node's PATH holds). The stand-in node
    /// is this host: `--bind 127.0.0.1` keeps every test on loopback.
    fn run(&self, args: &[&str], path: &str) -> Output {
        let bind: &[&str] = if args.first() == Some(&"doctor") {
            &[]
        } else {
            &["--bind", "127.0.0.1"]
        };
        Command::new(BIN)
            .arg("--no-store")
            .args(args)
            .args([
                "--ssh",
                "--ssh-command",
                self.dir.path().join("ssh").to_str().unwrap(),
            ])
            .args(bind)
            .env("TMPDIR", self.tmp())
            .env("PATH", path)
            .env_remove("MTUPERF_KEY_FILE")
            .env_remove("MTUPERF_SSH_COMMAND")
            .output()
            .unwrap()
    }

    /// What the node's TMPDIR still holds.
    fn left(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.tmp())
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

const SYS_PATH: &str = "/usr/bin:/bin";

#[test]
fn path_over_ssh_copies_checks_tests_and_cleans_up() {
    let f = Fake::local();
    let out = f.run(&["path", "n2", "--json"], SYS_PATH);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ssh: n2 ready: agent on 127.0.0.1:"), "{err}");
    assert!(
        err.contains("this mtuperf copied to") && err.contains("SHA-256 checked"),
        "{err}"
    );
    assert!(
        err.contains("private directories removed on 1 of 1 nodes"),
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["ok"], true, "{doc}");
    assert!(
        f.left().is_empty(),
        "left in the node's TMPDIR: {:?}",
        f.left()
    );
}

/// The node's own mtuperf of this very version is run, nothing copied; another
/// version on its PATH is not (this binary is copied instead).
#[test]
fn the_nodes_own_mtuperf_runs_when_it_is_this_version() {
    let f = Fake::local();
    let here = Path::new(BIN).parent().unwrap().to_str().unwrap();
    let out = f.run(
        &["stream", "n2", "--time", "300ms"],
        &format!("{here}:{SYS_PATH}"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("ssh: n2 ready: agent on 127.0.0.1:")
            && text(&out).contains("its own mtuperf, same version"),
        "{}",
        text(&out)
    );
    // A different "mtuperf" on the PATH.
    let other = f.dir.path().join("bin");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("mtuperf"), "#!/bin/sh\necho mtuperf 0.0.1\n").unwrap();
    Command::new("chmod")
        .args(["755", other.join("mtuperf").to_str().unwrap()])
        .status()
        .unwrap();
    let out = f.run(
        &["rr", "n2", "--time", "300ms", "--proto", "tcp"],
        &format!("{}:{SYS_PATH}", other.display()),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        text(&out).contains("this mtuperf copied to"),
        "{}",
        text(&out)
    );
    let out = f.run(&["doctor", "--peer", "n2", "--sample", "0s"], SYS_PATH);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", text(&out));
    assert!(
        text(&out).contains("private directories removed on 1 of 1 nodes"),
        "{}",
        text(&out)
    );
    assert!(
        f.left().is_empty(),
        "left in the node's TMPDIR: {:?}",
        f.left()
    );
}

#[test]
fn never_copying_needs_this_version_on_the_nodes_path() {
    let f = Fake::local();
    let out = f.run(&["path", "n2", "--ssh-copy", "never"], SYS_PATH);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(
        t.contains("n2: copy: no mtuperf ")
            && t.contains("on the node's PATH (found: none) and --ssh-copy never"),
        "{t}"
    );
    assert!(
        f.left().is_empty(),
        "left in the node's TMPDIR: {:?}",
        f.left()
    );
}

/// ssh's own failure is quoted, with the node's name.
#[test]
fn a_refused_login_is_named() {
    let f = Fake::new("echo 'root@n9: Permission denied (publickey).' >&2; exit 255");
    let out = f.run(&["stream", "n9", "--time", "300ms"], SYS_PATH);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        text(&out).contains("n9: ssh: root@n9: Permission denied (publickey)."),
        "{}",
        text(&out)
    );
}

/// A node that never answers costs its --ssh-timeout, not more.
#[test]
fn a_silent_node_costs_its_timeout() {
    let f = Fake::new("exec sleep 60");
    let t0 = Instant::now();
    let out = f.run(&["path", "n9", "--ssh-timeout", "2s"], SYS_PATH);
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("n9: ssh: no answer within 2 s"),
        "{}",
        text(&out)
    );
}

/// Ctrl-C while the agents are being started: every started one is stopped and the
/// command exits 130 at once.
#[test]
fn ctrl_c_while_starting_exits_130() {
    let f = Fake::new("exec sleep 60");
    let mut child = Command::new(BIN)
        .args(["--no-store", "mesh", "a", "b", "--ssh", "--ssh-command"])
        .arg(f.dir.path().join("ssh"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "still running 10 s after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted while starting the agents over SSH"),
        "{err}"
    );
}

/// Refused before anything starts: in-process.
#[test]
fn bad_ssh_flags_are_named() {
    let out = run_in(&["path", "n2", "--ssh", "--ssh-command", "ssh -F 'unclosed"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        inproc::text(&out).contains("--ssh-command")
            && inproc::text(&out).contains("unbalanced quotes"),
        "{}",
        inproc::text(&out)
    );
    let out = run_in(&["path", "n2", "--ssh", "--icmp"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        inproc::text(&out).contains("--icmp") && inproc::text(&out).contains("--ssh"),
        "{}",
        inproc::text(&out)
    );
    let out = run_in(&["path", "-oProxyCommand=x", "--ssh"]);
    assert_eq!(out.status.code(), Some(2), "{}", inproc::text(&out));
    let out = run_in(&["mesh", "a", "b", "--ssh", "--ssh-timeout", "1s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        inproc::text(&out).contains("--ssh-timeout"),
        "{}",
        inproc::text(&out)
    );
}

/// `serve --lifetime` ends the agent by itself.
#[test]
fn serve_lifetime_ends_the_agent() {
    let t0 = Instant::now();
    let mut child = Command::new(BIN)
        .args([
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            "0",
            "--lifetime",
            "1s",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > Duration::from_secs(15) {
            let _ = child.kill();
            panic!("serve --lifetime 1s still runs after 15 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    assert!(t0.elapsed() >= Duration::from_secs(1));
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("lifetime of 1s reached: stopping"), "{err}");
}
