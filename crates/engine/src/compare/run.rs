//! The comparison loop: check every path, then rounds of (cell × path) repetitions.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use std::time::Duration;

use super::check::{check_path, PathCheck, Verdict};
use super::{Cell, CompareObserver, Plan, Repeat, Repetition, TestKind, MIN_REPEAT_FOR_CI};
use crate::client::{ConnectOptions, Session};
use crate::config::{RrConfig, StreamConfig, UdpStreamConfig};
use crate::stream::{self, metrics};
use crate::EngineError;

/// What a comparison ended with.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub checks: Vec<PathCheck>,
    /// Every usable repetition: the prior ones and those run now, in run order.
    pub repetitions: Vec<Repetition>,
    /// Set when a path failed its check and `force` was off: nothing was run.
    pub refused: Option<String>,
    /// Ctrl-C, or a repetition that ended abnormally (a deadline, the agent gone),
    /// stopped the comparison before its plan was complete.
    pub interrupted: bool,
    /// Why the repetition in progress was interrupted (it is stored, not counted).
    pub interrupted_by: Vec<crate::Interrupt>,
}

/// The headline figure of a repetition: stream goodput (bit/s), rr p50 latency (ns).
pub fn headline(rep: &Repetition) -> Option<f64> {
    if let Some(r) = &rep.rr {
        return r.client.latency.p50.map(|p| p as f64);
    }
    if let Some(u) = &rep.udp {
        return Some(crate::stream::udp::metrics::compute(u).goodput_bps);
    }
    rep.stream
        .as_ref()
        .map(|s| metrics::compute(s).headline_bps)
}

fn narrow_enough(plan: &Plan, reps: &[Repetition], pct: f64) -> bool {
    plan.cells().into_iter().all(|cell| {
        plan.paths.iter().all(|p| {
            let xs: Vec<f64> = reps
                .iter()
                .filter(|r| r.path == p.name && r.cell == cell)
                .filter_map(headline)
                .collect();
            xs.len() >= MIN_REPEAT_FOR_CI as usize
                && mtuperf_stats::summarize(&xs)
                    .and_then(|s| s.ci95_half_width_pct)
                    .is_some_and(|w| w <= pct)
        })
    })
}

fn one(
    plan: &Plan,
    path: &super::PathSpec,
    cell: Cell,
    round: u32,
    opts: &ConnectOptions,
    stop: &Arc<AtomicBool>,
) -> Result<Repetition, EngineError> {
    let opts = ConnectOptions {
        bind: path.bind.or(opts.bind),
        ..opts.clone()
    };
    let session = Session::connect(&path.target, &opts)?;
    if cell.test == TestKind::Rr {
        let res = crate::rr::run(&session, &rr_params(plan, cell), stop, &crate::rr::Quiet);
        session.close();
        return Ok(Repetition {
            path: path.name.clone(),
            cell,
            round,
            stream: None,
            rr: Some(res?),
            udp: None,
        });
    }
    if cell.test == TestKind::Udp {
        let (cpus, agent_cpus) = plan.placement.cpus();
        let config = UdpStreamConfig {
            block: cell.block,
            limit: mtuperf_proto::msg::StreamLimit::Time { ms: plan.time_ms },
            rate_bps: 0,
            cpus,
            agent_cpus,
            ..UdpStreamConfig::default()
        };
        let res =
            crate::stream::udp::run(&session, &config, stop, &crate::stream::udp::client::Quiet);
        session.close();
        return Ok(Repetition {
            path: path.name.clone(),
            cell,
            round,
            stream: None,
            rr: None,
            udp: Some(res?),
        });
    }
    let (cpus, agent_cpus) = plan.placement.cpus();
    let params = StreamConfig {
        agent_cpus,
        ..StreamConfig::timed(cell.block, Duration::from_millis(plan.time_ms))
    }
    .params();
    let res = stream::client::run_pinned(&session, &params, cpus, stop, &stream::client::Quiet);
    session.close();
    Ok(Repetition {
        path: path.name.clone(),
        cell,
        round,
        stream: Some(res?),
        rr: None,
        udp: None,
    })
}

fn rr_params(plan: &Plan, cell: Cell) -> RrConfig {
    let (cpus, agent_cpus) = plan.placement.cpus();
    RrConfig {
        cpus,
        agent_cpus,
        block: cell.block,
        request: 64,
        clients: cell.clients,
        time: Duration::from_millis(plan.time_ms),
        ..RrConfig::default()
    }
}

/// Runs (or, with `prior` repetitions from the history, continues) a comparison.
/// Interrupted repetitions in `prior` are run again. Each new repetition is handed to
/// `obs.finished` before the next starts.
pub fn run(
    plan: &Plan,
    opts: &ConnectOptions,
    prior: Vec<Repetition>,
    stop: &Arc<AtomicBool>,
    obs: &mut dyn CompareObserver,
) -> Result<Outcome, EngineError> {
    let mut out = Outcome {
        checks: Vec::new(),
        repetitions: prior.into_iter().filter(|r| !r.interrupted()).collect(),
        refused: None,
        interrupted: false,
        interrupted_by: Vec::new(),
    };
    for p in &plan.paths {
        let c = check_path(p, opts);
        obs.checked(&c);
        out.checks.push(c);
    }
    let broken: Vec<String> = out
        .checks
        .iter()
        .filter(|c| c.verdict == Verdict::Broken)
        .map(|c| format!("path {} ({})", c.name, c.target))
        .collect();
    if !broken.is_empty() && !plan.force {
        out.refused = Some(broken.join("; "));
        return Ok(out);
    }
    let cells = plan.cells();
    let planned = (cells.len() * plan.paths.len()) as u32 * plan.repeat.max();
    for round in 0..plan.repeat.max() {
        if let Repeat::CiWidth { pct, .. } = plan.repeat {
            if round >= MIN_REPEAT_FOR_CI && narrow_enough(plan, &out.repetitions, pct) {
                break;
            }
        }
        for &cell in &cells {
            for path in &plan.paths {
                let done = out
                    .repetitions
                    .iter()
                    .any(|r| r.path == path.name && r.cell == cell && r.round == round);
                if done {
                    continue;
                }
                if stop.load(Ordering::Relaxed) {
                    out.interrupted = true;
                    return Ok(out);
                }
                obs.starting(path, cell, round, out.repetitions.len() as u32, planned);
                let rep = one(plan, path, cell, round, opts, stop)?;
                obs.finished(&rep)?;
                if rep.interrupted() {
                    out.interrupted = true;
                    out.interrupted_by = rep.interrupted_by().to_vec();
                    return Ok(out);
                }
                out.repetitions.push(rep);
            }
        }
    }
    out.interrupted = stop.load(Ordering::Relaxed);
    Ok(out)
}
