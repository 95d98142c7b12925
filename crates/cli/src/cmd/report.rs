//! `mtuperf report`: one self-contained HTML file (or Markdown) for a comparison or a
//! set of stored stream runs.
use std::path::PathBuf;

use anyhow::{anyhow, Context};
use mtuperf_report::compare::{self as rc, CompareDoc};
use mtuperf_store::{Filter, Store};

use crate::cli::Global;
use crate::common;
use crate::exit::{self, CmdResult, Failure};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Html,
    Md,
}

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
    #[arg(long, value_enum, default_value = "html")]
    format: Format,
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

/// A group's document: a comparison's, or an rr load sweep's (its steps' runs).
fn group_doc(store: &Store, id: i64) -> anyhow::Result<CompareDoc> {
    match store.group(id)? {
        Some(g) if g.kind == "rr" => {
            let ids: Vec<i64> = store.group_runs(id)?.iter().map(|r| r.id).collect();
            adhoc_doc(store, &ids)
        }
        _ => compare_doc(store, id),
    }
}

/// Stream and rr runs picked by id: one "path" per label (or per run without one).
fn adhoc_doc(store: &Store, ids: &[i64]) -> anyhow::Result<CompareDoc> {
    let mut runs = load_runs(store, ids)?;
    // A step of an rr load sweep brings its whole sweep (the group of one `rr --clients`).
    let groups: Vec<i64> = runs.iter().filter_map(|r| r.group_id).collect();
    for gid in groups {
        if store.group(gid)?.is_some_and(|g| g.kind == "rr") {
            runs.extend(store.group_runs(gid)?);
        }
    }
    runs.sort_by_key(|r| r.id);
    runs.dedup_by_key(|r| r.id);
    let stored: Vec<mtuperf_report::adhoc::StoredRun> = runs
        .iter()
        .map(|r| mtuperf_report::adhoc::StoredRun {
            id: r.id,
            kind: &r.kind,
            label: r.label.as_deref(),
            target: &r.target,
            document: &r.document,
        })
        .collect();
    mtuperf_report::adhoc::doc(&stored).map_err(|e| anyhow!(e))
}

fn load_runs(store: &Store, ids: &[i64]) -> anyhow::Result<Vec<mtuperf_store::StoredRun>> {
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
    Ok(runs)
}

/// The report of one path run, when `ids` names exactly one and it is a path run.
fn path_report(store: &Store, ids: &[i64], format: Format) -> anyhow::Result<Option<String>> {
    let runs = load_runs(store, ids)?;
    let Some(r) = runs.iter().find(|r| r.kind == "path") else {
        return Ok(None);
    };
    if runs.len() > 1 {
        return Err(anyhow!(
            "run {} is a path run: report on it alone (`mtuperf report {}`)",
            r.id,
            r.id
        ));
    }
    let mut doc: mtuperf_report::path::Document =
        serde_json::from_str(&r.document).with_context(|| format!("run {}", r.id))?;
    doc.run_id = Some(r.id);
    Ok(Some(match format {
        Format::Html => mtuperf_report::html::path::html(&doc),
        Format::Md => format!(
            "## mtuperf path, run {}\n\n**{}**\n\n```\n{}```\n",
            r.id,
            doc.verdict,
            mtuperf_report::path::text(&doc)
        ),
    }))
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
pub fn run(g: &Global, a: Args) -> CmdResult {
    let Some(store) = common::open_store(g)? else {
        return Err(Failure::usage(
            "--no-store",
            "set",
            "report reads the history",
            "drop --no-store",
        ));
    };
    let ids: Vec<i64> = match (a.last, a.compare) {
        (true, None) => store
            .last()
            .ok()
            .flatten()
            .map(|r| vec![r.id])
            .unwrap_or_default(),
        (false, None) => a.ids.clone(),
        _ => Vec::new(),
    };
    let path = if ids.is_empty() {
        None
    } else {
        path_report(&store, &ids, a.format).map_err(|e| Failure::new(exit::USAGE, e))?
    };
    let doc = if path.is_some() {
        Ok(None)
    } else if let Some(id) = a.compare {
        group_doc(&store, id).map(Some)
    } else if a.last {
        let last = store
            .last()
            .context("reading the history")?
            .ok_or_else(|| Failure::new(exit::USAGE, anyhow!("the history is empty")))?;
        match last.group_id {
            Some(gid) => group_doc(&store, gid),
            None => adhoc_doc(&store, &[last.id]),
        }
        .map(Some)
    } else if a.ids.is_empty() {
        return Err(Failure::usage(
            "RUN_IDS",
            "none",
            "run ids, --last or --compare ID",
            "see `mtuperf history`",
        ));
    } else {
        adhoc_doc(&store, &a.ids).map(Some)
    }
    .map_err(|e| Failure::new(exit::USAGE, e))?;
    let out = match (path, doc, a.format) {
        (Some(p), _, _) => p,
        (None, None, _) => String::new(),
        (None, Some(doc), Format::Html) => mtuperf_report::html::html(&doc),
        (None, Some(doc), Format::Md) => mtuperf_report::md::markdown(&doc),
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
