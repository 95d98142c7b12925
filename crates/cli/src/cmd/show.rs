//! `mtuperf show ID`: print a stored run again, as text or its JSON document.
use anyhow::{anyhow, Context};
use mtuperf_store::StoredRun;

use crate::common;
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Run id (see `mtuperf history`).
    id: i64,
    /// Print the stored JSON document.
    #[arg(long)]
    json: bool,
}

/// Renders a stored run's document as text, by kind.
pub fn render_text(run: &StoredRun) -> anyhow::Result<String> {
    let bad = |e: serde_json::Error| {
        anyhow!(
            "run {} has an unreadable {} document: {e}",
            run.id,
            run.kind
        )
    };
    Ok(match run.kind.as_str() {
        "path" => mtuperf_report::path::text(&serde_json::from_str(&run.document).map_err(bad)?),
        "compare" => {
            mtuperf_report::compare::text(&serde_json::from_str(&run.document).map_err(bad)?)
        }
        "rr" => mtuperf_report::rr::text(&serde_json::from_str(&run.document).map_err(bad)?),
        "stream" => {
            let doc: mtuperf_report::stream::Document =
                serde_json::from_str(&run.document).map_err(bad)?;
            mtuperf_report::stream::text(&doc)
        }
        "doctor" => {
            let doc: mtuperf_report::doctor::Document =
                serde_json::from_str(&run.document).map_err(bad)?;
            mtuperf_report::doctor::text(&doc)
        }
        other => format!("run {} of kind {other}:\n{}\n", run.id, run.document),
    })
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    let Some(store) = common::open_store(g)? else {
        return Err(Failure::usage(
            "--no-store",
            "set",
            "show reads the history",
            "drop --no-store",
        ));
    };
    let run = store
        .get(a.id)
        .context("reading the history")?
        .ok_or_else(|| {
            Failure::new(
                exit::USAGE,
                anyhow!("no run with id {} in {}", a.id, store.path().display()),
            )
        })?;
    if a.json {
        outln!("{}", run.document);
    } else {
        out!("{}", render_text(&run)?);
    }
    Ok(0)
}
