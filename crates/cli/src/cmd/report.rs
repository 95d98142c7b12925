//! `mtuperf report`: one self-contained HTML file (or Markdown) for a comparison, an rr
//! load sweep, a set of stored stream and rr runs, or one path run.
mod documents;
mod trend;

use std::path::PathBuf;

use anyhow::Context;

use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::history;
use crate::output::{self, Format, FormatOnly};

/// report's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Html, Format::Md];
    const HELP: &'static str =
        "html (the default): one self-contained file with inline SVG charts; md: Markdown";
    const HINT: &'static str =
        "the runs' data as JSON: `mtuperf export --format json` or `mtuperf show ID --json`";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stored runs to report on: stream, UDP stream and rr runs (grouped by their label,
    /// else one path per run; a step of an rr sweep brings its whole sweep), or one path
    /// or mesh run.
    #[arg(conflicts_with_all = ["last", "compare", "since"])]
    ids: Vec<i64>,
    /// The newest run that has a report (stream, udp, rr, path or mesh; its comparison
    /// or sweep when it belongs to one).
    #[arg(long, conflicts_with = "compare")]
    last: bool,
    /// A comparison group (printed by `mtuperf compare`), or an rr sweep's group.
    #[arg(long, value_name = "ID")]
    compare: Option<i64>,
    /// The watch history of this last stretch of time (1h to 3650d, e.g. 7d): MTU
    /// per peer and direction, and rr p50/p99, over time (HTML only).
    #[arg(long, value_name = "DURATION", conflicts_with_all = ["last", "compare"], value_parser = crate::args::watch::parse_long_duration)]
    since: Option<std::time::Duration>,
    /// Write here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    #[command(flatten)]
    format: FormatOnly<Formats>,
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    let format = a.format.pick("mtuperf report")?;
    let store = history::open_history(g)?;
    if let Some(since) = a.since {
        if format != Format::Html {
            return Err(Failure::conflict(
                "--format md",
                "--since",
                "the watch trend is drawn as charts, which only HTML has",
                "drop --format md (html is the default)",
            ));
        }
        let out = trend::html(&store, since)?;
        return write(&a, &out);
    }
    let last = if a.last && a.compare.is_none() {
        Some(newest(&store)?)
    } else {
        None
    };
    let ids: Vec<i64> = match (&last, a.compare) {
        (Some(r), _) => vec![r.id],
        (None, None) => a.ids.clone(),
        (None, Some(_)) => Vec::new(),
    };
    let md = format == Format::Md;
    if !ids.is_empty() {
        let path =
            documents::path_report(&store, &ids, md).map_err(|e| Failure::new(exit::USAGE, e))?;
        if let Some(out) = path {
            return write(&a, &out);
        }
    }
    let doc = if let Some(id) = a.compare {
        documents::group_doc(&store, id)
    } else if let Some(last) = &last {
        match last.group_id {
            Some(gid) => documents::group_doc(&store, gid),
            None => documents::adhoc_doc(&store, &[last.id]),
        }
    } else if a.ids.is_empty() {
        return Err(Failure::needs(
            "report",
            "the runs to report on",
            "give run ids, --last (the newest run), --compare ID (a comparison or rr sweep) or --since DURATION (the watch history)",
            "e.g. `mtuperf report --last -o report.html`; the ids: `mtuperf history`",
        ));
    } else {
        documents::adhoc_doc(&store, &a.ids)
    }
    .map_err(|e| Failure::new(exit::USAGE, e))?;
    let out = if md {
        mtuperf_report::compare::md::markdown(&doc)
    } else {
        mtuperf_report::compare::html::html(&doc)
    };
    write(&a, &out)
}

/// `--last`: the newest run that has a report; says on stderr which newer run it passed
/// over (a doctor run has none).
fn newest(store: &mtuperf_store::Store) -> Result<mtuperf_store::StoredRun, Failure> {
    let (run, skipped) =
        documents::newest_reportable(store).map_err(|e| Failure::new(exit::USAGE, e))?;
    if let Some(s) = skipped {
        errln!(
            "report --last: run {} ({}) has no report; reporting run {} ({}), the newest that has one",
            s.id, s.kind, run.id, run.kind
        );
    }
    Ok(run)
}

fn write(a: &Args, out: &str) -> CmdResult {
    match &a.output {
        Some(p) => {
            std::fs::write(p, out)
                .with_context(|| format!("writing {}", p.display()))
                .map_err(|e| Failure::new(exit::FAILED, e))?;
            errln!("wrote {}", p.display());
        }
        None => out!("{out}"),
    }
    Ok(0)
}
