//! The series driver every measuring command runs through (`stream`, `stream --udp`,
//! `rr`): each run is printed, then stored ("stored as run N" after its text); a
//! history that refuses the run never loses it (kept as a file, reported after the
//! output, exit 5); a sweep's runs are stored in one group.

use std::path::Path;

use crate::agent_support::AgentProc;
use crate::inproc::mtuperf_in;

/// The commands, each one short run (a sweep of two for rr and UDP: the group and the
/// end of the series are exercised too).
fn commands(t: &str) -> Vec<(&'static str, Vec<String>)> {
    let words = |w: &[&str]| w.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    vec![
        ("stream", words(&["stream", t, "--time", "300ms"])),
        (
            "udp",
            words(&["stream", t, "--udp", "--rate", "10M,20M", "--time", "300ms"]),
        ),
        (
            "rr",
            words(&[
                "rr",
                t,
                "--time",
                "300ms",
                "--clients",
                "1,2",
                "--block",
                "8K",
            ]),
        ),
    ]
}

fn run(db: &Path, args: &[String]) -> (Option<i32>, String, String) {
    let out = mtuperf_in(db).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn each_run_is_printed_then_stored_and_a_sweep_is_one_group() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let t = agent.target();
    let mut id = 0;
    for (kind, args) in commands(&t) {
        let (code, out, err) = run(&db, &args);
        assert_eq!(code, Some(0), "{kind}: {out}{err}");
        let stored: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("stored as run "))
            .collect();
        match kind {
            // One run: its text, then where it is stored, last.
            "stream" => {
                id += 1;
                assert_eq!(stored, [format!("stored as run {id}")], "{out}");
                assert!(
                    out.trim_end().ends_with(&format!("stored as run {id}")),
                    "{out}"
                );
            }
            // A sweep of UDP rates: one line per rate, no "stored as" per line.
            "udp" => {
                id += 2;
                assert!(stored.is_empty(), "{out}");
            }
            // rr: each step's text is followed by its run.
            _ => {
                id += 2;
                assert_eq!(
                    stored,
                    [
                        format!("stored as run {}", id - 1),
                        format!("stored as run {id}")
                    ],
                    "{out}"
                );
            }
        }
    }
    // The sweeps are groups; every run is in the history.
    let c = rusqlite::Connection::open(&db).unwrap();
    let runs: i64 = c
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(runs, id);
    let grouped: i64 = c
        .query_row(
            "SELECT count(*) FROM runs WHERE group_id IS NOT NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(grouped, 2, "rr's two steps");
}

#[test]
fn a_run_the_history_refuses_is_printed_kept_and_ends_with_exit_5() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let t = agent.target();
    // A history that exists, then refuses every run.
    let (code, _, err) = run(&db, &commands(&t)[0].1);
    assert_eq!(code, Some(0), "{err}");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON runs BEGIN SELECT RAISE(FAIL, 'refused by the test'); END;",
        )
        .unwrap();
    for (kind, args) in commands(&t) {
        let (code, out, err) = run(&db, &args);
        assert_eq!(code, Some(5), "{kind}: {out}{err}");
        // The result is printed all the same, and nothing claims it was stored.
        assert!(!out.contains("stored as run"), "{kind}: {out}");
        assert!(out.lines().count() > 2, "{kind}: {out}");
        assert!(
            err.contains(&format!("storing the {kind} run in"))
                && err.contains("the run was saved to"),
            "{kind}: {err}"
        );
    }
    let kept: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("mtuperf-unsaved-"))
        .collect();
    // stream: 1 run; stream --udp: 2 rates; rr: 2 steps.
    assert_eq!(kept.len(), 5, "{kept:?}");
    for f in &kept {
        let text = std::fs::read_to_string(dir.path().join(f)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(doc["schema"].is_string(), "{f}: {text}");
    }
}
