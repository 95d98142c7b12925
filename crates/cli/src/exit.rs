//! Exit codes, documented in the README ("Exit codes"). Errors are printed once, whole
//! chain on one line, by `finish`.
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The check ran and the answer is "no" (path verdict, doctor FAIL).
/// The document a command asked for as JSON prints on stdout when it fails.
pub const ERROR_SCHEMA: &str = "mtuperf.error/1";

/// A failure as a document (`--json` commands print it on stdout).
#[derive(serde::Serialize)]
struct ErrorDoc {
    schema: &'static str,
    error: String,
    exit: u8,
}

pub const CHECK_FAILED: u8 = 1;
/// Bad command line: flag, value or combination (clap uses 2 as well).
pub const USAGE: u8 = 2;
/// The agent could not be reached: refused, unreachable, timed out.
pub const UNREACHABLE: u8 = 3;
/// The agent answered but refused: busy, beyond a limit, authentication, version.
pub const REFUSED: u8 = 4;
/// A test failed while running, or a local setup step failed.
pub const FAILED: u8 = 5;
/// Missing privilege or tool (lab without CAP_NET_ADMIN, missing `ip`).
pub const ENVIRONMENT: u8 = 6;
/// Stopped by Ctrl-C (SIGINT); the partial result was printed and stored. `finish`
/// turns it into [`TERMINATED`] when SIGTERM was the signal.
pub const INTERRUPTED: u8 = 130;
/// Stopped by SIGTERM; the partial result was printed and stored.
pub const TERMINATED: u8 = 143;

/// The last stop signal received (0: none), set by the handlers of
/// `common::interrupt_flag`.
pub fn last_signal() -> Arc<AtomicUsize> {
    static LAST: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    LAST.get_or_init(|| Arc::new(AtomicUsize::new(0))).clone()
}

/// 128 + the signal number, as shells report a process a signal ended.
pub fn signal_code(sig: i32) -> i32 {
    if sig == signal_hook::consts::SIGTERM {
        i32::from(TERMINATED)
    } else {
        i32::from(INTERRUPTED)
    }
}

fn signalled(code: u8) -> u8 {
    let sig = last_signal().load(Ordering::Relaxed);
    if code == INTERRUPTED && sig == signal_hook::consts::SIGTERM as usize {
        TERMINATED
    } else {
        code
    }
}

/// An error carrying the exit code it should end the process with.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn new(code: u8, error: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code,
            error: error.into(),
        }
    }

    pub fn usage(flag: &str, value: &str, allowed: &str, hint: &str) -> Failure {
        let mut msg = format!("invalid value {value:?} for {flag}: allowed {allowed}");
        if !hint.is_empty() {
            msg.push_str("; ");
            msg.push_str(hint);
        }
        Failure::new(USAGE, anyhow::anyhow!(msg))
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure {
            code: FAILED,
            error,
        }
    }
}

pub type CmdResult = Result<u8, Failure>;

/// Ends the process: flushes stdout (a closed pipe is not an error: the command already
/// stopped printing and stored its run), prints the error chain once (on one line,
/// control characters escaped), then any storage
/// failure (the result was printed first; exit 5).
pub fn finish(result: CmdResult) -> ExitCode {
    crate::out::flush();
    let code = match result {
        Ok(code) => code,
        Err(f) if is_broken_pipe(&f.error) => 0,
        Err(f) => {
            // The chain can carry what a peer sent (an agent's refusal, a hostname):
            // escaped, so it cannot forge a second line or drive the terminal.
            let chain = format!("{:#}", f.error);
            let _ = writeln!(
                std::io::stderr(),
                "mtuperf: error: {}",
                mtuperf_proto::text::escape_control(&chain)
            );
            if crate::out::json_chosen() && !crate::out::document_printed() {
                crate::out::json(&ErrorDoc {
                    schema: ERROR_SCHEMA,
                    error: format!("{:#}", f.error),
                    exit: f.code,
                });
                crate::out::flush();
            }
            f.code
        }
    };
    // A run that could not be stored: reported after its result, exit 5 unless the
    // command already ends with a more specific failure or an interruption.
    if crate::unsaved::report() && code < FAILED {
        return ExitCode::from(FAILED);
    }
    ExitCode::from(signalled(code))
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
