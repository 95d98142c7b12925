//! `mtuperf path` against a real agent on loopback: both ends report `lo`'s one true
//! MTU, and the search progress shows on a terminal only.

use crate::agent_support;

use std::process::Command;

use crate::inproc::{json_in, mtuperf_in};
use agent_support::{AgentProc, BIN};

#[test]
fn lo_reports_the_same_true_mtu_on_both_ends() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let doc = json_in(
        mtuperf_in(&dir.path().join("h.db"))
            .args(["--no-store", "path", "--json"])
            .arg(agent.target()),
    );
    let lo: u64 = std::fs::read_to_string("/sys/class/net/lo/mtu")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let a = &doc["agent"];
    assert_eq!(a["local"]["mtu"], lo, "{doc:#}");
    assert_eq!(a["agent_path"]["iface"]["mtu"], lo, "{doc:#}");
    // The searches stop at the largest IP packet, whatever the interface says.
    let top = lo.min(65_535);
    assert_eq!(a["forward"]["largest_ok"], top, "{doc:#}");
    assert_eq!(a["reverse"]["largest_ok"], top, "{doc:#}");
    assert_eq!(a["expect"], top, "{doc:#}");
    assert_eq!(
        (&a["forward_mtu"], &a["reverse_mtu"]),
        (&top.into(), &top.into()),
        "{doc:#}"
    );
    // Nothing falls short: no fault, and no router was looked for.
    assert_eq!(a["faults"], serde_json::json!([]), "{doc:#}");
    assert_eq!(a["first_router"], serde_json::Value::Null, "{doc:#}");
}

#[test]
fn search_progress_shows_on_a_terminal_only() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // Not a terminal: nothing on stderr.
    let out = mtuperf_in(&db)
        .args(["--no-store", "path"])
        .arg(agent.target())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A terminal (script(1) gives the command a pty): each direction's search.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped the terminal half: script(1) not found");
        return;
    }
    let cmd = format!(
        "env -u MTUPERF_KEY_FILE TERM=xterm {BIN} --db {} --no-store path {}",
        db.display(),
        agent.target()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    let tty = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{tty}");
    for dir in ["forward", "reverse"] {
        assert!(
            tty.contains(&format!("{dir}: 65535 passed; passes 65535")),
            "{tty}"
        );
    }
    assert!(tty.contains("verdict:  carries MTU 65535"), "{tty}");
}
