//! `mtuperf show ID`: print a stored run again, as text or its JSON document.
use anyhow::{anyhow, Context};
use mtuperf_report::record;
use mtuperf_store::StoredRun;

use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::history;
use crate::output::{self, Format, Output};

/// show's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str = "text (the default), or json: the run's stored document";
    const HINT: &'static str = "a run as HTML: `mtuperf report ID`; as CSV: `mtuperf export ID`";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run id (see `mtuperf history`).
    id: i64,
    #[command(flatten)]
    output: Output<Formats>,
}

/// Renders a stored run's document as text, by its kind's record.
pub fn render_text(run: &StoredRun) -> anyhow::Result<String> {
    let kind = run.kind;
    let rec = record::decode(kind, &run.document)
        .map_err(|e| anyhow!("run {} has an unreadable {kind} document: {e}", run.id))?;
    Ok(rec.text())
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    let format = a.output.pick();
    let store = history::open_history(g)?;
    let run = store
        .get(a.id)
        .context("reading the history")?
        .ok_or_else(|| {
            Failure::new(
                exit::USAGE,
                anyhow!("no run with id {} in {}", a.id, store.path().display()),
            )
        })?;
    if format == Format::Json {
        outln!("{}", run.document);
    } else {
        out!("{}", render_text(&run)?);
    }
    Ok(0)
}
