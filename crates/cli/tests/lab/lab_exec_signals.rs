//! `mtuperf lab exec` passes SIGINT and SIGTERM on to its command and waits for it
//! (issue 34): the command ends, its exit code comes back (130, 143, or its own), and
//! nothing is left in the lab host's namespace. Real processes in a real lab (root
//! needed; otherwise each test prints why and passes).
use crate::lab_support;

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use lab_support::{text, TestLab, BIN};
use mtuperf_lab::Lab;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// The processes inside `host`'s namespace (what `ip netns pids` lists).
fn pids_in(lab: &TestLab, host: &str) -> Vec<u32> {
    let ns = Lab::load(&lab.name).unwrap().unwrap().netns(host).unwrap();
    mtuperf_sys::netns::pids(&ns)
}

/// Starts `lab exec --name LAB HOST -- ARGV` through `sh`, which first sets
/// `ignore` (e.g. "INT") to ignored, as a shell does for a background job.
fn start(lab: &TestLab, host: &str, argv: &[&str], ignore: &str) -> Child {
    let script = format!("trap '' {ignore}; exec \"$@\"");
    Command::new("sh")
        .args([
            "-c", &script, "sh", BIN, "lab", "exec", "--name", &lab.name, host, "--",
        ])
        .args(argv)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start lab exec")
}

/// Sends `sig` to the wrapper after `after`, then collects its output; fails when it
/// takes longer than `limit` to end after the signal.
fn signal_and_wait(child: Child, sig: Signal, after: Duration, limit: Duration) -> Output {
    std::thread::sleep(after);
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    kill(pid, sig).unwrap();
    let t0 = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = rx
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("lab exec still running {limit:?} after {sig}"))
        .unwrap();
    eprintln!("{sig}: ended {:?} after the signal", t0.elapsed());
    out
}

/// An rr run through `lab exec` (started with SIGINT ignored, as `cmd &` in a script
/// does: the case where SIGINT used to be lost): SIGINT stops it with its partial
/// result printed and exit 130; SIGTERM the same with 143. No client is left.
#[test]
fn sigint_and_sigterm_stop_an_rr_run_inside_the_lab() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "std"]);
    let serve = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    for (sig, code) in [(Signal::SIGINT, 130), (Signal::SIGTERM, 143)] {
        let argv = [BIN, "--no-store", "rr", "198.18.1.2", "--time", "30s"];
        let child = start(&lab, "client", &argv, "INT");
        let out = signal_and_wait(
            child,
            sig,
            Duration::from_millis(2500),
            Duration::from_secs(15),
        );
        assert_eq!(out.status.code(), Some(code), "{sig}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("interrupted"),
            "{sig}: the partial result is printed: {}",
            text(&out)
        );
        assert_eq!(pids_in(&lab, "client"), Vec::<u32>::new(), "{sig}: left");
    }
}

/// A shell command: its exit code comes back; SIGTERM ends it with 143 and SIGINT
/// with 130 even when the shell leaves a child behind (`sh -c 'sleep 60'`: the
/// leftover gets the signal too), and nothing is left in the namespace.
#[test]
fn shell_commands_end_with_their_code_and_leave_nothing() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "std"]);
    let out = start(&lab, "client", &["sh", "-c", "exit 7"], "INT")
        .wait_with_output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7), "{}", text(&out));
    for (sig, code) in [(Signal::SIGTERM, 143), (Signal::SIGINT, 130)] {
        for argv in [&["sleep", "60"][..], &["sh", "-c", "sleep 60; true"][..]] {
            let child = start(&lab, "client", argv, "INT TERM");
            let out = signal_and_wait(
                child,
                sig,
                Duration::from_millis(500),
                Duration::from_secs(10),
            );
            assert_eq!(
                out.status.code(),
                Some(code),
                "{sig} {argv:?}: {}",
                text(&out)
            );
            let left = pids_in(&lab, "client");
            assert!(left.is_empty(), "{sig} {argv:?}: left {left:?}");
        }
    }
}

/// Ctrl-C on a terminal (here a pseudo-terminal from util-linux `script`), where the
/// command shares the wrapper's foreground process group and gets the kernel's SIGINT
/// itself: the rr run stops with its partial result and exit 130, nothing left.
#[test]
fn a_terminal_ctrl_c_reaches_the_command_once() {
    require_lab!(false);
    if !mtuperf_lab::env::tool_in_path("script") {
        eprintln!("skipping: `script` (util-linux) not in PATH for a pseudo-terminal");
        return;
    }
    let lab = TestLab::up(&["--scenario", "std"]);
    let serve = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "lab serve: {}", text(&serve));
    // `script` runs the line with $SHELL, else /bin/sh. A non-interactive dash that
    // gets the terminal's SIGINT while it waits dies of it after its command ends, so
    // `echo` would never run; a trap makes any shell catch SIGINT and go on (the
    // commands it starts still get the default action).
    let line = format!(
        "trap ':' INT; {BIN} lab exec --name {} client -- {BIN} --no-store rr 198.18.1.2 --time 30s; echo exit=$?",
        lab.name
    );
    let mut child = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start script");
    let mut stdin = child.stdin.take().unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    std::io::Write::write_all(&mut stdin, b"\x03").unwrap();
    let t0 = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    let out = rx
        .recv_timeout(Duration::from_secs(15))
        .expect("still running 15 s after Ctrl-C")
        .unwrap();
    drop(stdin);
    eprintln!("Ctrl-C: ended {:?} after it", t0.elapsed());
    let all = text(&out);
    assert!(all.contains("exit=130"), "{all}");
    assert!(all.contains("interrupted"), "the partial result: {all}");
    assert_eq!(pids_in(&lab, "client"), Vec::<u32>::new());
}
