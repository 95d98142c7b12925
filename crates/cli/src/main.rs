//! mtuperf: measure and verify cluster interconnects.
use std::process::ExitCode;

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

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let matches = match cli::command().try_get_matches_from(&argv) {
        Ok(m) => m,
        Err(e) => return exit::command_line(&e, output::json_in_argv(&argv)),
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
