//! mtuperf: measure and verify cluster interconnects.
use std::process::ExitCode;

use clap::FromArgMatches;

#[macro_use]
mod out;
mod args;
mod cli;
mod cmd;
mod common;
mod exit;
mod global;
mod groups;
mod live;
mod output;
mod placement_args;
mod progress;
mod stored;
mod unsaved;

fn main() -> ExitCode {
    let args =
        cli::Cli::from_arg_matches(&cli::command().get_matches()).unwrap_or_else(|e| e.exit());
    exit::finish(cli::run(args))
}
