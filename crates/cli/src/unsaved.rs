//! A run whose storage fails is never lost: its document is written as a JSON file next
//! to the database (or, if that fails too, in the temporary directory), and the failure
//! is reported on stderr after the result was printed, with exit code 5 (see `exit`).
use std::io::Write;
use std::path::{Path, PathBuf};

/// Keeps `document` (a run of `kind`) that `db` refused with `error`; the message is
/// reported by [`report`] when the command ends.
pub fn keep(db: &Path, kind: mtuperf_store::RunKind, document: &str, error: &anyhow::Error) {
    let name = format!(
        "mtuperf-unsaved-{kind}-{}-{}.json",
        mtuperf_engine::unix_ms(),
        std::process::id()
    );
    let beside = db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from(&name), |d| d.join(&name));
    let msg = match write_new(&beside, document) {
        Ok(()) => format!("the run was saved to {} instead", beside.display()),
        Err(e1) => {
            let tmp = std::env::temp_dir().join(&name);
            match write_new(&tmp, document) {
                Ok(()) => format!(
                    "the run was saved to {} instead ({} failed: {e1})",
                    tmp.display(),
                    beside.display()
                ),
                Err(e2) => format!(
                    "the run could not be saved anywhere ({}: {e1}; {}: {e2}); its result is the output above",
                    beside.display(),
                    tmp.display()
                ),
            }
        }
    };
    let line = format!(
        "mtuperf: error: storing the {kind} run in {} failed: {error:#}; {msg}",
        db.display()
    );
    crate::out::unsaved(line);
}

fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    let r = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
    if r.is_err() {
        let _ = std::fs::remove_file(path);
    }
    r
}

/// Prints the storage failures kept so far on stderr; true if there was any.
pub fn report() -> bool {
    let lines = crate::out::take_unsaved();
    for line in &lines {
        errln!("{line}");
    }
    !lines.is_empty()
}
