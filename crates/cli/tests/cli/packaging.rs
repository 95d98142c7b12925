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

#[test]
fn serve_help_does_not_offer_history_options() {
    let serve = stdout(&["serve", "--help"]);
    assert!(
        !serve.contains("--db") && !serve.contains("--no-store"),
        "{serve}"
    );
    let stream = stdout(&["stream", "--help"]);
    assert!(
        stream.contains("--db") && stream.contains("--no-store"),
        "{stream}"
    );
    // Still accepted (scripts that pass them everywhere keep working) and global
    // options still reach the others.
    let out = Command::new(BIN)
        .args([
            "keygen",
            "--db",
            "/nonexistent/h.db",
            "--no-store",
            "-o",
            "-",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn keygen_defaults_to_the_config_directory_and_prints_with_dash() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let out = Command::new(BIN)
        .arg("keygen")
        .env("XDG_CONFIG_HOME", dir.path())
        .current_dir(cwd.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = dir.path().join("mtuperf").join("key");
    let text = std::fs::read_to_string(&key).unwrap();
    assert!(
        text.starts_with("# mtuperf") || text.contains("mtuperf-key-v1"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "nothing in the cwd"
    );
    let printed = stdout(&["keygen", "-o", "-"]);
    assert!(printed.contains("mtuperf-key-v1 "), "{printed}");
    assert_ne!(printed, text, "a fresh key each time");
}
