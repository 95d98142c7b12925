//! `serve --watch` resolves every peer name at start (issue 28): a name that does not
//! resolve is refused before the agent starts, naming the flag, the value and why,
//! from `--watch` or from `--watch-file`. Names are resolved again at each check.
use crate::agent_support;
use crate::watch_support;

use agent_support::mtuperf;
use watch_support::keygen;

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
