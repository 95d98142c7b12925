//! mtuperf: measure and verify cluster interconnects.
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod cmd;
mod common;
mod exit;
mod progress;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    exit::finish(cmd::run(args))
}
