//! `mtuperf report`: one self-contained HTML file (or Markdown) for a comparison or a
//! set of stored stream runs.
use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::{anyhow, Context};
use mtuperf_engine::compare::{self, Cell, PathSpec, Plan, Repeat, Repetition, TestKind};
use mtuperf_report::compare::{self as rc, CompareDoc, Rep};
use mtuperf_report::stream::Document;
use mtuperf_store::{Filter, Store};

use crate::common;
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::output::{Format, Output};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Stored stream runs to report on (grouped by their label, else one path per run).
    #[arg(conflicts_with_all = ["last", "compare"])]
    ids: Vec<i64>,
    /// The newest run.
    #[arg(long, conflicts_with = "compare")]
    last: bool,
    /// A comparison group (printed by `mtuperf compare`).
    #[arg(long, value_name = "ID")]
    compare: Option<i64>,
    /// Write here instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// html (the default) or md.
    #[command(flatten)]
    format: Output,
}

/// A comparison's document: its stored summary, else rebuilt from its plan and runs.
pub fn compare_doc(store: &Store, id: i64) -> anyhow::Result<CompareDoc> {
    let (plan, reps, summary) = super::compare::load_group(store, id)?;
    // Rebuilt from the stored runs (so new figures and charts apply to old groups); the
    // checks and refusal come from the stored summary of a finished comparison.
    Ok(
        match summary.and_then(|s| serde_json::from_str::<CompareDoc>(&s).ok()) {
            Some(old) => rc::build(
                &plan,
                &old.checks,
                &reps,
                Some(id),
                old.refused,
                old.interrupted,
            ),
            None => rc::build(&plan, &[], &reps, Some(id), None, true),
        },
    )
}

/// Stream runs picked by id: one "path" per label (or per run without one).
fn adhoc_doc(store: &Store, ids: &[i64]) -> anyhow::Result<CompareDoc> {
    let runs = store.list(&Filter {
        ids: ids.to_vec(),
        ..Filter::default()
    })?;
    if let Some(missing) = ids.iter().find(|i| !runs.iter().any(|r| r.id == **i)) {
        return Err(anyhow!(
            "no run with id {missing} in {}",
            store.path().display()
        ));
    }
    let mut reps: Vec<Rep> = Vec::new();
    let mut paths: Vec<PathSpec> = Vec::new();
    let mut blocks = BTreeSet::new();
    let mut runs = runs;
    runs.sort_by_key(|r| r.id);
    for r in runs {
        if r.kind != "stream" {
            return Err(anyhow!(
                "run {} is a {} run; reports cover stream runs and comparisons",
                r.id,
                r.kind
            ));
        }
        let doc: Document =
            serde_json::from_str(&r.document).with_context(|| format!("run {}", r.id))?;
        let name = r.label.clone().unwrap_or_else(|| format!("run{}", r.id));
        if !paths.iter().any(|p| p.name == name) {
            paths.push(PathSpec {
                name: name.clone(),
                target: r.target.clone(),
                bind: None,
            });
        }
        for run in doc.runs {
            let block = run.result.request.block;
            blocks.insert(block);
            let round = reps
                .iter()
                .filter(|x| x.rep.path == name && x.rep.cell.block == block)
                .count() as u32;
            let cell = Cell {
                test: TestKind::Stream,
                block,
                clients: 1,
            };
            reps.push(Rep {
                run_id: Some(r.id),
                rep: Repetition {
                    path: name.clone(),
                    cell,
                    round,
                    stream: Some(run.result),
                    rr: None,
                },
            });
        }
    }
    let plan = Plan {
        version: compare::PLAN_VERSION,
        paths,
        tests: vec![TestKind::Stream],
        blocks: blocks.into_iter().collect(),
        clients: vec![1],
        time_ms: 0,
        repeat: Repeat::Fixed { n: 1 },
        force: false,
        sysctls: compare::local_sysctls(),
    };
    Ok(rc::build(&plan, &[], &reps, None, None, false))
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
pub fn run(g: &Global, a: Args) -> CmdResult {
    let format = a.format.pick(Format::Html, &[Format::Html, Format::Md])?;
    let Some(store) = common::open_store(g)? else {
        return Err(Failure::usage(
            "--no-store",
            "set",
            "report reads the history",
            "drop --no-store",
        ));
    };
    let doc = if let Some(id) = a.compare {
        compare_doc(&store, id)
    } else if a.last {
        let last = store
            .last()
            .context("reading the history")?
            .ok_or_else(|| Failure::new(exit::USAGE, anyhow!("the history is empty")))?;
        match last.group_id {
            Some(gid) => compare_doc(&store, gid),
            None => adhoc_doc(&store, &[last.id]),
        }
    } else if a.ids.is_empty() {
        return Err(Failure::usage(
            "RUN_IDS",
            "none",
            "run ids, --last or --compare ID",
            "see `mtuperf history`",
        ));
    } else {
        adhoc_doc(&store, &a.ids)
    }
    .map_err(|e| Failure::new(exit::USAGE, e))?;
    let out = if format == Format::Md {
        mtuperf_report::md::markdown(&doc)
    } else {
        mtuperf_report::html::html(&doc)
    };
    match &a.output {
        Some(p) => {
            std::fs::write(p, out)
                .with_context(|| format!("writing {}", p.display()))
                .map_err(|e| Failure::new(exit::FAILED, e))?;
            eprintln!("wrote {}", p.display());
        }
        None => out!("{out}"),
    }
    Ok(0)
}
