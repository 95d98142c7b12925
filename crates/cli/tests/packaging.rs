//! Packaging: shell completions and manual pages generated from the command line, and
//! `--version` naming the commit and build date.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

fn stdout(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completions_cover_subcommands_and_flags() {
    let bash = stdout(&["completions", "bash"]);
    assert!(
        bash.contains("_mtuperf()") && bash.contains("--clients"),
        "{bash}"
    );
    // The script parses as bash.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("mtuperf.bash");
    std::fs::write(&f, &bash).unwrap();
    let ok = Command::new("bash").arg("-n").arg(&f).status().unwrap();
    assert!(ok.success(), "bash -n rejects the completion script");
    assert!(stdout(&["completions", "zsh"]).contains("#compdef mtuperf"));
    assert!(stdout(&["completions", "fish"]).contains("complete -c mtuperf"));
    let out = Command::new(BIN)
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn man_pages_for_the_tool_and_each_subcommand() {
    let man = stdout(&["man"]);
    assert!(
        man.starts_with(".ie") || man.contains(".TH mtuperf 1"),
        "{man}"
    );
    assert!(man.contains(".TH mtuperf 1") && man.contains("compare"));
    let rr = stdout(&["man", "--subcommand", "rr"]);
    assert!(
        rr.contains(".TH mtuperf-rr 1") && rr.contains("clients"),
        "{rr}"
    );
    let out = Command::new(BIN)
        .args(["man", "--subcommand", "bogus"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("one of serve, stream, rr"));
}

#[test]
fn version_names_commit_and_build_date() {
    let v = stdout(&["--version"]);
    let v = v.trim();
    assert!(
        v.starts_with(&format!("mtuperf {} (", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    let date = v.rsplit("built ").next().unwrap().trim_end_matches(')');
    let parts: Vec<&str> = date.split('-').collect();
    assert_eq!(parts.len(), 3, "{v}");
    assert!(parts[0].parse::<u32>().unwrap() >= 2024, "{v}");
}
