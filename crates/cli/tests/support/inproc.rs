//! The CLI driven in this process through the library (`mtuperf::run_captured`): no
//! binary started, stdout and stderr in buffers, the exit code the binary would end
//! with. Shaped like `std::process::Command` (`args`, `output`, `status.code()`), so a
//! test reads the same whichever way it runs the CLI. What needs a process stays on
//! the binary (`agent_support::mtuperf`): signals, a closed stdout, the environment.
#![allow(dead_code)]

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::Path;

/// The exit code, read like `std::process::ExitStatus`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Status(pub u8);

impl Status {
    #[allow(clippy::unnecessary_wraps)] // read like ExitStatus::code
    pub fn code(self) -> Option<i32> {
        Some(i32::from(self.0))
    }

    pub fn success(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "exit {}", self.0)
    }
}

/// What an invocation printed and its exit code.
#[derive(Debug, Clone)]
pub struct Output {
    pub status: Status,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// `mtuperf ARGS...`, run in this process by [`Cli::output`].
#[derive(Debug, Default, Clone)]
pub struct Cli {
    args: Vec<OsString>,
}

impl Cli {
    pub fn new() -> Cli {
        Cli::default()
    }

    pub fn arg(&mut self, a: impl AsRef<OsStr>) -> &mut Cli {
        self.args.push(a.as_ref().to_owned());
        self
    }

    pub fn args<S: AsRef<OsStr>>(&mut self, args: impl IntoIterator<Item = S>) -> &mut Cli {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Runs it; never fails (the `Result` reads like `Command::output`). An
    /// invocation that names no history (`--db`, `--no-store`) gets an empty one of
    /// its own: a test never reads or writes the user's real history.
    #[allow(clippy::unnecessary_wraps)]
    pub fn output(&mut self) -> std::io::Result<Output> {
        clean_env();
        let mut args = self.args.clone();
        let own = !args.iter().any(|a| a == "--db" || a == "--no-store");
        let dir = own.then(tempfile::tempdir).transpose()?;
        if let Some(d) = &dir {
            let db = d.path().join("history.db").into_os_string();
            args.splice(0..0, [OsString::from("--db"), db]);
        }
        let c = mtuperf::run_captured(args);
        Ok(Output {
            status: Status(c.code),
            stdout: c.stdout,
            stderr: c.stderr,
        })
    }
}

/// `mtuperf --db DB`, in this process.
pub fn mtuperf_in(db: &Path) -> Cli {
    let mut c = Cli::new();
    c.arg("--db").arg(db);
    c
}

/// `mtuperf ARGS...` in this process.
pub fn run_in(args: &[&str]) -> Output {
    Cli::new().args(args).output().unwrap()
}

/// Stdout then stderr, as text (for a failure's message).
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Runs `cli`, which must succeed, and returns its stdout as one JSON document.
pub fn json_in(cli: &mut Cli) -> serde_json::Value {
    let out = cli.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        cli.args,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document on stdout")
}

/// The process tests drop MTUPERF_KEY_FILE and MTUPERF_DB from the binary's
/// environment; in-process, the test process's own must not have them (removed
/// once, and only when set: a developer's shell may export them).
fn clean_env() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for v in ["MTUPERF_KEY_FILE", "MTUPERF_DB", "MTUPERF_SSH_COMMAND"] {
            if std::env::var_os(v).is_some() {
                std::env::remove_var(v);
            }
        }
    });
}
