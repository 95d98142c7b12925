//! The output axis every printing subcommand shares: `--format FORMAT`, with `--json`
//! kept as the short way to say `--format json`. A command lists the formats it has;
//! asking for another is a usage error naming those it has.
//!
//! With JSON chosen, a failure is printed as a JSON document on stdout too
//! (`mtuperf.error/1`, see [`crate::exit::finish`]) unless the command printed its own
//! document before failing (a refused compare), so a program reading stdout always
//! gets a document.
use crate::exit::Failure;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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
    fn name(self) -> &'static str {
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

#[derive(Debug, Clone, Default, clap::Args)]
pub struct Output {
    /// Output format: text (the default) or json; compare also legacy; export csv (the
    /// default) or json; report html (the default) or md. Another is refused, naming
    /// those the command has.
    #[arg(long, value_enum, value_name = "FORMAT", hide_possible_values = true)]
    format: Option<Format>,
    /// Same as --format json: one JSON document with a versioned `schema` field.
    #[arg(long, conflicts_with = "format")]
    json: bool,
}

impl Output {
    /// The format asked for (`default` when none was), if the command has it.
    pub fn pick(&self, default: Format, has: &[Format]) -> Result<Format, Failure> {
        let f = if self.json {
            Format::Json
        } else {
            self.format.unwrap_or(default)
        };
        if f == Format::Json {
            crate::out::choose_json();
        }
        if has.contains(&f) {
            Ok(f)
        } else {
            let names: Vec<&str> = has.iter().map(|f| f.name()).collect();
            Err(Failure::usage(
                "--format",
                f.name(),
                &names.join(", "),
                "this command has no such output",
            ))
        }
    }
}
