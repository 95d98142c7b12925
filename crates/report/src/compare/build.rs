//! Building the compare document from the plan, the checks and the repetitions.

use std::collections::BTreeMap;

use mtuperf_engine::compare::{Cell, PathCheck, Plan, Repetition, Verdict};
use mtuperf_engine::stream::StreamResult;
use mtuperf_proto::host::IfaceInfo;

use crate::figure::{figure, Figure as Fig};

use super::{
    verdict_line, CellSummary, CompareDoc, Diff, EndEnv, Environment, Figure, LatencyCdf, RepRow,
    SCHEMA,
};

/// A repetition and the history id it was stored under.
#[derive(Debug, Clone)]
pub struct Rep {
    pub run_id: Option<i64>,
    pub rep: Repetition,
}

fn value_of(figs: &[Fig], name: &str) -> Option<f64> {
    figure(figs, name).map(|f| f.value)
}

fn row(r: &Rep) -> RepRow {
    let mut row = RepRow {
        run_id: r.run_id,
        path: r.rep.path.clone(),
        test: r.rep.cell.test,
        block: r.rep.cell.block,
        clients: r.rep.cell.clients,
        round: r.rep.round,
        started: String::new(),
        interrupted: r.rep.interrupted(),
        goodput_bps: None,
        cpu_us_per_mib: None,
        frames_per_block: None,
        perl: None,
        p50_ns: None,
        p99_ns: None,
        blocks_per_s: None,
        cpu_us_per_block: None,
        limited_by: None,
        limit_shares: None,
        placement: None,
        loss_pct: None,
        fragments_per_datagram: None,
    };
    // The numbers come from each repetition's record figures, the same ones `export`
    // and the metrics read; only perl-sockets' labelled figures and the limit verdict
    // (words for the legacy format and the verdict note) come from the run's metrics.
    if let Some(u) = &r.rep.udp {
        let run = crate::stream::udp::RunDoc::new(u.clone());
        row.started = crate::timestamp(u.started_unix_ms);
        row.placement.clone_from(&run.placement);
        row.goodput_bps = Some(run.metrics.goodput_bps);
        row.loss_pct = Some(run.loss_pct());
        if let Some(d) = run.metrics.directions.first() {
            let recv = run.metrics.ends.iter().find(|e| e.end == d.receiver);
            row.cpu_us_per_mib = recv.and_then(|e| e.service_demand_us_per_mib);
            row.frames_per_block = d.rx_frames_per_datagram;
            row.fragments_per_datagram = d.fragments_per_datagram;
        }
    }
    if let Some(rr) = &r.rep.rr {
        let step = crate::rr::StepDoc::new(rr.clone());
        let f = crate::rr::figures(&step);
        row.started = step.started;
        row.p50_ns = value_of(&f, "p50");
        row.p99_ns = value_of(&f, "p99");
        row.blocks_per_s = value_of(&f, "blocks_per_s");
        row.cpu_us_per_block = value_of(&f, "client_cpu_per_block");
        row.frames_per_block = value_of(&f, "client_frames_per_block");
        row.placement = crate::placement::summarize(
            rr.client.placement.as_ref(),
            rr.agent.placement.as_ref(),
            &rr.client_host,
            &rr.agent_host,
        );
    }
    if let Some(s) = &r.rep.stream {
        let run = crate::stream::RunDoc::new(s.clone());
        let f = crate::stream::figures(&run);
        row.placement.clone_from(&run.placement);
        row.started = run.started;
        row.goodput_bps = value_of(&f, "goodput");
        row.cpu_us_per_mib = value_of(&f, "receiver_cpu");
        row.frames_per_block = value_of(&f, "frames_per_block");
        if let Some(d) = run.metrics.directions.first() {
            row.perl = Some(d.perl.clone());
            row.limited_by = d.limit.as_ref().map(|v| v.cause);
            row.limit_shares = d.limit.as_ref().map(|v| v.shares.clone());
        }
    }
    row
}

