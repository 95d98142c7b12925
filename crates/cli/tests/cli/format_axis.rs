//! `stream`, `rr` and `path` take the shared output axis: `--format json` prints the same
//! versioned document as `--json`, `--format text` the text, and a format the command
//! does not have is a usage error naming those it has.

use crate::agent_support;

use crate::inproc::{json_in, mtuperf_in};
use agent_support::AgentProc;

#[test]
fn format_json_is_the_json_document_of_stream_rr_and_path() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let target = agent.target();
    for (cmd, schema, extra) in [
        ("stream", "mtuperf.stream/7", &["--time", "1s"][..]),
        ("rr", "mtuperf.rr/6", &["--time", "1s"][..]),
        ("path", "mtuperf.path/4", &[][..]),
    ] {
        let doc = json_in(
            mtuperf_in(&db)
                .args([cmd, &target, "--format", "json"])
                .args(extra),
        );
        assert_eq!(doc["schema"], schema, "{cmd}: {doc:#}");
    }
}

#[test]
fn format_text_prints_text_and_json_conflicts_with_format() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let out = mtuperf_in(&db)
        .args([
            "stream",
            &agent.target(),
            "--time",
            "1s",
            "--format",
            "text",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("mtuperf stream:"), "{text}");
    assert!(serde_json::from_slice::<serde_json::Value>(&out.stdout).is_err());

    let both = mtuperf_in(&db)
        .args(["rr", &agent.target(), "--json", "--format", "text"])
        .output()
        .unwrap();
    assert_eq!(both.status.code(), Some(2), "clap's usage exit");
}

#[test]
fn a_format_the_command_lacks_is_refused_naming_those_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    // Refused before anything connects: the address is never used.
    for (cmd, code) in [("stream", 2), ("rr", 2), ("path", 2)] {
        let out = mtuperf_in(&db)
            .args([cmd, "127.0.0.1:1", "--format", "csv"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--format") && err.contains("allowed text, json"),
            "{cmd}: {err}"
        );
    }
}
