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
