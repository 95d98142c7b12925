//! mtuperf: measure and verify cluster interconnects.
use std::process::ExitCode;

use clap::Parser;

#[macro_use]
mod out;
mod cli;
mod cmd;
mod common;
mod exit;
mod global;
mod groups;
mod output;
mod progress;
mod stored;
mod unsaved;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    exit::finish(cli::run(args))
}
