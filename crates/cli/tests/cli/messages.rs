//! Messages a newcomer meets first (issue 34): a refused connection says what to
//! start on the peer; the lab's "run it as root" names the command that was run.
use crate::inproc;
use crate::lab_support;

use std::process::{Command, Output};

use lab_support::{text, TestLab, BIN};

/// A loopback port nobody listens on (bound, noted, closed).
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// In-process (the refusals and usage errors cross no process boundary).
fn run(args: &[&str]) -> inproc::Output {
    inproc::Cli::new()
        .arg("--no-store")
        .args(args)
        .output()
        .unwrap()
}

/// Every command that talks to one agent: the refusal says to start `mtuperf serve`
/// there, offers --ssh, and `path --icmp` for a path check without an agent, on
/// stderr and in the `--json` error document; the exit codes stay.
#[test]
fn connection_refused_says_what_to_start_on_the_peer() {
    let target = format!("127.0.0.1:{}", closed_port());
    let cases: [(&[&str], u8); 5] = [
        (&["rr", &target], 3),
        (&["stream", &target], 3),
        (&["stream", "--udp", &target], 3),
        (&["path", &target], 2),
        (&["doctor", "--peer", &target], 2),
    ];
    for (args, code) in cases {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(i32::from(code)), "{args:?}: {err}");
        for want in [
            "Connection refused",
            "no mtuperf agent listens there: start one on the peer with `mtuperf serve`",
            "or add --ssh to start one over SSH for this run",
            "to check the path MTU without an agent: mtuperf path --icmp 127.0.0.1",
        ] {
            assert!(err.contains(want), "{args:?}: {want:?} missing in {err}");
        }
        let out = run(&[args, &["--json"]].concat());
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{args:?} --json: {e}: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(doc["schema"], "mtuperf.error/1");
        let msg = doc["error"].as_str().unwrap();
        assert!(msg.contains("`mtuperf serve`"), "{args:?}: {msg}");
    }
}

/// `argv` run as user nobody (setpriv, util-linux); None, with the reason printed,
/// when this test cannot drop privileges.
fn as_nobody(argv: &[&str]) -> Option<Output> {
    // /proc/self belongs to the process's effective user.
    let euid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap());
    if euid != 0 {
        // Not root already: run as this user.
        return Some(Command::new(BIN).args(argv).output().unwrap());
    }
    if !mtuperf_lab::env::tool_in_path("setpriv") {
        eprintln!("skipping: setpriv (util-linux) not in PATH to drop root");
        return None;
    }
    let drop = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    let probe = Command::new("setpriv")
        .args(drop)
        .args([BIN, "--version"])
        .output()
        .unwrap();
    if !probe.status.success() {
        eprintln!("skipping: user nobody cannot run {BIN}: {}", text(&probe));
        return None;
    }
    Some(
        Command::new("setpriv")
            .args(drop)
            .arg(BIN)
            .args(argv)
            .env_remove("MTUPERF_KEY_FILE")
            .output()
            .unwrap(),
    )
}

/// Without privilege: `lab down` names itself (not `lab up`), exit 6.
#[test]
fn lab_down_without_privilege_names_itself() {
    let Some(out) = as_nobody(&["lab", "down", "--name", "msgtest"]) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{err}");
    assert!(
        err.contains("run it as root: sudo mtuperf lab down --name msgtest"),
        "{err}"
    );
    assert!(!err.contains("lab up"), "{err}");
}

/// Without privilege: `lab exec` says it needs root and names the whole command
/// (exit 6, the environment's), not "true: Operation not permitted" with 126.
#[test]
fn lab_exec_without_privilege_names_itself() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "std"]);
    let argv = ["lab", "exec", "--name", &lab.name, "client", "--", "true"];
    let Some(out) = as_nobody(&argv) else {
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{err}");
    let want = format!(
        "run it as root: sudo mtuperf lab exec --name {} client -- true",
        lab.name
    );
    assert!(err.contains(&want), "{err}");
    assert!(!err.contains("Operation not permitted"), "{err}");
}

/// Each usage error says it in the words its flag needs: a value that is wrong names
/// the flag, the value, what is allowed and a hint; a flag that is missing, or that
/// cannot go with another, or that a command has no use for, says so (never the one
/// template's `invalid value "none" for --key-file` or `"set" for --no-store`).
#[test]
fn usage_errors_are_worded_for_their_flag() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    let missing_key = dir.path().join("no-key");
    let missing_key = missing_key.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (
            &["rr", "127.0.0.1:1", "--from", "127.0.0.1:2"],
            "--from needs --key-file: it asks agents to test toward another agent, which only keyed agents do; give the key file",
        ),
        (
            &["mesh", "127.0.0.1:1", "127.0.0.1:2"],
            "mesh needs --key-file: it asks agents to test each other, which only keyed agents do; give the key file",
        ),
        (
            &["--db", db, "report"],
            "report needs the runs to report on: give run ids, --last (the newest run), --compare ID",
        ),
        (
            &["report", "--no-store", "--last"],
            "--no-store does not apply to `mtuperf report`: it stores nothing in the history; the commands that take --no-store: serve, stream",
        ),
        (
            &["--db", db, "compare", "--resume", "1", "--no-store"],
            "--no-store cannot go with --resume: resuming reads the comparison's runs from the history",
        ),
        (
            &["lab", "up", "--nodes", "3"],
            "--nodes 3 needs --scenario cluster: --nodes, --nets, --fault, --haip and --public shape a cluster lab; add --scenario cluster",
        ),
        (
            &["lab", "up", "--key-file", "/k"],
            "--key-file does not apply to `mtuperf lab up`: it contacts no agent",
        ),
        (
            &["stream", "127.0.0.1:1", "--key-file", missing_key],
            "for --key-file: allowed a readable key file; No such file or directory (os error 2); give the file `mtuperf keygen` wrote",
        ),
        (
            &["serve", "--bind", "127.0.0.1", "--port", "0", "--watch", "127.0.0.1:1"],
            "--watch needs --key-file: watch sends test traffic only to agents that prove they hold the key; give serve --key-file",
        ),
    ];
    for (args, want) in cases {
        let out = run(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {want:?} missing in {err}");
        for template in ["\"none\"", "\"set\"", "RUN_IDS"] {
            assert!(!err.contains(template), "{args:?}: {err}");
        }
    }
    // keygen with no home to find its default file in.
    let out = Command::new(BIN)
        .arg("keygen")
        .env_remove("HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("keygen needs --output: neither XDG_CONFIG_HOME nor HOME is set, so there is no default ~/.config/mtuperf/key; give -o FILE, or -o - for standard output"),
        "{err}"
    );
}
