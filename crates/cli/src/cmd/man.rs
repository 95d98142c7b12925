//! `mtuperf man`: the manual page (roff), generated from the CLI definition
//! (clap_mangen), on standard output; `--subcommand NAME` for one subcommand's page.
use anyhow::anyhow;

use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The page of one subcommand (e.g. rr), as `mtuperf-rr(1)`.
    #[arg(long, value_name = "NAME")]
    subcommand: Option<String>,
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
/// `root` is the whole command line's definition (the dispatcher hands it over).
pub fn run(_g: &Global, a: Args, root: clap::Command) -> CmdResult {
    let (cmd, title) = match &a.subcommand {
        None => (root, "mtuperf".to_string()),
        Some(name) => {
            let names: Vec<String> = root
                .get_subcommands()
                .map(|c| c.get_name().to_string())
                .collect();
            let Some(sub) = root.find_subcommand(name).cloned() else {
                return Err(Failure::usage(
                    "--subcommand",
                    name,
                    &format!("one of {}", names.join(", ")),
                    "see `mtuperf --help`",
                ));
            };
            (
                sub.version(env!("MTUPERF_VERSION")),
                format!("mtuperf-{name}"),
            )
        }
    };
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd)
        .title(title)
        .render(&mut buf)
        .map_err(|e| Failure::new(exit::FAILED, anyhow!("rendering the manual page: {e}")))?;
    out!("{}", String::from_utf8_lossy(&buf));
    Ok(0)
}
