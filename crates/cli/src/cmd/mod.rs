//! One file per subcommand: parse → validate → call the engine → render.
pub mod compare;
pub mod completions;
pub mod demo;
pub mod doctor;
pub mod export;
pub mod history;
pub mod keygen;
pub mod lab;
pub mod man;
pub mod path;
pub mod report;
pub mod rr;
pub mod serve;
pub mod show;
pub mod stream;

use crate::cli::{Cli, Command};
use crate::exit::CmdResult;

pub fn run(cli: Cli) -> CmdResult {
    let g = &cli.global;
    match cli.command {
        Command::Serve(a) => serve::run(g, a),
        Command::Completions(a) => completions::run(g, a),
        Command::Man(a) => man::run(g, a),
        Command::Stream(a) => stream::run(g, a),
        Command::Rr(a) => rr::run(g, &a),
        Command::History(a) => history::run(g, a),
        Command::Show(a) => show::run(g, a),
        Command::Lab(a) => lab::run(g, a),
        Command::Path(a) => path::run(g, a),
        Command::Demo(a) => demo::run(g, a),
        Command::Doctor(a) => doctor::run(g, a),
        Command::Compare(a) => compare::run(g, a),
        Command::Report(a) => report::run(g, a),
        Command::Export(a) => export::run(g, a),
        Command::Keygen(a) => keygen::run(&a),
    }
}
