//! `mtuperf man`: the manual pages (roff), generated from the CLI definition
//! (clap_mangen): the top-level page on standard output, `--subcommand NAME` for one
//! subcommand's (`rr`, `lab up`), or `--out-dir DIR` for every page, nested
//! subcommands included (`mtuperf-lab-up.1`).
use std::path::{Path, PathBuf};

use anyhow::anyhow;

use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The page of one subcommand, as `mtuperf-NAME(1)`: rr, lab, "lab up" (or lab-up) ...
    #[arg(long, value_name = "NAME", conflicts_with = "out_dir")]
    subcommand: Option<String>,
    /// Write every page into DIR (an existing directory, e.g.
    /// /usr/local/share/man/man1): mtuperf.1, mtuperf-rr.1, mtuperf-lab-up.1 ...; the
    /// files written are listed.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
/// `root` is the whole command line's definition (the dispatcher hands it over).
pub fn run(_g: &Global, a: Args, root: clap::Command) -> CmdResult {
    // Built, every subcommand knows its full name ("mtuperf lab up", page
    // "mtuperf-lab-up") and carries the version; `help` has no page.
    let mut root = root.disable_help_subcommand(true);
    root.build();
    if let Some(dir) = &a.out_dir {
        return write_all(&root, dir);
    }
    let cmd = match &a.subcommand {
        None => root,
        Some(name) => find(&root, name)?,
    };
    let mut buf = Vec::new();
    page(cmd)
        .render(&mut buf)
        .map_err(|e| Failure::new(exit::FAILED, anyhow!("rendering the manual page: {e}")))?;
    out!("{}", String::from_utf8_lossy(&buf));
    Ok(0)
}

/// One command's page, its footer naming mtuperf and its version.
fn page(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).source(format!("mtuperf {}", env!("MTUPERF_VERSION")))
}

/// A subcommand by its words ("lab up"), its page's name ("lab-up", "mtuperf-lab-up").
fn find(root: &clap::Command, name: &str) -> Result<clap::Command, Failure> {
    let words = name.trim().trim_start_matches("mtuperf-");
    let mut at = root;
    for w in words
        .split(|c: char| c == '-' || c.is_whitespace())
        .filter(|w| !w.is_empty())
    {
        match at.find_subcommand(w) {
            Some(sub) if !sub.is_hide_set() => at = sub,
            _ => {
                return Err(Failure::bad_value(
                    "--subcommand",
                    name,
                    &format!("one of {}", pages(root).join(", ")),
                    "e.g. --subcommand rr, --subcommand \"lab up\"",
                ))
            }
        }
    }
    Ok(at.clone())
}

/// Every page's subcommand words ("rr", "lab up"), depth first.
fn pages(root: &clap::Command) -> Vec<String> {
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let name = format!("{prefix}{}", sub.get_name());
            out.push(name.clone());
            walk(sub, &format!("{name} "), out);
        }
    }
    let mut out = Vec::new();
    walk(root, "", &mut out);
    out
}

fn write_all(root: &clap::Command, dir: &Path) -> CmdResult {
    if !dir.is_dir() {
        return Err(Failure::bad_value(
            "--out-dir",
            &dir.display().to_string(),
            "an existing directory",
            &format!("create it first: mkdir -p {}", dir.display()),
        ));
    }
    let mut cmds = vec![root.clone()];
    for name in pages(root) {
        cmds.push(find(root, &name)?);
    }
    for cmd in cmds {
        let path = page(cmd).generate_to(dir).map_err(|e| {
            Failure::new(exit::FAILED, anyhow!("writing into {}: {e}", dir.display()))
        })?;
        outln!("{}", path.display());
    }
    Ok(0)
}
