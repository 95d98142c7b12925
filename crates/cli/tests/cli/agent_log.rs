//! The agent's log notes, worded by report: a peer outside `--allow` is refused, told
//! why in the refusal's words, and its line is still written in the log.

use std::time::Duration;

use crate::agent_support::AgentProc;
use crate::inproc::mtuperf_in;

#[test]
fn a_peer_outside_the_allow_list_is_refused_and_its_line_logged() {
    let agent = AgentProc::start(&["--allow", "192.0.2.0/24"]);
    let dir = tempfile::tempdir().unwrap();
    let out = mtuperf_in(&dir.path().join("h.db"))
        .args(["rr", agent.target().as_str(), "--time", "200ms"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.contains("address 127.0.0.1 is not allowed by the agent's --allow list"),
        "{err}"
    );
    let line = agent
        .wait_for("refused", Duration::from_secs(10))
        .unwrap_or_else(|lines| panic!("no refused line in {lines:?}"));
    assert!(
        line.starts_with("warn 127.0.0.1:") && line.ends_with(" refused: not in --allow list"),
        "{line}"
    );
}

/// A watch check the watched agent refuses (this host is outside its `--allow`) is
/// logged with the refusal in report's words, as when the engine worded it through a
/// process-wide hook: the engine keeps the refusal typed and the log function words it.
#[test]
fn a_refused_watch_check_is_logged_in_the_refusals_words() {
    let dir = tempfile::tempdir().unwrap();
    let key = crate::watch_support::keygen(dir.path(), "key");
    let k = key.to_str().unwrap();
    let watched = AgentProc::start(&["--no-store", "--key-file", k, "--allow", "192.0.2.0/24"]);
    let target = watched.target();
    let watching = AgentProc::start(&[
        "--no-store",
        "--key-file",
        k,
        "--watch",
        target.as_str(),
        "--watch-every",
        "1h",
    ]);
    let line = watching
        .wait_for("check failed", Duration::from_secs(20))
        .unwrap_or_else(|lines| panic!("no check line in {lines:?}"));
    assert!(
        line.starts_with("warn - watch: ")
            && line.ends_with(&format!(
                "{target} ({target}): check failed: address 127.0.0.1 is not allowed by the agent's --allow list"
            )),
        "{line}"
    );
}
