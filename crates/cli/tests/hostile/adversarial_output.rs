//! No lost result (issue 12): every subcommand that prints writes into a pipe whose
//! reader is gone without panicking, still stores its run, and exits 141 saying so
//! (issue 28); a history database on a
//! filesystem that fills up during a run gets the result printed first (JSON that
//! parses), exit 5, the document kept elsewhere, the database intact; an explicit --db
//! under a missing directory is refused by name and nothing is created.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::adversarial_support;

use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use adversarial_support::{stderr, LiveAgent, BIN};
use mtuperf_store::{Filter, Store};

/// Runs mtuperf with stdout a pipe whose read end is already closed (every write fails
/// with EPIPE), stdin empty.
fn into_closed_pipe(db: &Path, key: &Path, args: &[&str]) -> Output {
    let (read_end, write_end): (OwnedFd, OwnedFd) = nix::unistd::pipe().unwrap();
    drop(read_end);
    Command::new(BIN)
        .env_remove("MTUPERF_KEY_FILE")
        .env_remove("MTUPERF_DB")
        .arg("--db")
        .arg(db)
        .arg("--key-file")
        .arg(key)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .output()
        .unwrap()
}

fn stored(db: &Path) -> usize {
    Store::open(db)
        .unwrap()
        .list(&Filter::default())
        .unwrap()
        .len()
}

#[test]
fn every_printing_subcommand_survives_a_closed_stdout_and_stores_its_run() {
    let agent = LiveAgent::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let a = agent.addr.to_string();
    let keygen_out = dir.path().join("new.key");
    // (arguments, how many runs the command stores)
    let cases: Vec<(Vec<&str>, usize)> = vec![
        (vec!["stream", &a, "--time", "1s", "--interval", "100ms"], 1),
        (vec!["stream", &a, "--time", "500ms", "--json"], 1),
        (vec!["stream", &a, "--time", "300ms", "--repeat", "2"], 2),
        (vec!["rr", &a, "--time", "500ms", "--interval", "100ms"], 1),
        (vec!["rr", &a, "--time", "300ms", "--json"], 1),
        (vec!["path", &a], 1),
        (vec!["doctor", "--iface", "lo", "--sample", "0s"], 1),
        (
            vec!["doctor", "--iface", "lo", "--sample", "0s", "--fix-script"],
            1,
        ),
        (vec!["history"], 0),
        (vec!["history", "--json"], 0),
        (vec!["show", "1"], 0),
        (vec!["show", "1", "--json"], 0),
        (vec!["export"], 0),
        (vec!["report", "1"], 0),
        (vec!["lab", "status"], 0),
        (vec!["keygen", "-o", keygen_out.to_str().unwrap()], 0),
    ];
    let mut expect_runs = 0;
    for (args, runs) in &cases {
        let out = into_closed_pipe(&db, &agent.key_file, args);
        let err = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        assert!(
            !err.contains("panicked") && code != Some(101),
            "{args:?} panicked on a closed stdout (exit {code:?}): {err}"
        );
        // The output was cut: 141 (as a shell reports a process SIGPIPE ended), with
        // the reason, whatever the command's own answer would have been.
        assert_eq!(code, Some(141), "{args:?}: {err}");
        assert!(
            err.contains("output cut short: stdout's reader went away (broken pipe)"),
            "{args:?}: {err}"
        );
        expect_runs += runs;
        assert_eq!(
            stored(&db),
            expect_runs,
            "{args:?} did not store its run: {err}"
        );
        // A command that stored runs says where they are.
        if *runs == 1 {
            assert!(
                err.contains(&format!("the run is stored as run {expect_runs}")),
                "{args:?}: {err}"
            );
        } else if *runs > 1 {
            assert!(
                err.contains("the runs are stored as runs"),
                "{args:?}: {err}"
            );
        }
    }
}

/// Runs mtuperf with stdout `/dev/full` (every write fails with ENOSPC).
fn into_dev_full(db: &Path, key: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .env_remove("MTUPERF_KEY_FILE")
        .env_remove("MTUPERF_DB")
        .arg("--db")
        .arg(db)
        .arg("--key-file")
        .arg(key)
        .args(args)
        .stdin(Stdio::null())
        .stdout(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )
        .output()
        .unwrap()
}

