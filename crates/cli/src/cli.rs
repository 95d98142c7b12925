//! The command line: global options and one subcommand enum. Each subcommand's flags
//! live in its own file under `cmd/`.
use clap::{CommandFactory, Parser, Subcommand};

use crate::cmd;
use crate::exit::CmdResult;
use crate::global::Global;

#[derive(Debug, Parser)]
#[command(
    name = "mtuperf",
    version = env!("MTUPERF_VERSION"),
    about = "Measure and verify cluster interconnects: path MTU in both directions, throughput, block latency under load",
    after_help = "Global options go before the command and reach every command that uses them, as MTUPERF_DB and MTUPERF_KEY_FILE do. Each command's help lists those it uses, which it also takes after its name; the others are refused there.",
    propagate_version = true
)]
pub struct Cli {
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

/// The command line: the subcommands' flags and the shared options (`--db`,
/// `--no-store`, `--key-file`, [`crate::global`]) where each applies.
pub fn command() -> clap::Command {
    crate::global::add(Cli::command())
}

/// Hands the parsed command line to its subcommand.
pub fn run(g: &Global, cli: Cli) -> CmdResult {
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

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;

    use super::*;
    use crate::global::{self, Shared};

    /// Every command's words: none (the top), `serve`, `lab`, `lab up` ... (`help` aside).
    fn paths() -> Vec<Vec<String>> {
        fn walk(cmd: &clap::Command, at: &[String], out: &mut Vec<Vec<String>>) {
            out.push(at.to_vec());
            for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
                let mut next = at.to_vec();
                next.push(sub.get_name().to_string());
                walk(sub, &next, out);
            }
        }
        let mut out = Vec::new();
        walk(&command(), &[], &mut out);
        out
    }

