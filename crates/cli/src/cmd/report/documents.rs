//! Documents for `report`: an rr load sweep's group, stream and rr runs picked by id,
//! a single path or mesh run, and the newest run that has a report (`--last`).
use anyhow::{anyhow, Context};
use mtuperf_report::compare::CompareDoc;
use mtuperf_report::record::RunKind;
use mtuperf_store::{Filter, Store, StoredRun};

/// The kinds of run `report` draws (doctor runs have no report).
const REPORTABLE: [RunKind; 5] = [
    RunKind::Stream,
    RunKind::Udp,
    RunKind::Rr,
    RunKind::Path,
    RunKind::Mesh,
];

/// `report --last`: the newest run of a kind that has a report, and the newest run of
/// all when that one has none (a doctor run), so the caller can say what it skipped.
/// An error names the kinds that can be reported when the history holds none.
pub fn newest_reportable(store: &Store) -> anyhow::Result<(StoredRun, Option<StoredRun>)> {
    let mut newest: Option<StoredRun> = None;
    for kind in REPORTABLE {
        let filter = Filter {
            kind: Some(kind),
            limit: Some(1),
            ..Filter::default()
        };
        for r in store.list(&filter).context("reading the history")? {
            if newest
                .as_ref()
                .is_none_or(|n| (r.started_unix_ms, r.id) > (n.started_unix_ms, n.id))
            {
                newest = Some(r);
            }
        }
    }
    let last = store.last().context("reading the history")?;
    let Some(run) = newest else {
        let held = last.map_or("the history is empty".to_string(), |l| {
            format!("the newest run is run {}, a {} run", l.id, l.kind)
        });
        return Err(anyhow!(
            "no run to report in {}: {held}; a report covers {}",
            store.path().display(),
            mtuperf_report::adhoc::REPORTABLE
        ));
    };
    let skipped = last.filter(|l| l.id != run.id);
    Ok((run, skipped))
}

use crate::cmd::compare::group::compare_doc;

/// A group's document: a comparison's, or an rr load sweep's (its steps' runs).
pub fn group_doc(store: &Store, id: i64) -> anyhow::Result<CompareDoc> {
    match store.group(id)? {
        Some(g) if g.kind == RunKind::Rr => {
            let ids: Vec<i64> = store.group_runs(id)?.iter().map(|r| r.id).collect();
            adhoc_doc(store, &ids)
        }
        _ => compare_doc(store, id),
    }
}

/// Stream and rr runs picked by id: one "path" per label (or per run without one).
pub fn adhoc_doc(store: &Store, ids: &[i64]) -> anyhow::Result<CompareDoc> {
    let mut runs = load_runs(store, ids)?;
    // A step of an rr load sweep brings its whole sweep (the group of one `rr --clients`).
    let groups: Vec<i64> = runs.iter().filter_map(|r| r.group_id).collect();
    for gid in groups {
        let sweep = store.group(gid)?.map(|g| g.kind);
        if sweep == Some(RunKind::Rr) {
            runs.extend(store.group_runs(gid)?);
        }
    }
    runs.sort_by_key(|r| r.id);
    runs.dedup_by_key(|r| r.id);
    let stored = runs
        .iter()
        .map(|r| {
            Ok(mtuperf_report::adhoc::StoredRun {
                id: r.id,
                kind: r.kind,
                label: r.label.as_deref(),
                target: &r.target,
                document: &r.document,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
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

/// The report of one path run (HTML, or Markdown when `md`), when `ids` names exactly
/// one run and it is a path run; `None` when none of them is a path run.
pub fn path_report(store: &Store, ids: &[i64], md: bool) -> anyhow::Result<Option<String>> {
    let runs = load_runs(store, ids)?;
    let mut kinds = Vec::with_capacity(runs.len());
    for r in &runs {
        kinds.push((r, r.kind));
    }
    let Some(&(r, kind)) = kinds
        .iter()
        .find(|(_, k)| matches!(k, RunKind::Path | RunKind::Mesh))
    else {
        return Ok(None);
    };
    if runs.len() > 1 {
        return Err(anyhow!(
            "run {} is a {} run: report on it alone (`mtuperf report {}`)",
            r.id,
            r.kind,
            r.id
        ));
    }
    if kind == RunKind::Mesh {
        return mesh_report(r, md).map(Some);
    }
    let mut doc =
        mtuperf_report::path::decode(&r.document).with_context(|| format!("run {}", r.id))?;
    doc.run_id = Some(r.id);
    Ok(Some(if md {
        format!(
            "## mtuperf path, run {}\n\n**{}**\n\n```\n{}```\n",
            r.id,
            doc.headline(),
            mtuperf_report::path::text(&doc)
        )
    } else {
        mtuperf_report::path::html::html(&doc)
    }))
}

/// The report of one mesh run: the HTML grid, or its text in Markdown.
fn mesh_report(r: &mtuperf_store::StoredRun, md: bool) -> anyhow::Result<String> {
    let mut doc: mtuperf_report::mesh::Document =
        serde_json::from_str(&r.document).with_context(|| format!("run {}", r.id))?;
    doc.run_id = Some(r.id);
    Ok(if md {
        format!(
            "## mtuperf mesh, run {}\n\n**{}**\n\n```\n{}```\n",
            r.id,
            doc.headline,
            mtuperf_report::mesh::text(&doc)
        )
    } else {
        mtuperf_report::mesh::html(&doc)
    })
}
