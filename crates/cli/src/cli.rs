//! The command line: global options and one subcommand enum. Each subcommand's flags
//! live in its own file under `cmd/`.
use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};

use crate::cmd;
use crate::exit::CmdResult;
use crate::global::Global;

#[derive(Debug, Parser)]
#[command(
    name = "mtuperf",
    version = env!("MTUPERF_VERSION"),
    about = "Measure and verify cluster interconnects: path MTU in both directions, throughput, block latency under load",
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the agent on the far node.
    Serve(cmd::serve::Args),
    /// Bulk TCP throughput (perl-sockets / iperf class).
    Stream(cmd::stream::Args),
    /// Block request/response under load over UDP or TCP (the Cache Fusion test).
    Rr(cmd::rr::Args),
    /// List stored runs.
    History(cmd::history::Args),
    /// Print a stored run again.
    Show(cmd::show::Args),
    /// Prove a path carries its MTU in both directions, and name what breaks it.
    Path(cmd::path::Args),
    /// Build test networks in namespaces on this machine.
    Lab(cmd::lab::Args),
    /// Run the main job on an embedded default (no second machine needed).
    Demo(cmd::demo::Args),
    /// Check this host (and the peer's) for interconnect settings the documents tell operators to tune.
    Doctor(cmd::doctor::Args),
    /// Verify a whole cluster: every node pair, every interconnect network, both directions; name the culprit.
    Mesh(cmd::mesh::Args),
    /// Compare paths (e.g. MTU 1500 vs 9000): interleaved repetitions, 95% intervals, verdict.
    Compare(cmd::compare::Args),
    /// One self-contained HTML (or Markdown) report of a comparison or of stored runs.
    Report(cmd::report::Args),
    /// Stored runs as CSV or JSON, one row per run.
    Export(cmd::export::Args),
    /// Write a new shared key file for the agent and its clients.
    Keygen(cmd::keygen::Args),
    /// Print the shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::Args),
    /// Print the manual page (roff), generated from this command line.
    Man(cmd::man::Args),
}

/// The command line, with the history options (`--db`, `--no-store`) hidden from the
/// help of the subcommands that never read or write the history: each gets hidden
/// copies of its own, which the global ones then leave alone.
pub fn command() -> clap::Command {
    let mut c = Cli::command();
    let names: Vec<String> = c
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    // mut_subcommand moves the subcommand to the end: every one is visited in order so
    // that the help keeps its order.
    for name in &names {
        let quiet = ["serve", "keygen", "completions", "man"].contains(&name.as_str());
        c = c.mut_subcommand(name, |s| {
            if !quiet {
                return s;
            }
            s.arg(
                clap::Arg::new("db")
                    .long("db")
                    .value_name("PATH")
                    .value_parser(clap::value_parser!(PathBuf))
                    .hide(true),
            )
            .arg(
                clap::Arg::new("no_store")
                    .long("no-store")
                    .action(clap::ArgAction::SetTrue)
                    .hide(true),
            )
        });
    }
    c
}

/// Hands the parsed command line to its subcommand.
pub fn run(cli: Cli) -> CmdResult {
    let g = &cli.global;
    match cli.command {
        Command::Serve(a) => cmd::serve::run(g, a),
        Command::Stream(a) => cmd::stream::run(g, a),
        Command::Rr(a) => cmd::rr::run(g, &a),
        Command::History(a) => cmd::history::run(g, a),
        Command::Show(a) => cmd::show::run(g, a),
        Command::Lab(a) => cmd::lab::run(g, a),
        Command::Path(a) => cmd::path::run(g, a),
        Command::Demo(a) => cmd::demo::run(g, a),
        Command::Doctor(a) => cmd::doctor::run(g, a),
        Command::Compare(a) => cmd::compare::run(g, a),
        Command::Mesh(a) => cmd::mesh::run(g, a),
        Command::Report(a) => cmd::report::run(g, a),
        Command::Export(a) => cmd::export::run(g, a),
        Command::Keygen(a) => cmd::keygen::run(&a),
        Command::Completions(a) => cmd::completions::run(g, a, command()),
        Command::Man(a) => cmd::man::run(g, a, command()),
    }
}
