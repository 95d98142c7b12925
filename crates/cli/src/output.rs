//! The output axis of the printing subcommands: `--format FORMAT`, with `--json` kept as
//! the short way to say `--format json`. Each command names the formats it has
//! ([`Formats`]: its own `--format` help, the values its completion offers, and the
//! refusal of any other, naming those it has and a hint), so `--format` means the same
//! thing everywhere without one command listing another's formats.
//!
//! With JSON chosen, a failure is printed as a JSON document on stdout too
//! (`mtuperf.error/1`, see [`crate::exit::finish`]) unless the command printed its own
//! document before failing (a refused compare), so a program reading stdout always
//! gets a document.
use std::marker::PhantomData;

use clap::builder::{PossibleValue, TypedValueParser};

use crate::exit::Failure;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text for people.
    Text,
    /// The command's versioned JSON document.
    Json,
    /// Comma-separated values with a header line.
    Csv,
    /// Markdown.
    Md,
    /// One self-contained HTML file.
    Html,
    /// compare: perl-sockets' packet-averages.pl labels ("key/avg: Bytes Received ...").
    Legacy,
    /// export: the watch results as Prometheus metrics (node_exporter's textfile collector).
    Openmetrics,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Md => "md",
            Format::Html => "html",
            Format::Legacy => "legacy",
            Format::Openmetrics => "openmetrics",
        }
    }
}

/// The formats one command has (a zero-sized type per command, next to its `Args`).
pub trait Formats: std::fmt::Debug + Clone + Send + Sync + 'static {
    /// The formats, the default first.
    const HAS: &'static [Format];
    /// `--format`'s help: each format and what it prints.
    const HELP: &'static str;
    /// What to say when another format is asked for: where that output is found.
    const HINT: &'static str;
}

/// Checks a `--format` value against the command's formats; offers only those to
/// completion.
#[derive(Debug, Clone)]
pub struct FormatParser<F>(PhantomData<F>);

impl<F> Default for FormatParser<F> {
    fn default() -> Self {
        FormatParser(PhantomData)
    }
}

/// "text, json, legacy".
fn listed(has: &[Format]) -> String {
    let names: Vec<&str> = has.iter().map(|f| f.name()).collect();
    names.join(", ")
}

/// A format by name, if the command has it; the message names those it has.
pub fn parse<F: Formats>(s: &str) -> Result<Format, String> {
    F::HAS
        .iter()
        .copied()
        .find(|f| f.name() == s)
        .ok_or_else(|| format!("allowed {}; {}", listed(F::HAS), F::HINT))
}

impl<F: Formats> TypedValueParser for FormatParser<F> {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        // A plain function parser renders clap's "invalid value 'x' for '--format
        // <FORMAT>': " before the message.
        (|s: &str| parse::<F>(s)).parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            F::HAS.iter().map(|f| PossibleValue::new(f.name())),
        ))
    }
}

/// `--format` and `--json`, for a command that prints a JSON document.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = crate::heading::OUTPUT)]
pub struct Output<F: Formats> {
    #[arg(long, value_name = "FORMAT", help = F::HELP, hide_possible_values = true,
          value_parser = FormatParser::<F>::default())]
    format: Option<Format>,
    /// Same as --format json: one JSON document with a versioned `schema` field.
    #[arg(long, conflicts_with = "format")]
    json: bool,
    #[arg(skip)]
    formats: PhantomData<F>,
}

impl<F: Formats> Output<F> {
    /// The format asked for, else the command's default.
    pub fn pick(&self) -> Format {
        let f = if self.json {
            Format::Json
        } else {
            self.format.unwrap_or(F::HAS[0])
        };
        if f == Format::Json {
            crate::out::choose_json();
        }
        f
    }
}

/// `--format` alone, for a command with no JSON document (`report`): `--json` is not
/// listed, and refused saying where the data is found as JSON.
#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = crate::heading::OUTPUT)]
pub struct FormatOnly<F: Formats> {
    #[arg(long, value_name = "FORMAT", help = F::HELP, hide_possible_values = true,
          value_parser = FormatParser::<F>::default())]
    format: Option<Format>,
    #[arg(long, hide = true, conflicts_with = "format")]
    json: bool,
    #[arg(skip)]
    formats: PhantomData<F>,
}

impl<F: Formats> FormatOnly<F> {
    /// The format asked for, else the command's default; `command` names the command
    /// when `--json` is refused.
    pub fn pick(&self, command: &str) -> Result<Format, Failure> {
        if self.json {
            let has: Vec<&str> = F::HAS.iter().map(|f| f.name()).collect();
            return Err(Failure::not_here(
                "--json",
                command,
                &format!("it writes {}, no JSON document", has.join(" or ")),
                F::HINT,
            ));
        }
        Ok(self.format.unwrap_or(F::HAS[0]))
    }
}

/// Whether the parsed command line asks for JSON: `--json`, or `--format json`, on the
/// command that runs (`lab status --json` included).
pub fn json_asked(m: &clap::ArgMatches) -> bool {
    let mut leaf = m;
    while let Some((_, sub)) = leaf.subcommand() {
        leaf = sub;
    }
    leaf.try_get_one::<bool>("json").ok().flatten() == Some(&true)
        || leaf.try_get_one::<Format>("format").ok().flatten() == Some(&Format::Json)
}

/// Whether a command line clap refused asks for JSON: `--json`, `--format json` or
/// `--format=json` anywhere before a `--` (after it, the words are another program's:
/// `lab exec HOST -- CMD`).
pub fn json_in_argv(argv: &[std::ffi::OsString]) -> bool {
    let words: Vec<&str> = argv
        .iter()
        .skip(1)
        .map(|a| a.to_str().unwrap_or(""))
        .take_while(|a| *a != "--")
        .collect();
    words.iter().enumerate().any(|(i, w)| {
        *w == "--json"
            || *w == "--format=json"
            || (*w == "--format" && words.get(i + 1) == Some(&"json"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone)]
    struct Three;
    impl Formats for Three {
        const HAS: &'static [Format] = &[Format::Csv, Format::Json, Format::Openmetrics];
        const HELP: &'static str = "";
        const HINT: &'static str = "export writes rows";
    }

    #[test]
    fn a_format_is_checked_against_the_commands_own() {
        assert_eq!(parse::<Three>("json"), Ok(Format::Json));
        assert_eq!(
            parse::<Three>("html").unwrap_err(),
            "allowed csv, json, openmetrics; export writes rows"
        );
    }

    #[test]
    fn json_is_seen_in_a_refused_command_line_before_any_double_dash() {
        let argv = |s: &str| -> Vec<std::ffi::OsString> {
            s.split(' ').map(std::ffi::OsString::from).collect()
        };
        for yes in [
            "mtuperf stream h --block 0 --json",
            "mtuperf rr h --format json --bogus",
            "mtuperf show --format=json x",
        ] {
            assert!(json_in_argv(&argv(yes)), "{yes}");
        }
        for no in [
            "mtuperf stream h --block 0",
            "mtuperf rr h --format text",
            "mtuperf lab exec --nme x client -- mtuperf rr h --json",
        ] {
            assert!(!json_in_argv(&argv(no)), "{no}");
        }
    }
}
