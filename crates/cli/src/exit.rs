//! Exit codes, documented in the README ("Exit codes"). Errors are printed once, whole
//! chain on one line, by `finish`.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The check ran and the answer is "no" (path verdict, doctor FAIL).
/// The document a command asked for as JSON prints on stdout when it fails.
pub const ERROR_SCHEMA: &str = mtuperf_report::error::SCHEMA;

use mtuperf_report::error::ErrorDoc;

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
/// The result could not be written whole to stdout (a full disk under a redirect,
/// an I/O error): what is on stdout is incomplete. A run was still stored.
pub const OUTPUT: u8 = 7;
/// Stdout's reader went away (EPIPE: `| head`): the output stopped there. 128 + 13,
/// what a shell reports for a process that SIGPIPE ended, so `set -o pipefail`
/// scripts see what they see from other tools; a run was still stored.
pub const BROKEN_PIPE: u8 = 141;
/// Stopped by Ctrl-C (SIGINT); the partial result was printed and stored. `finish`
/// turns it into [`TERMINATED`] when SIGTERM was the signal.
pub const INTERRUPTED: u8 = 130;
/// Stopped by SIGTERM; the partial result was printed and stored.
pub const TERMINATED: u8 = 143;

/// The last stop signal received (0: none), set by the handlers of
/// `interrupt::flag`.
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

    /// A flag's value out of what it takes: the flag, the value, what is allowed and a
    /// hint.
    pub fn bad_value(flag: &str, value: &str, allowed: &str, hint: &str) -> Failure {
        Failure::usage_msg(format!(
            "invalid value {value:?} for {flag}: allowed {allowed}; {hint}"
        ))
    }

    /// What the command line asked for (`by`: a flag or a command) needs `flag`, which
    /// was not given: why, and how to give it.
    pub fn needs(by: &str, flag: &str, why: &str, hint: &str) -> Failure {
        Failure::usage_msg(format!("{by} needs {flag}: {why}; {hint}"))
    }

    /// Two flags that cannot be given together: why, and what to do.
    pub fn conflict(flag: &str, other: &str, why: &str, hint: &str) -> Failure {
        Failure::usage_msg(format!("{flag} cannot go with {other}: {why}; {hint}"))
    }

    /// A flag given to a command that has no use for it.
    pub fn not_here(flag: &str, command: &str, why: &str, hint: &str) -> Failure {
        Failure::usage_msg(format!(
            "{flag} does not apply to `{command}`: {why}; {hint}"
        ))
    }

    fn usage_msg(msg: String) -> Failure {
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

/// Ends the invocation with its exit code: flushes stdout, prints the error chain once (on one line,
/// control characters escaped), then any storage failure (the result was printed
/// first) and any output failure (the run was stored first). The code: an
/// interruption (130/143), else the command's own error (2-6), else a run that could
/// not be stored (5), else stdout that failed (7) or whose reader went away (141),
/// else the command's answer (0/1): a result not written whole is never a success.
pub fn finish(result: CmdResult) -> u8 {
    crate::out::flush();
    let code = match result {
        Ok(code) => code,
        // A command that wrote elsewhere than through `out` and met a closed pipe.
        Err(f) if is_broken_pipe(&f.error) && crate::out::cut().is_none() => {
            report_cut(&crate::out::Cut {
                broken_pipe: true,
                error: format!("{:#}", f.error),
            });
            BROKEN_PIPE
        }
        Err(f) if is_broken_pipe(&f.error) => BROKEN_PIPE,
        Err(f) => {
            // The chain can carry what a peer sent (an agent's refusal, a hostname):
            // escaped, so it cannot forge a second line or drive the terminal.
            let chain = format!("{:#}", f.error);
            errln!(
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
    let code = if crate::unsaved::report() && code < FAILED {
        FAILED
    } else {
        code
    };
    let code = match crate::out::cut() {
        Some(cut) => {
            report_cut(&cut);
            if code <= CHECK_FAILED {
                cut_code(&cut)
            } else {
                code
            }
        }
        None => code,
    };
    signalled(code)
}

/// The exit code of an output that stopped at `cut`.
fn cut_code(cut: &crate::out::Cut) -> u8 {
    if cut.broken_pipe {
        BROKEN_PIPE
    } else {
        OUTPUT
    }
}

/// Says on stderr that the output is incomplete, why, and where the result is kept.
fn report_cut(cut: &crate::out::Cut) {
    let what = if cut.broken_pipe {
        "mtuperf: output cut short: stdout's reader went away (broken pipe)".to_string()
    } else {
        format!(
            "mtuperf: error: writing to stdout failed: {}; the output is incomplete",
            cut.error
        )
    };
    let runs = crate::out::stored_runs();
    let kept = match runs.as_slice() {
        [] => String::new(),
        [id] => format!("; the run is stored as run {id} (`mtuperf show {id}`)"),
        [first, .., last] if runs.len() > 5 => format!(
            "; the {} runs are stored, as runs {first} to {last} (`mtuperf history`)",
            runs.len()
        ),
        _ => format!(
            "; the runs are stored as runs {} (`mtuperf history`)",
            runs.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    errln!("{what}{kept}");
}

/// Ends the invocation on a command line clap refused (or help and version, which it
/// prints on stdout with exit 0): its message on stderr as clap words it, and, when
/// JSON was asked for, the same as an `mtuperf.error/1` document on stdout; exit 2.
pub fn command_line(e: &clap::Error, json: bool) -> u8 {
    crate::out::clap(e);
    let code = u8::try_from(e.exit_code()).unwrap_or(USAGE);
    if json && e.use_stderr() {
        crate::out::json(&ErrorDoc {
            schema: ERROR_SCHEMA,
            error: clap_message(&e.render().to_string()),
            exit: code,
        });
        crate::out::flush();
    }
    code
}

/// clap's rendered error on one line: the message and its tips, without the usage
/// and the "For more information" line (the document is for a program to read).
fn clap_message(rendered: &str) -> String {
    rendered
        .split("\n\n")
        .map(str::trim)
        .filter(|p| {
            !p.is_empty() && !p.starts_with("Usage:") && !p.starts_with("For more information")
        })
        .map(|p| {
            let p = p.strip_prefix("error: ").unwrap_or(p);
            p.split_whitespace().collect::<Vec<_>>().join(" ")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clap_error_becomes_one_line_without_its_usage() {
        let rendered = "error: unexpected argument '--jsn' found\n\n  tip: a similar argument exists: '--json'\n\nUsage: mtuperf stream --json <TARGET>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_message(rendered),
            "unexpected argument '--jsn' found; tip: a similar argument exists: '--json'"
        );
    }

    #[test]
    fn each_usage_message_names_the_flag_and_gives_a_hint() {
        let cases = [
            (
                Failure::bad_value("--block", "0", "1 B to 1 MiB", "e.g. --block 8K"),
                "invalid value \"0\" for --block: allowed 1 B to 1 MiB; e.g. --block 8K",
            ),
            (
                Failure::needs(
                    "--from",
                    "--key-file",
                    "only keyed agents do",
                    "mtuperf keygen",
                ),
                "--from needs --key-file: only keyed agents do; mtuperf keygen",
            ),
            (
                Failure::conflict("--no-store", "--resume", "it reads the history", "drop it"),
                "--no-store cannot go with --resume: it reads the history; drop it",
            ),
            (
                Failure::not_here("--db", "mtuperf lab up", "no history", "see stream"),
                "--db does not apply to `mtuperf lab up`: no history; see stream",
            ),
        ];
        for (f, want) in cases {
            assert_eq!(f.code, USAGE);
            assert_eq!(f.error.to_string(), want);
        }
    }
}