fn offloads(i: &IfaceInfo) -> String {
    let o = i.offloads;
    let f = |n: &str, v: Option<bool>| v.map(|b| format!("{n} {}", if b { "on" } else { "off" }));
    [
        f("tso", o.tso),
        f("gso", o.gso),
        f("gro", o.gro),
        f("lro", o.lro),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ")
}

/// One end's environment row.
fn end_env(
    path: &str,
    end: &str,
    h: &mtuperf_proto::host::HostIdentity,
    i: Option<&IfaceInfo>,
) -> EndEnv {
    EndEnv {
        path: path.to_string(),
        end: end.to_string(),
        hostname: h.hostname.clone(),
        kernel: h.kernel.clone(),
        iface: i.map(|i| i.name.clone()),
        mtu: i.map(|i| i.mtu),
        offloads: i.map(offloads).unwrap_or_default(),
    }
}

fn ends(path: &str, s: &StreamResult) -> [EndEnv; 2] {
    [
        end_env(path, "client", &s.client_host, s.client.iface.as_ref()),
        end_env(path, "agent", &s.agent_host, s.agent.iface.as_ref()),
    ]
}

fn rr_ends(path: &str, r: &mtuperf_engine::rr::RrResult) -> [EndEnv; 2] {
    [
        end_env(path, "client", &r.client_host, r.client.iface.as_ref()),
        end_env(path, "agent", &r.agent_host, r.agent.iface.as_ref()),
    ]
}

fn values(rows: &[RepRow], path: &str, cell: Cell, f: Figure) -> Vec<f64> {
    rows.iter()
        .filter(|r| {
            !r.interrupted
                && r.path == path
                && r.test == cell.test
                && r.block == cell.block
                && r.clients == cell.clients
        })
        .filter_map(|r| f.of(r))
        .collect()
}

/// Merges the rr latency histograms of each path and cell into one CDF.
fn latency_cdfs(plan: &Plan, reps: &[Rep]) -> Vec<LatencyCdf> {
    let mut out = Vec::new();
    for cell in plan.cells() {
        for p in &plan.paths {
            let mut merged: BTreeMap<u64, u64> = BTreeMap::new();
            for r in reps
                .iter()
                .filter(|r| r.rep.path == p.name && r.rep.cell == cell && !r.rep.interrupted())
            {
                for [v, n] in r
                    .rep
                    .rr
                    .iter()
                    .flat_map(|x| x.client.latency.buckets.iter())
                {
                    *merged.entry(*v).or_default() += n;
                }
            }
            let total: u64 = merged.values().sum();
            if total == 0 {
                continue;
            }
            let mut points = Vec::new();
            let (mut seen, mut next) = (0u64, 0.0_f64);
            let last = merged.len().saturating_sub(1);
            for (i, (v, n)) in merged.iter().enumerate() {
                seen += n;
                let frac = seen as f64 / total as f64;
                if frac >= next || i == last {
                    points.push([*v as f64 / 1e3, frac]);
                    // Every 0.5% of the blocks, denser in the tail (a tenth of what is
                    // left) so that the percentile spectrum reaches p99.99.
                    next = frac + (0.005_f64).min((1.0 - frac) * 0.1);
                }
            }
            out.push(LatencyCdf {
                path: p.name.clone(),
                block: cell.block,
                clients: cell.clients,
                blocks: total,
                points,
            });
        }
    }
    out
}

/// "; limited by: jumbo network (3 of 3 runs), std CPU (3 of 3 runs)" from the stream
/// repetitions' verdicts (the most frequent cause per path); empty without any.
fn limits_note(rows: &[RepRow], paths: &[&str]) -> String {
    let mut parts = Vec::new();
    for p in paths {
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut n = 0;
        for r in rows.iter().filter(|r| r.path == *p && !r.interrupted) {
            if let Some(c) = r.limited_by {
                *counts.entry(crate::stream::cause_label(c)).or_default() += 1;
                n += 1;
            }
        }
        if let Some((c, k)) = counts.into_iter().max_by_key(|(_, k)| *k) {
            parts.push(format!("{p} {c} ({k} of {n} runs)"));
        }
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("; limited by: {}", parts.join(", "))
    }
}

/// The document for a comparison (finished, interrupted or refused).
pub fn build(
    plan: &Plan,
    checks: &[PathCheck],
    reps: &[Rep],
    group_id: Option<i64>,
    refused: Option<String>,
    interrupted: bool,
) -> CompareDoc {
    let runs: Vec<RepRow> = reps.iter().map(row).collect();
    let environment = environment(plan, reps);
    let base = plan
        .paths
        .first()
        .map(|p| p.name.clone())
        .unwrap_or_default();
    let (summaries, diffs) = statistics(plan, &runs, &base);
    let flagged: Vec<String> = checks
        .iter()
        .filter(|c| c.verdict == Verdict::Broken)
        .map(|c| c.name.clone())
        .collect();
    let verdicts = verdicts(plan, &base, &diffs, &runs, &flagged);
    let latency = latency_cdfs(plan, reps);
    let placement = super::placement::per_path(plan, &runs);
    let placement_warning = super::placement::warning(&placement);
    CompareDoc {
        placement,
        placement_warning,
        latency,
        schema: SCHEMA.into(),
        group_id,
        plan: plan.clone(),
        checks: checks.to_vec(),
        refused,
        interrupted,
        runs,
        summaries,
        answer: super::answer::answer(plan, checks, &diffs),
        diffs,
        verdicts,
        flagged,
        environment,
    }
}

/// Each path's two ends as its first stream run (else its first rr run) saw them, and
/// the sysctls the plan recorded.
fn environment(plan: &Plan, reps: &[Rep]) -> Environment {
    let mut environment = Environment {
        ends: Vec::new(),
        sysctls: plan.sysctls.clone(),
    };
    for p in &plan.paths {
        if let Some(s) = reps
            .iter()
            .filter(|r| r.rep.path == p.name)
            .find_map(|r| r.rep.stream.as_ref())
        {
            environment.ends.extend(ends(&p.name, s));
        } else if let Some(r) = reps
            .iter()
            .filter(|r| r.rep.path == p.name)
            .find_map(|r| r.rep.rr.as_ref())
        {
            // rr-only comparisons: the same identity from the rr result's two ends.
            environment.ends.extend(rr_ends(&p.name, r));
        }
    }
    environment
}

/// Per cell and figure: each path's summary, and each other path's difference from
/// the baseline `base` with its interval.
fn statistics(plan: &Plan, runs: &[RepRow], base: &str) -> (Vec<CellSummary>, Vec<Diff>) {
    let mut summaries = Vec::new();
    let mut diffs = Vec::new();
    for cell in plan.cells() {
        for f in Figure::ALL {
            let b = values(runs, base, cell, f);
            for p in &plan.paths {
                let xs = values(runs, &p.name, cell, f);
                if let Some(summary) = mtuperf_stats::summarize(&xs) {
                    summaries.push(CellSummary {
                        path: p.name.clone(),
                        test: cell.test,
                        block: cell.block,
                        clients: cell.clients,
                        figure: f,
                        summary,
                    });
                }
                if p.name == base {
                    continue;
                }
                if let Some(d) = mtuperf_stats::rel_diff(&b, &xs) {
                    diffs.push(Diff {
                        path: p.name.clone(),
                        baseline: base.to_string(),
                        test: cell.test,
                        block: cell.block,
                        clients: cell.clients,
                        figure: f,
                        rel: d.rel,
                        low: d.low,
                        high: d.high,
                        significant: d.significant,
                        method: d.method.into(),
                        no_interval: d.no_interval,
                    });
                }
            }
        }
    }
    (summaries, diffs)
}

/// One line per path against the baseline: its differences, what limited the runs,
/// and a flag when either path failed its pre-check.
fn verdicts(
    plan: &Plan,
    base: &str,
    diffs: &[Diff],
    runs: &[RepRow],
    flagged: &[String],
) -> Vec<String> {
    let is_flagged = |name: &str| flagged.iter().any(|f| f == name);
    plan.paths
        .iter()
        .skip(1)
        .map(|p| {
            let line = verdict_line(&p.name, base, diffs) + &limits_note(runs, &[&p.name, base]);
            if is_flagged(&p.name) || is_flagged(base) {
                format!("{line} (FLAGGED: a path failed its pre-check; measured with --force)")
            } else {
                line
            }
        })
        .collect()
}
