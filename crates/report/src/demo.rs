//! The demo's comparison of stream runs over several paths (the seeds' "1500 vs
//! 9000" table): medians and spread per path, then each path against the first.

use std::fmt::Write as _;

use crate::fmt::rate;
use crate::stream::{receiver_demand, RunDoc};

fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.retain(|x| x.is_finite());
    xs.sort_by(f64::total_cmp);
    mtuperf_stats::percentile(&xs, 50.0)
}

/// Frames per block on the sending end's interface (data direction).
fn sender_frames(run: &RunDoc) -> Option<f64> {
    let sender = run.metrics.directions.first()?.sender;
    run.metrics
        .ends
        .iter()
        .find(|e| e.end == sender)?
        .iface
        .as_ref()?
        .frames_per_block
}

fn mtu(run: &RunDoc) -> Option<u32> {
    run.result.client.iface.as_ref().map(|i| i.mtu)
}

fn signed_pct(x: f64) -> String {
    format!("{:+.0}%", x * 100.0)
}

/// Text table and verdict lines.
pub fn comparison(paths: &[(&str, &[RunDoc])]) -> String {
    let mut out = String::new();
    table(&mut out, paths);
    if let Some((base_name, base)) = paths.first() {
        for (name, runs) in paths.iter().skip(1) {
            let parts = differences(base, runs);
            let _ = writeln!(out, "{name} vs {base_name}: {}", parts.join("; "));
        }
        let _ = writeln!(
            out,
            "(goodput first→last byte at the receiver; CPU is system-wide busy time per MiB on the receiving host; frames per block are the sender's interface packets per 8K write; intervals are 95% CIs of the relative difference of means)"
        );
    }
    out
}

/// One row per path: MTU, runs, median goodput and its range, receiver CPU per MiB,
/// frames per block.
fn table(out: &mut String, paths: &[(&str, &[RunDoc])]) {
    let _ = writeln!(
        out,
        "{:<8} {:>5} {:>4}  {:>14}  {:>27}  {:>14}  {:>12}",
        "path", "MTU", "runs", "goodput (med)", "min .. max", "µs CPU/MiB rx", "frames/block"
    );
    for (name, runs) in paths {
        let good: Vec<f64> = runs.iter().map(|r| r.metrics.headline_bps).collect();
        let lo = good.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = good.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "{:<8} {:>5} {:>4}  {:>14}  {:>27}  {:>14}  {:>12}",
            name,
            runs.first()
                .and_then(mtu)
                .map_or("-".into(), |m| m.to_string()),
            runs.len(),
            median(good.clone()).map_or("-".into(), rate),
            format!("{} .. {}", rate(lo), rate(hi)),
            median(runs.iter().filter_map(receiver_demand).collect())
                .map_or("-".into(), |v| format!("{v:.1}")),
            median(runs.iter().filter_map(sender_frames).collect())
                .map_or("-".into(), |v| format!("{v:.2}")),
        );
    }
}

/// Each figure of `runs` against `base`: the relative difference with its interval,
/// or without one when the runs are too few.
fn differences(base: &[RunDoc], runs: &[RunDoc]) -> Vec<String> {
    let metric = |f: &dyn Fn(&RunDoc) -> Option<f64>| -> (Vec<f64>, Vec<f64>) {
        (
            base.iter().filter_map(f).collect(),
            runs.iter().filter_map(f).collect(),
        )
    };
    let mut parts = Vec::new();
    for (label, f) in [
        (
            "goodput",
            &(|r: &RunDoc| Some(r.metrics.headline_bps)) as &dyn Fn(&RunDoc) -> Option<f64>,
        ),
        ("receiver CPU per MiB", &receiver_demand),
        ("frames per block", &sender_frames),
    ] {
        let (a, b) = metric(f);
        match mtuperf_stats::rel_diff(&a, &b) {
            Some(d) if d.low.is_none() => parts.push(format!(
                "{label} {} (no interval: {})",
                signed_pct(d.rel),
                d.no_interval.as_deref().unwrap_or("too few runs")
            )),
            Some(d) => parts.push(format!(
                "{label} {} [{}, {}]{}",
                signed_pct(d.rel),
                signed_pct(d.low.unwrap_or(d.rel)),
                signed_pct(d.high.unwrap_or(d.rel)),
                if d.significant {
                    ""
                } else {
                    " (not significant)"
                }
            )),
            None => {
                if let (Some(x), Some(y)) = (median(a), median(b)) {
                    if x != 0.0 {
                        parts.push(format!(
                            "{label} {} (too few runs for an interval)",
                            signed_pct(y / x - 1.0)
                        ));
                    }
                }
            }
        }
    }
    parts
}
