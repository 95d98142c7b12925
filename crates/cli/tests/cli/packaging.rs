//! Packaging: shell completions and manual pages generated from the command line, and
//! `--version` naming the commit and build date.

use std::process::Command;

use crate::inproc::run_in;

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

/// In-process: completions, pages, the version and the help cross no process
/// boundary.
fn stdout(args: &[&str]) -> String {
    let out = run_in(args);
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
    let out = run_in(&["completions", "tcsh"]);
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
    let out = run_in(&["man", "--subcommand", "bogus"]);
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

/// The shared options are listed where they apply: `--db` and `--no-store` on the
/// commands that store runs (`serve` too: its --watch checks are stored), `--db` alone
/// on those that read the history, `--key-file` on those that talk to agents; none on
/// `keygen`, `completions`, `man` or `lab`.
#[test]
fn shared_options_are_listed_where_they_apply() {
    for (cmd, db, no_store, key) in [
        (&["serve"][..], true, true, true),
        (&["stream"][..], true, true, true),
        (&["report"][..], true, false, false),
        (&["history"][..], true, false, false),
        (&["keygen"][..], false, false, false),
        (&["completions"][..], false, false, false),
        (&["lab", "up"][..], false, false, false),
    ] {
        let help = stdout(&[cmd, &["--help"]].concat());
        for (flag, want) in [("--db", db), ("--no-store", no_store), ("--key-file", key)] {
            assert_eq!(help.contains(flag), want, "{cmd:?} {flag}: {help}");
        }
    }
    // Before the command they are global: scripts that pass them everywhere keep
    // working.
    let out = run_in(&[
        "--db",
        "/nonexistent/h.db",
        "--no-store",
        "keygen",
        "-o",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // After a command that has no use for them: refused, saying why and where they go.
    let out = run_in(&["keygen", "--db", "/nonexistent/h.db", "-o", "-"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--db does not apply to `mtuperf keygen`: it neither reads nor writes the history; the commands that take --db: serve, stream"),
        "{err}"
    );
}

/// `man --out-dir` writes one page per subcommand, nested ones included, each a
/// page of its own naming the command in full.
#[test]
fn man_out_dir_writes_a_page_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let listed = stdout(&["man", "--out-dir", dir.path().to_str().unwrap()]);
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for want in [
        "mtuperf.1",
        "mtuperf-stream.1",
        "mtuperf-lab.1",
        "mtuperf-lab-up.1",
        "mtuperf-lab-exec.1",
        "mtuperf-man.1",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("help")), "{names:?}");
    assert_eq!(listed.lines().count(), names.len(), "{listed}");
    let up = std::fs::read_to_string(dir.path().join("mtuperf-lab-up.1")).unwrap();
    assert!(up.contains(".TH mtuperf-lab-up 1"), "{up}");
    assert!(
        up.contains("mtuperf lab up") && up.contains("scenario"),
        "{up}"
    );
    assert!(
        !up.contains("no\\-store") && !up.contains("key\\-file"),
        "{up}"
    );
    // One page on stdout by its words or its page name.
    for name in ["lab up", "lab-up", "mtuperf-lab-up"] {
        let page = stdout(&["man", "--subcommand", name]);
        assert!(page.contains(".TH mtuperf-lab-up 1"), "{name}: {page}");
    }
    // A directory that does not exist is refused, not created.
    let missing = dir.path().join("no/such");
    let out = run_in(&["man", "--out-dir", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("mkdir -p"));
    assert!(!missing.exists());
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
