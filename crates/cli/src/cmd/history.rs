use crate::cli::Global;
use crate::exit::CmdResult;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_g: &Global, _a: Args) -> CmdResult {
    Err(crate::exit::Failure::new(
        crate::exit::FAILED,
        anyhow::anyhow!("history: not built yet"),
    ))
}
