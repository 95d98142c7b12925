//! `mtuperf export`: stored runs as CSV or JSON, one row per run, figures flattened.
use anyhow::{anyhow, Context};
use mtuperf_report::csv::{self as rcsv, RunIn};
use mtuperf_report::record::RunKind;
use mtuperf_store::Filter;

use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::history;
use crate::output::{self, Format, Output};
use crate::parse;

/// export's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Csv, Format::Json, Format::Openmetrics];
    const HELP: &'static str = "csv (the default): one row per run with its figures; json: the same rows in one document of schema mtuperf.export/1; openmetrics: the watch results as Prometheus metrics (node_exporter's textfile collector)";
    const HINT: &'static str = "a run as text: `mtuperf show ID`; as HTML: `mtuperf report ID`";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run ids (default: every run matching the filters).
    ids: Vec<i64>,
    /// Only runs of this kind (stream, rr, path, doctor).
    #[arg(long, value_parser = parse::parse_kind)]
    kind: Option<RunKind>,
    /// Only runs of this comparison group.
    #[arg(long, value_name = "ID")]
    group: Option<i64>,
    /// Same as --format csv (the default): comma-separated values with a header line.
    #[arg(long, conflicts_with_all = ["json", "format"], help_heading = crate::heading::OUTPUT)]
    csv: bool,
    #[command(flatten)]
    output: Output<Formats>,
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
pub fn run(g: &Global, a: Args) -> CmdResult {
    let format = a.output.pick();
    if format == Format::Openmetrics {
        return super::export_metrics::run(g, &a.ids);
    }
    if a.kind == Some(RunKind::Compare) {
        return Err(Failure::bad_value(
            "--kind",
            "compare",
            "stream, rr, path, doctor",
            "a comparison is a group of stream and rr runs: export them with --group ID \
             (the ids: `mtuperf history --kind compare`)",
        ));
    }
    let store = history::open_history(g)?;
    let filter = Filter {
        ids: a.ids.clone(),
        kind: a.kind,
        group_id: a.group,
        ..Filter::default()
    };
    let mut runs = store.list(&filter).context("reading the history")?;
    runs.sort_by_key(|r| r.id);
    if let Some(missing) = a.ids.iter().find(|id| !runs.iter().any(|r| r.id == **id)) {
        return Err(Failure::new(
            exit::USAGE,
            anyhow!(
                "no run with id {missing}{} in {}; see `mtuperf history`",
                a.kind.map_or_else(String::new, |k| format!(" of kind {k}")),
                store.path().display()
            ),
        ));
    }
    let rows: Vec<rcsv::Row> = runs
        .iter()
        .map(|r| {
            rcsv::row(&RunIn {
                id: r.id,
                kind: r.kind,
                target: &r.target,
                started_unix_ms: r.started_unix_ms,
                headline: &r.headline,
                headline_value: r.headline_value,
                interrupted: r.interrupted,
                group_id: r.group_id,
                label: r.label.as_deref(),
                document: &r.document,
            })
        })
        .collect();
    if format == Format::Json {
        crate::out::json(&rcsv::ExportDoc {
            schema: rcsv::EXPORT_SCHEMA,
            runs: rows,
        });
    } else {
        out!("{}", rcsv::csv(&rows));
    }
    Ok(0)
}
