//! Every failure under `--json` (or `--format json`) is an `mtuperf.error/1` document on
//! stdout, with the process's exit code in it: clap's flag and value errors (which end
//! the process before any command runs), the shared options refused after a command
//! that has no use for them, and a command's own failures. Walked over every command
//! whose help lists `--json`, so a new one is covered or this test says so.
use crate::agent_support;
use crate::inproc::{run_in, Output};

use agent_support::assert_schema;
const SCHEMA: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../schemas/error.schema.json"
));

/// In-process: no process boundary is under test here.
fn run(args: &[&str]) -> Output {
    run_in(args)
}

/// The commands a help lists ("  stream   Bulk TCP ...") under "Commands:".
fn commands(help: &str) -> Vec<String> {
    help.split("Commands:\n")
        .nth(1)
        .unwrap_or("")
        .lines()
        .take_while(|l| !l.is_empty())
        // A wrapped description continues indented further.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(String::from)
        .collect()
}

fn help(path: &[String]) -> String {
    let args: Vec<&str> = path.iter().map(String::as_str).chain(["--help"]).collect();
    let out = run(&args);
    assert!(out.status.success(), "{path:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// Every command whose help lists `--json` (nested ones included).
fn json_commands() -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut todo: Vec<Vec<String>> = commands(&help(&[])).into_iter().map(|c| vec![c]).collect();
    while let Some(path) = todo.pop() {
        let h = help(&path);
        for sub in commands(&h) {
            todo.push([path.clone(), vec![sub]].concat());
        }
        if h.lines().any(|l| l.trim_start().starts_with("--json")) {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// What each command needs besides the flag under test to get past clap, with a
/// history that cannot open (`--db` in a missing directory) where it takes one: the
/// command's own failure, before it contacts anything (the addresses are never used).
fn rest(path: &[String]) -> (Vec<&'static str>, bool) {
    let words: Vec<&str> = path.iter().map(String::as_str).collect();
    match words[..] {
        ["stream" | "rr" | "path"] => (vec!["127.0.0.1:1"], true),
        ["mesh"] => (vec!["127.0.0.1:1", "127.0.0.1:2"], true),
        ["compare"] => (
            vec!["--path", "a=127.0.0.1:1", "--path", "b=127.0.0.1:2"],
            true,
        ),
        ["show"] => (vec!["1"], true),
        ["doctor" | "history" | "export"] => (vec![], true),
        ["lab", "status" | "serve" | "sshd"] => (vec!["--name", "i34-no-such-lab"], false),
        _ => panic!("{path:?} takes --json: add it here"),
    }
}

/// stdout is one error document, valid against its schema, carrying the exit code;
/// stderr says the same.
fn check(args: &[&str], code: i32, says: &str) {
    let out = run(args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON document ({e}): {:?}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_schema(&doc, SCHEMA);
    assert_eq!(doc["schema"], "mtuperf.error/1");
    assert_eq!(doc["exit"], code, "{args:?}");
    let msg = doc["error"].as_str().unwrap();
    assert!(msg.contains(says), "{args:?}: {msg}");
    assert!(!msg.contains("Usage:"), "{args:?}: {msg}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(says), "{args:?}: {err}");
}

#[test]
fn every_failure_under_json_is_an_error_document() {
    let cmds = json_commands();
    // The walk found them all (a help that stopped listing --json would shrink this).
    for want in [
        "stream",
        "rr",
        "path",
        "doctor",
        "mesh",
        "compare",
        "history",
        "show",
        "export",
        "lab status",
    ] {
        assert!(cmds.iter().any(|c| c.join(" ") == want), "{want}: {cmds:?}");
    }
    let dir = tempfile::tempdir().unwrap();
    let bad_db = dir.path().join("missing/h.db");
    let bad_db = bad_db.to_str().unwrap();
    for path in &cmds {
        let cmd: Vec<&str> = path.iter().map(String::as_str).collect();
        let (rest, takes_db) = rest(path);
        // clap: an unknown flag, asked for as --json, --format json or --format=json.
        for json in [&["--json"][..], &["--format", "json"], &["--format=json"]] {
            if json[0] != "--json" && !help(path).contains("--format <FORMAT>") {
                continue;
            }
            let args = [&cmd[..], json, &["--no-such-flag"], &rest].concat();
            check(&args, 2, "unexpected argument '--no-such-flag'");
        }
        // clap: a value out of range or of the wrong kind.
        if help(path).contains("--format <FORMAT>") {
            let args = [&cmd[..], &["--json", "--format", "json"], &rest].concat();
            check(&args, 2, "cannot be used with");
        }
        // After the command: refused where it has no use, else the command's own
        // failure (the history cannot open).
        let args = [&cmd[..], &["--json", "--db", bad_db], &rest].concat();
        if takes_db {
            check(&args, 2, "invalid value");
        } else {
            check(&args, 2, "--db does not apply to");
        }
    }
}

/// The measuring commands' own bad values (parsed by clap) and the rules checked after
/// it, one of each, with their exit codes.
#[test]
fn value_errors_and_checks_after_parsing_are_documents_too() {
    check(
        &["stream", "127.0.0.1:1", "--block", "0", "--json"],
        2,
        "invalid value '0' for '--block <BLOCK>'",
    );
    check(
        &["rr", "127.0.0.1:1", "--format", "json", "--clients", "0"],
        2,
        "--clients",
    );
    check(
        &[
            "rr",
            "127.0.0.1:1",
            "--json",
            "--no-store",
            "--from",
            "127.0.0.1:2",
        ],
        2,
        "--from needs --key-file",
    );
    check(
        &["mesh", "--json", "--no-store", "127.0.0.1:1", "127.0.0.1:2"],
        2,
        "mesh needs --key-file",
    );
    check(
        &["show", "--json", "--format", "csv", "1"],
        2,
        "invalid value 'csv' for '--format <FORMAT>': allowed text, json",
    );
    check(
        &["history", "--format", "csv", "--json"],
        2,
        "allowed text, json; the runs' figures as CSV: `mtuperf export`",
    );
}

/// A help, a version, and a refused line without --json print no document.
#[test]
fn no_document_without_json_nor_for_help() {
    for args in [
        &["stream", "--help", "--json"][..],
        &["--version"],
        &["stream", "127.0.0.1:1", "--block", "0"],
        &["report", "--no-such-flag"],
    ] {
        let out = run(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("mtuperf.error/1"), "{args:?}: {text}");
    }
}