#[test]
fn a_result_that_does_not_reach_stdout_exits_7_with_the_reason_and_stays_stored() {
    let agent = LiveAgent::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let a = agent.addr.to_string();
    let reason = "mtuperf: error: writing to stdout failed: No space left on device";
    // A measuring run: its JSON cannot be written, it is stored all the same, and the
    // error says where.
    let out = into_dev_full(
        &db,
        &agent.key_file,
        &["rr", &a, "--time", "500ms", "--json"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(err.contains(reason), "{err}");
    assert!(
        err.contains("the output is incomplete; the run is stored as run 1 (`mtuperf show 1`)"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(stored(&db), 1, "the run is in the history");
    // The same run as text.
    let out = into_dev_full(&db, &agent.key_file, &["rr", &a, "--time", "300ms"]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert_eq!(stored(&db), 2);
    // Every command that prints a stored result.
    for args in [
        &["export"][..],
        &["export", "--format", "json"],
        &["show", "1"],
        &["show", "1", "--json"],
        &["history"],
        &["history", "--json"],
        &["report", "1"],
        &["report", "1", "--format", "md"],
    ] {
        let out = into_dev_full(&db, &agent.key_file, args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(7), "{args:?}: {err}");
        assert!(err.contains(reason), "{args:?}: {err}");
        assert!(
            !err.contains("stored as run"),
            "{args:?} stored nothing: {err}"
        );
    }
    assert_eq!(stored(&db), 2, "the history is as it was");
    // With room, the same commands succeed.
    let out = Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .args(["export", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// `docs/production.md`'s cron recipe on a disk with one page left: the export is cut
/// at 4 KiB, exits 7, and `&& mv` leaves the previous file in place.
#[test]
fn a_short_export_on_a_full_disk_exits_non_zero_and_the_cron_recipe_keeps_the_old_file() {
    let Some(fs) = Tmpfs::mount("1m") else { return };
    let agent = LiveAgent::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("history.db");
    let a = agent.addr.to_string();
    let out = Command::new(BIN)
        .env_remove("MTUPERF_KEY_FILE")
        .arg("--db")
        .arg(&db)
        .arg("--key-file")
        .arg(&agent.key_file)
        .args(["stream", &a, "--time", "100ms", "--repeat", "12"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let whole = Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .args(["export", "--format", "json"])
        .output()
        .unwrap()
        .stdout;
    assert!(whole.len() > 8192, "a document larger than the room left");
    let final_file = fs.path().join("runs.json");
    std::fs::write(&final_file, "previous export\n").unwrap();
    fs.fill_leaving("filler", 4096);
    let recipe = format!(
        "{bin} --db {db} export --format json > {f}.tmp && mv {f}.tmp {f}",
        bin = BIN,
        db = db.display(),
        f = final_file.display()
    );
    let out = Command::new("sh").args(["-c", &recipe]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(
        err.contains("writing to stdout failed: No space left on device"),
        "{err}"
    );
    let short = std::fs::read(fs.path().join("runs.json.tmp")).unwrap();
    assert!(
        !short.is_empty() && short.len() < whole.len(),
        "a short write: {} of {} bytes",
        short.len(),
        whole.len()
    );
    assert_eq!(
        std::fs::read_to_string(&final_file).unwrap(),
        "previous export\n",
        "the truncated export was not installed"
    );
}

/// Mounts a tmpfs of `size` on a fresh directory; None (test skipped) without root.
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs (needs root)");
            return None;
        }
        Some(Tmpfs(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Writes zeros into `name` until the filesystem is full.
    fn fill(&self, name: &str) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.path().join(name)).unwrap();
        let block = vec![0u8; 64 * 1024];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }

    /// Fills the filesystem, then frees `room` bytes of it.
    fn fill_leaving(&self, name: &str, room: u64) {
        self.fill(name);
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(self.path().join(name))
            .unwrap();
        let len = f.metadata().unwrap().len();
        f.set_len(len.saturating_sub(room)).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_disk_that_fills_during_the_run_keeps_the_result_and_the_database() {
    let Some(fs) = Tmpfs::mount("2m") else { return };
    let agent = LiveAgent::start(&[]);
    let db = fs.path().join("history.db");
    let a = agent.addr.to_string();
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .env_remove("MTUPERF_KEY_FILE")
            .env_remove("MTUPERF_DB")
            .env("TMPDIR", fs.path().join("no-such-tmp"))
            .arg("--db")
            .arg(&db)
            .arg("--key-file")
            .arg(&agent.key_file)
            .args(["stream", &a, "--json"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // One run stored while there is room.
    let first = run(&["--time", "300ms"]).wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(stored(&db), 1);
    // The next run: the filesystem fills up while it measures.
    let child = run(&["--time", "3s"]);
    std::thread::sleep(Duration::from_millis(1200));
    fs.fill("filler");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "exit code; stderr: {err}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("result not printed as JSON ({e}): {err}"));
    assert_eq!(doc["schema"], "mtuperf.stream/7");
    assert!(doc["runs"][0]["metrics"].is_object(), "{doc}");
    assert!(
        err.contains("storing the stream run in") && err.contains("history.db"),
        "the storage failure is named: {err}"
    );
    // Neither beside the full database nor in the (missing) TMPDIR: said so.
    assert!(err.contains("could not be saved anywhere"), "{err}");
    // With room again the database is intact and holds the first run only.
    std::fs::remove_file(fs.path().join("filler")).unwrap();
    let store = Store::open(&db).unwrap();
    let runs = store.list(&Filter::default()).unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    drop(store);
    let check = Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .args(["history", "--json"])
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );

    // Fill first, room for the JSON file beside the database freed: the run is kept there.
    fs.fill("filler");
    let child = run(&["--time", "300ms"]);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(5) && err.contains("saved to") {
        let saved = err
            .split("saved to ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .unwrap();
        let kept: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap();
        assert_eq!(kept["schema"], "mtuperf.stream/7");
    } else {
        // The database could not even be opened on the full disk: refused before the
        // test ran (nothing measured, nothing lost), with the path named.
        assert_eq!(out.status.code(), Some(5), "{err}");
        assert!(err.contains("history.db"), "{err}");
    }
}

#[test]
fn a_missing_directory_under_an_explicit_db_is_named_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("typo").join("deeper").join("history.db");
    let out = Command::new(BIN)
        .env_remove("MTUPERF_DB")
        .arg("--db")
        .arg(&db)
        .arg("history")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--db") && err.contains("typo"), "{err}");
    assert!(!dir.path().join("typo").exists(), "directory created");
    // The default location is still created when missing.
    let home = dir.path().join("home");
    let out = Command::new(BIN)
        .env_remove("MTUPERF_DB")
        .env("XDG_DATA_HOME", &home)
        .arg("history")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(home.join("mtuperf").join("history.db").exists());
}
