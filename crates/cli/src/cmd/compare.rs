//! `mtuperf compare`: the same tests over several paths, interleaved and repeated, each
//! repetition stored as it finishes; summary with 95% intervals and a plain verdict.
pub mod group;
mod run;

use anyhow::anyhow;
use mtuperf_report::compare as rc;

use crate::args::compare::PlanArgs;
use crate::connect;
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::history;
use crate::interrupt;
use crate::output::{self, Format, Output};

/// compare's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json, Format::Legacy];
    const HELP: &'static str = "text (the default), json (one document of schema mtuperf.compare/3) or legacy (perl-sockets' packet-averages.pl labels)";
    const HINT: &'static str = "the comparison as HTML or Markdown: `mtuperf report --compare ID`";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    plan: PlanArgs,
    #[command(flatten)]
    output: Output<Formats>,
    /// Continue an interrupted comparison (its group id, see `mtuperf history --kind stream`).
    #[arg(long, value_name = "ID", conflicts_with = "paths", help_heading = crate::heading::REPEAT)]
    resume: Option<i64>,
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
pub fn run(g: &Global, a: Args) -> CmdResult {
    let format = a.output.pick();
    let json = format == Format::Json;
    let store = history::open_store(g)?;
    let (plan, prior, group) = if let Some(id) = a.resume {
        let s = store.as_ref().ok_or_else(|| {
            Failure::conflict(
                "--no-store",
                "--resume",
                "resuming reads the comparison's runs from the history and stores the new ones there",
                "drop --no-store",
            )
        })?;
        let (plan, reps, _) = group::load_group(s, id).map_err(|e| Failure::new(exit::USAGE, e))?;
        (plan, reps, Some(id))
    } else {
        let plan = a.plan.plan()?;
        let group = group::start_group(store.as_ref(), &plan)?;
        (plan, Vec::new(), group)
    };
    let opts = connect::connect_options(g, None)?;
    let stop = interrupt::flag();
    let (doc, out) = run::execute(store.as_ref(), &plan, group, prior, &opts, &stop, json)?;
    if json {
        crate::out::json(&doc);
    } else if format == Format::Legacy && out.refused.is_none() {
        out!("{}", rc::legacy(&doc));
    } else {
        out!("{}", rc::text(&doc));
    }
    if let Some(r) = out.refused {
        return Err(Failure::new(
            exit::CHECK_FAILED,
            anyhow!("compare refused: {r}; --force compares anyway"),
        ));
    }
    let why = out.interrupted.then(|| {
        mtuperf_report::interrupt::words(&out.interrupted_by)
            .unwrap_or_else(|| "a repetition ended early".into())
    });
    Ok(interrupt::measured_exit(&stop, why.as_deref(), 0))
}
