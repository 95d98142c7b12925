//! The CLI as a library (`mtuperf::run_captured`): an in-process invocation prints
//! what the binary prints, byte for byte, with its exit code; invocations side by side
//! keep their own output and state; what the engine's threads print for a run reaches
//! the invocation that ran it.
use std::process::Command;

use crate::agent_support::{AgentProc, BIN};
use crate::inproc::{run_in, text};

/// Command lines whose output is the same at every run (no clock, no peer): help,
/// version, refusals with and without `--json`, an empty history, generated pages.
fn fixed_lines(db: &str) -> Vec<Vec<String>> {
    let lines: [&[&str]; 14] = [
        &["--help"],
        &["--version"],
        &["stream", "--help"],
        &["lab", "up", "--help"],
        &["stream", "--no-such-flag"],
        &["stream", "--json", "--no-such-flag", "127.0.0.1:1"],
        &["rr", "127.0.0.1:1", "--format", "json", "--clients", "0"],
        &["show", "--json", "--format", "csv", "1"],
        &["--db", db, "history", "--json"],
        &["--db", db, "history"],
        &["--db", db, "export", "--json", "9999"],
        &["keygen", "--db", db, "-o", "-"],
        &["man", "--subcommand", "rr"],
        &["completions", "bash"],
    ];
    lines
        .iter()
        .map(|l| l.iter().map(|w| (*w).to_string()).collect())
        .collect()
}

#[test]
fn an_in_process_invocation_prints_what_the_binary_prints() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap();
    for argv in fixed_lines(db) {
        let bin = Command::new(BIN)
            .args(&argv)
            .env_remove("MTUPERF_KEY_FILE")
            .env_remove("MTUPERF_DB")
            .output()
            .unwrap();
        let words: Vec<&str> = argv.iter().map(String::as_str).collect();
        let lib = run_in(&words);
        assert_eq!(
            lib.status.code(),
            bin.status.code(),
            "{argv:?}: {}",
            text(&lib)
        );
        assert_eq!(
            String::from_utf8_lossy(&lib.stdout),
            String::from_utf8_lossy(&bin.stdout),
            "{argv:?}: stdout"
        );
        assert_eq!(
            String::from_utf8_lossy(&lib.stderr),
            String::from_utf8_lossy(&bin.stderr),
            "{argv:?}: stderr"
        );
    }
}

/// Eight threads, each a different invocation again and again: each output is its
/// own whole (never another's lines), and what one invocation chose (JSON errors)
/// or remembered does not reach another.
#[test]
fn invocations_side_by_side_keep_their_own_output_and_state() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let db = db.to_str().unwrap().to_string();
    let lines = fixed_lines(&db);
    let want: Vec<_> = lines
        .iter()
        .map(|l| {
            let words: Vec<&str> = l.iter().map(String::as_str).collect();
            let o = run_in(&words);
            (o.status, o.stdout, o.stderr)
        })
        .collect();
    std::thread::scope(|s| {
        for t in 0..8 {
            let (lines, want) = (&lines, &want);
            s.spawn(move || {
                for round in 0..5 {
                    let i = (t * 5 + round) % lines.len();
                    let words: Vec<&str> = lines[i].iter().map(String::as_str).collect();
                    let o = run_in(&words);
                    assert_eq!(
                        (&o.status, &o.stdout, &o.stderr),
                        (&want[i].0, &want[i].1, &want[i].2),
                        "{:?} on thread {t}",
                        lines[i]
                    );
                }
            });
        }
    });
}

/// The live lines of a run (`--interval`) are printed by the observer the engine
/// calls from its threads: they reach the invocation's stdout, in order, before the
/// summary.
#[test]
fn what_the_engines_threads_print_reaches_the_invocation() {
    let agent = AgentProc::start(&[]);
    for args in [
        &["stream", "--time", "1s", "--interval", "200ms"][..],
        &["rr", "--time", "1s", "--interval", "200ms"],
    ] {
        let target = agent.target();
        let argv = [&["--no-store"][..], &args[..1], &[&target[..]], &args[1..]].concat();
        let out = run_in(&argv);
        assert!(out.status.success(), "{argv:?}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let intervals = stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count();
        assert!(intervals >= 3, "{argv:?}: {stdout}");
    }
    // The agent's own interval lines, relayed by the engine as they arrive.
    let target = agent.target();
    let out = run_in(&[
        "--no-store",
        "stream",
        &target,
        "--time",
        "1s",
        "--interval",
        "200ms",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let relayed = stdout
        .lines()
        .filter(|l| l.contains(" agent ") && l.contains("received"))
        .count();
    assert!(relayed >= 3, "{stdout}");
}
