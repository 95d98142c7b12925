//! `mtuperf completions SHELL`: the shell completion script, generated from the CLI
//! definition (clap_complete), on standard output.

use crate::exit::CmdResult;
use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[allow(clippy::needless_pass_by_value, clippy::unnecessary_wraps)] // every subcommand has this signature
/// `cmd` is the whole command line's definition (the dispatcher hands it over).
pub fn run(_g: &Global, a: Args, mut cmd: clap::Command) -> CmdResult {
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "mtuperf", &mut buf);
    out!("{}", String::from_utf8_lossy(&buf));
    Ok(0)
}