    fn find<'a>(root: &'a clap::Command, path: &[String]) -> &'a clap::Command {
        path.iter()
            .fold(root, |c, name| c.find_subcommand(name).unwrap())
    }

    /// The command's `--help` as the user reads it.
    fn help(path: &[String]) -> String {
        let mut argv = vec!["mtuperf".to_string()];
        argv.extend(path.iter().cloned());
        argv.push("--help".into());
        let e = command().try_get_matches_from(&argv).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DisplayHelp, "{argv:?}");
        e.render().to_string()
    }

    /// The flags a help lists: the lines that start an option ("  -v, --verbose",
    /// "      --block <BLOCK>"), not the flags its descriptions mention.
    fn listed(help: &str) -> Vec<String> {
        help.lines()
            .filter_map(|l| {
                let rest = l.strip_prefix("      --").or_else(|| {
                    l.strip_prefix("  -")
                        .and_then(|r| r.get(3..)?.strip_prefix("--"))
                })?;
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                Some(format!("--{name}"))
            })
            .collect()
    }

    /// A command line giving `flag` (with a value if it takes one) to the command at
    /// `path`, before or after its name, with its required positionals.
    fn argv(path: &[String], flag: &str, before: bool) -> Vec<String> {
        let root = command();
        let cmd = find(&root, path);
        let arg = cmd
            .get_arguments()
            .find(|a| a.get_long() == flag.strip_prefix("--"))
            .unwrap_or_else(|| panic!("{path:?} lists {flag} but has no such argument"));
        let mut given = vec![flag.to_string()];
        if arg.get_action().takes_values() {
            let v = arg.get_possible_values();
            given.push(
                v.first()
                    .map_or("1".to_string(), |p| p.get_name().to_string()),
            );
        }
        let mut out = vec!["mtuperf".to_string()];
        if before {
            out.extend(given);
            out.extend(path.iter().cloned());
        } else {
            out.extend(path.iter().cloned());
            out.extend(given);
        }
        // A command with subcommands is given its first, so that the line is whole.
        let mut cmd = cmd;
        while let Some(sub) = cmd.get_subcommands().find(|s| s.get_name() != "help") {
            out.push(sub.get_name().to_string());
            cmd = sub;
        }
        let positionals: Vec<String> = cmd
            .get_positionals()
            .filter(|p| p.is_required_set())
            .flat_map(|p| {
                let v = p
                    .get_possible_values()
                    .first()
                    .map_or("1".to_string(), |v| v.get_name().to_string());
                let n = p.get_num_args().map_or(1, |r| r.min_values().max(1));
                std::iter::repeat_n(v, n)
            })
            .collect();
        if !positionals.is_empty() {
            out.push("--".into());
            out.extend(positionals);
        }
        out
    }

    /// Parses `argv` as `main` does: clap, then the shared options' rules.
    fn parse(argv: &[String]) -> Result<(), String> {
        match command().try_get_matches_from(argv) {
            Ok(m) => global::resolve(&m)
                .map(|_| ())
                .map_err(|f| format!("{:#}", f.error)),
            // Recognised, but its sample value or its company was not what it wants.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::ValueValidation
                        | ErrorKind::InvalidValue
                        | ErrorKind::MissingRequiredArgument
                        | ErrorKind::ArgumentConflict
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(e.render().to_string()),
        }
    }

    #[test]
    fn every_flag_a_help_lists_is_accepted_by_its_command() {
        let mut checked = 0;
        for path in paths() {
            let help = help(&path);
            for flag in listed(&help) {
                if ["--help", "--version"].contains(&flag.as_str()) {
                    continue;
                }
                let argv = argv(&path, &flag, false);
                if let Err(e) = parse(&argv) {
                    panic!("{path:?} lists {flag}, but {argv:?} is refused: {e}");
                }
                checked += 1;
            }
        }
        // The walk reached the flags (stream and rr alone list over 50).
        assert!(checked > 200, "{checked}");
    }

    #[test]
    fn shared_options_are_listed_once_on_top_and_where_they_apply() {
        let top = listed(&help(&[]));
        for s in Shared::ALL {
            assert_eq!(
                top.iter().filter(|f| *f == s.flag()).count(),
                1,
                "{}",
                s.flag()
            );
        }
        for path in paths().into_iter().filter(|p| !p.is_empty()) {
            let flags = listed(&help(&path));
            for s in Shared::ALL {
                let applies = path.len() == 1 && s.used_by().contains(&path[0].as_str());
                assert_eq!(
                    flags.iter().any(|f| f == s.flag()),
                    applies,
                    "{path:?} and {}",
                    s.flag()
                );
                // Before the command: taken by every command (a wrapper's --db).
                let before = argv(&path, s.flag(), true);
                assert_eq!(parse(&before), Ok(()), "{before:?}");
                // After a command with no use for it: refused, saying so.
                if !applies {
                    let after = argv(&path, s.flag(), false);
                    let err = parse(&after).unwrap_err();
                    assert!(
                        err.contains(&format!(
                            "{} does not apply to `mtuperf {}`",
                            s.flag(),
                            path.join(" ")
                        )),
                        "{after:?}: {err}"
                    );
                }
            }
        }
        // The names used_by lists are commands.
        let root = command();
        for s in Shared::ALL {
            for name in s.used_by() {
                assert!(root.find_subcommand(name).is_some(), "{name}");
            }
        }
    }

    #[test]
    fn a_shared_option_after_the_command_wins_and_none_reaches_a_command_without_use() {
        let parse = |args: &[&str]| {
            let m = command().try_get_matches_from(args).unwrap();
            global::resolve(&m).unwrap()
        };
        let g = parse(&["mtuperf", "--db", "/a", "stream", "h", "--db", "/b"]);
        assert_eq!(g.db.as_deref(), Some(std::path::Path::new("/b")));
        let g = parse(&["mtuperf", "--db", "/a", "--no-store", "stream", "h"]);
        assert_eq!(g.db.as_deref(), Some(std::path::Path::new("/a")));
        assert!(g.no_store);
        // demo starts keyless agents: a global --key-file must not reach its client.
        let g = parse(&["mtuperf", "--key-file", "/k", "--no-store", "demo"]);
        assert!(g.key_file.is_none() && g.no_store);
        let g = parse(&["mtuperf", "--no-store", "--db", "/a", "report", "--last"]);
        assert!(!g.no_store && g.db.is_some());
    }

    /// A help's flags by the heading they sit under ("Options" for the ungrouped).
    fn sections(help: &str) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for block in help.split("\n\n") {
            for line in block.lines() {
                if let Some(h) = line.strip_suffix(':').filter(|h| !h.starts_with(' ')) {
                    out.push((h.to_string(), Vec::new()));
                } else if let (Some(last), [flag]) = (out.last_mut(), &listed(line)[..]) {
                    last.1.push(flag.clone());
                }
            }
        }
        out
    }

    /// The flags a command's help lists under each heading.
    type Grouped = &'static [(&'static str, &'static [&'static str])];

    #[test]
    fn flags_sit_under_headings() {
        let want: [(&str, Grouped); 2] = [
            (
                "stream",
                &[
                    (
                        "What to send",
                        &[
                            "--block",
                            "--time",
                            "--bytes",
                            "--file",
                            "--reverse",
                            "--bidir",
                            "--zerocopy",
                            "--repeat",
                        ],
                    ),
                    (
                        "Load",
                        &[
                            "--streams",
                            "--window",
                            "--mss",
                            "--rx-coalesce",
                            "--rx-poll",
                        ],
                    ),
                    ("Output", &["--interval", "--omit", "--format", "--json"]),
                    (
                        "UDP stream (--udp)",
                        &["--udp", "--rate", "--max-loss", "--udp-io"],
                    ),
                    ("Placement", &["--bind", "--cpu", "--agent-cpu"]),
                    ("History", &["--label", "--db", "--no-store"]),
                    (
                        "Agents over SSH",
                        &[
                            "--ssh",
                            "--ssh-command",
                            "--ssh-copy",
                            "--ssh-timeout",
                            "--ssh-lifetime",
                        ],
                    ),
                    ("Agent", &["--key-file"]),
                ],
            ),
            (
                "rr",
                &[
                    (
                        "What to send",
                        &[
                            "--proto",
                            "--block",
                            "--request",
                            "--time",
                            "--verify",
                            "--bidir",
                        ],
                    ),
                    (
                        "Load",
                        &[
                            "--clients",
                            "--rate",
                            "--workers",
                            "--threads",
                            "--timeout",
                            "--from",
                        ],
                    ),
                    ("Output", &["--interval", "--format", "--json"]),
                    ("Placement", &["--bind", "--cpu", "--agent-cpu"]),
                    ("History", &["--label", "--db", "--no-store"]),
                    (
                        "Agents over SSH",
                        &[
                            "--ssh",
                            "--ssh-command",
                            "--ssh-copy",
                            "--ssh-timeout",
                            "--ssh-lifetime",
                        ],
                    ),
                    ("Agent", &["--key-file"]),
                ],
            ),
        ];
        for (cmd, headings) in want {
            let got = sections(&help(&[cmd.to_string()]));
            for (heading, flags) in headings {
                let (_, under) = got
                    .iter()
                    .find(|(h, _)| h == heading)
                    .unwrap_or_else(|| panic!("{cmd}: no heading {heading}: {got:?}"));
                assert_eq!(under, flags, "{cmd}: {heading}");
            }
        }
        // Every command with many flags groups them: few are left ungrouped.
        for path in paths() {
            let got = sections(&help(&path));
            let all: usize = got.iter().map(|(_, f)| f.len()).sum();
            let (_, loose) = got.iter().find(|(h, _)| h == "Options").unwrap();
            if all > 12 {
                assert!(loose.len() <= 5, "{path:?}: {loose:?}");
            }
        }
    }

    #[test]
    fn format_help_and_values_are_each_commands_own() {
        for (path, has, not) in [
            (&["stream"][..], "json", "csv"),
            (&["export"][..], "openmetrics", "html"),
            (&["report"][..], "md", "json"),
            (&["compare"][..], "legacy", "md"),
        ] {
            let path: Vec<String> = path.iter().map(ToString::to_string).collect();
            let help = help(&path);
            let line = help
                .split("--format <FORMAT>")
                .nth(1)
                .unwrap()
                .split("\n\n")
                .next()
                .unwrap();
            assert!(line.contains(has), "{path:?}: {line}");
            assert!(!line.contains(not), "{path:?}: {line}");
            let mut ok = vec!["mtuperf".to_string()];
            ok.extend(path.iter().cloned());
            let bad = [&ok[..], &["--format".into(), not.into()]].concat();
            let e = command().try_get_matches_from(&bad).unwrap_err();
            let msg = e.render().to_string();
            assert!(msg.contains(&format!("'{not}'")), "{msg}");
            let allowed = msg
                .split("allowed ")
                .nth(1)
                .unwrap()
                .split(';')
                .next()
                .unwrap();
            assert!(
                allowed.contains(has) && !allowed.contains(not),
                "{path:?}: {msg}"
            );
        }
        // report lists no --json.
        assert!(!listed(&help(&["report".into()])).contains(&"--json".to_string()));
    }
}
