//! The options several subcommands share (`--db`, `--no-store`, `--key-file`). A module
//! of its own so that the subcommands depend on it, not on the command line that lists
//! them.
//!
//! Each is listed once in `mtuperf --help`: given before the command, it reaches every
//! command (like `MTUPERF_DB` and `MTUPERF_KEY_FILE`), and the commands with no use for
//! it leave it alone, so one wrapper or alias serves them all. After the command, only
//! the commands that use it list it in their help and take it; the others refuse it,
//! saying why ([`resolve`]).
use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches};

use crate::exit::Failure;

/// The shared options as the command that runs sees them: an option it has no use for
/// is never set.
#[derive(Debug, Default, Clone)]
pub struct Global {
    pub db: Option<PathBuf>,
    pub no_store: bool,
    pub key_file: Option<PathBuf>,
}

/// One shared option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shared {
    /// `--db PATH`: the history database.
    Db,
    /// `--no-store`: do not store this run.
    NoStore,
    /// `--key-file FILE`: the agents' shared key.
    KeyFile,
}

use Shared::{Db, KeyFile, NoStore};

impl Shared {
    pub const ALL: [Shared; 3] = [Db, NoStore, KeyFile];

    /// The argument's id in the parsed matches.
    pub fn id(self) -> &'static str {
        match self {
            Db => "db",
            NoStore => "no_store",
            KeyFile => "key_file",
        }
    }

    /// The flag as typed.
    pub fn flag(self) -> &'static str {
        match self {
            Db => "--db",
            NoStore => "--no-store",
            KeyFile => "--key-file",
        }
    }

    fn env(self) -> Option<&'static str> {
        match self {
            Db => Some("MTUPERF_DB"),
            NoStore => None,
            KeyFile => Some("MTUPERF_KEY_FILE"),
        }
    }

    /// The heading it is listed under in a command's help.
    fn heading(self) -> &'static str {
        match self {
            Db | NoStore => crate::heading::HISTORY,
            KeyFile => crate::heading::AGENT,
        }
    }

    fn help(self) -> &'static str {
        match self {
            Db => "History database (default: $XDG_DATA_HOME/mtuperf/history.db)",
            NoStore => "Do not store this run in the history",
            KeyFile => {
                "Shared key the agents run with, proving this end holds it (from `mtuperf keygen`)"
            }
        }
    }

    /// What a command that has no use for it does not do.
    fn unused(self) -> &'static str {
        match self {
            Db => "it neither reads nor writes the history",
            NoStore => "it stores nothing in the history",
            KeyFile => "it contacts no agent",
        }
    }

    /// The commands that use it, by name (`lab`'s subcommands use none). Which of
    /// them: the history's writers (every measuring command, and `serve --watch`'s
    /// checks), its readers (`--db` only: `--no-store` means nothing there), and every
    /// command that talks to agents or is one (`demo` starts its own, keyless).
    pub fn used_by(self) -> &'static [&'static str] {
        const WRITERS: [&str; 8] = [
            "serve", "stream", "rr", "path", "doctor", "mesh", "compare", "demo",
        ];
        match self {
            Db => &[
                "serve", "stream", "rr", "path", "doctor", "mesh", "compare", "demo", "history",
                "show", "report", "export",
            ],
            NoStore => &WRITERS,
            KeyFile => &["serve", "stream", "rr", "path", "doctor", "mesh", "compare"],
        }
    }

    fn arg(self) -> Arg {
        let a = Arg::new(self.id())
            .long(&self.flag()[2..])
            .help(self.help());
        match self {
            NoStore => a.action(ArgAction::SetTrue),
            Db => a
                .value_name("PATH")
                .value_parser(clap::value_parser!(PathBuf)),
            KeyFile => a
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf)),
        }
    }
}

/// Adds the shared options to the command line: once, listed, on the top level (before
/// the command); listed, with their environment variable, on each command that uses
/// them; hidden on the others, so that [`resolve`] can refuse them by name.
pub fn add(root: clap::Command) -> clap::Command {
    let mut root = root.next_help_heading("Global options");
    for s in Shared::ALL {
        let env = s.env().map(|e| format!(" [env: {e}]")).unwrap_or_default();
        root = root.arg(s.arg().help(format!(
            "{}; used by {}{env}",
            s.help(),
            s.used_by().join(", ")
        )));
    }
    add_below(root, true)
}

fn add_below(cmd: clap::Command, top: bool) -> clap::Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    // mut_subcommand moves the subcommand to the end: every one is visited in order so
    // that the help keeps its order.
    names.iter().fold(cmd, |cmd, name| {
        cmd.mut_subcommand(name, |mut sub| {
            for s in Shared::ALL {
                let used = top && s.used_by().contains(&name.as_str());
                let mut a = s.arg();
                if used {
                    a = a.help_heading(s.heading());
                    if let Some(e) = s.env() {
                        a = a.env(e);
                    }
                } else {
                    a = a.hide(true);
                }
                sub = sub.arg(a);
            }
            add_below(sub, false)
        })
    })
}

/// The shared options the command that runs sees (a value after the command wins over
/// one before it, which wins over the environment), or a usage failure naming an
/// option given after a command that has no use for it.
pub fn resolve(m: &ArgMatches) -> Result<Global, Failure> {
    let mut path = Vec::new();
    let mut levels = vec![m];
    let mut at = m;
    while let Some((name, sub)) = at.subcommand() {
        path.push(name);
        levels.push(sub);
        at = sub;
    }
    let used = |s: Shared| path.len() == 1 && s.used_by().contains(&path[0]);
    for (depth, level) in levels.iter().enumerate().skip(1) {
        for s in Shared::ALL {
            if given(level, s) && !used(s) {
                return Err(refusal(s, &path[..depth]));
            }
        }
    }
    let leaf = levels[levels.len() - 1];
    let top = levels[0];
    let path_of = |s: Shared| -> Option<PathBuf> {
        if !used(s) {
            return None;
        }
        let pick = if given(leaf, s) || !given(top, s) {
            leaf
        } else {
            top
        };
        pick.try_get_one::<PathBuf>(s.id()).ok().flatten().cloned()
    };
    Ok(Global {
        db: path_of(Db),
        no_store: used(NoStore) && (given(leaf, NoStore) || given(top, NoStore)),
        key_file: path_of(KeyFile),
    })
}

fn given(m: &ArgMatches, s: Shared) -> bool {
    m.value_source(s.id()) == Some(ValueSource::CommandLine)
}

fn refusal(s: Shared, path: &[&str]) -> Failure {
    Failure::not_here(
        s.flag(),
        &format!("mtuperf {}", path.join(" ")),
        s.unused(),
        &format!(
            "the commands that take {}: {}",
            s.flag(),
            s.used_by().join(", ")
        ),
    )
}
