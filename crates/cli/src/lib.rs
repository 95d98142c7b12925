//! mtuperf: measure and verify cluster interconnects. The command line as a library:
//! the binary (`main.rs`) hands its arguments to [`run`]; tests drive the same code
//! in-process through [`run_captured`], which keeps what it prints in buffers.
use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;

use clap::FromArgMatches;

#[macro_use]
mod out;
mod args;
mod cli;
mod cmd;
mod connect;
mod exit;
mod global;
mod heading;
mod history;
mod interrupt;
mod live;
mod output;
mod parse;
mod placement_args;
mod progress;
mod series;
mod ssh;
mod stored;
mod unsaved;

/// The binary: `argv` (the program's name first) run against the process's own
/// stdout and stderr, its signals and its exit code.
pub fn run(argv: Vec<OsString>) -> ExitCode {
    let _in = out::process().enter();
    ExitCode::from(invoke(&argv))
}

/// What an in-process invocation ([`run_captured`]) ended with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The exit code the binary would end with.
    pub code: u8,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
}

impl Captured {
    /// Stdout as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Stderr as text (invalid UTF-8 replaced).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// The command line `mtuperf ARGS...` run in this process, for tests: what it prints
/// is kept in buffers (never this process's stdout or stderr), its state is its own
/// (invocations may run side by side on several threads), and it installs no signal
/// handler (Ctrl-C stays this process's). Everything else is the binary's code path,
/// exit code included; what needs a process (signals, a closed stdout) is tested on
/// the binary.
pub fn run_captured<I, T>(args: I) -> Captured
where
    I: IntoIterator<Item = T>,
    T: Into<OsString>,
{
    let argv: Vec<OsString> = std::iter::once(OsString::from("mtuperf"))
        .chain(args.into_iter().map(Into::into))
        .collect();
    let sink = Arc::new(out::Sink::buffers());
    let code = {
        let _in = sink.enter();
        invoke(&argv)
    };
    let (stdout, stderr) = sink.take();
    Captured {
        code,
        stdout,
        stderr,
    }
}

/// Parses `argv`, runs its command and returns the exit code, on the current sink.
fn invoke(argv: &[OsString]) -> u8 {
    let matches = match cli::command().try_get_matches_from(argv) {
        Ok(m) => m,
        Err(e) => return exit::command_line(&e, output::json_in_argv(argv)),
    };
    // Every failure from here on, however early, is a document when JSON was asked for.
    if output::json_asked(&matches) {
        out::choose_json();
    }
    let g = match global::resolve(&matches) {
        Ok(g) => g,
        Err(f) => return exit::finish(Err(f)),
    };
    match cli::Cli::from_arg_matches(&matches) {
        Ok(args) => exit::finish(cli::run(&g, args)),
        Err(e) => exit::command_line(&e, out::json_chosen()),
    }
}
