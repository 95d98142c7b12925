//! Human text and perl-sockets' legacy averages for a comparison.

use std::fmt::Write as _;

use mtuperf_engine::compare::{Repeat, Verdict};
use mtuperf_engine::stream::metrics::PerlFigures;

use super::{block_label, CompareDoc, Figure};
use crate::fmt;

/// A figure's value for people.
pub fn value(f: Figure, v: f64) -> String {
    match f {
        Figure::Goodput => fmt::rate(v),
        Figure::P50 | Figure::P99 => fmt::micros(v / 1e3),
        Figure::BlocksPerS => format!("{v:.0} blocks/s"),
        Figure::CpuPerMib => format!("{v:.0} µs/MiB"),
        Figure::CpuPerBlock => format!("{v:.1} µs/block"),
        Figure::FramesPerBlock => format!("{v:.2}"),
    }
}

pub fn plan_line(d: &CompareDoc) -> String {
    let p = &d.plan;
    let paths: Vec<String> = p
        .paths
        .iter()
        .map(|x| format!("{} ({})", x.name, x.target))
        .collect();
    let tests: Vec<&str> = p.tests.iter().map(|t| t.name()).collect();
    let blocks: Vec<String> = p.blocks.iter().map(|b| block_label(*b)).collect();
    let rep = match p.repeat {
        Repeat::Fixed { n } => format!("{n} repetitions"),
        Repeat::CiWidth { pct, max } => format!("until 95% CI within ±{pct}% (max {max})"),
    };
    format!(
        "compare {}: {}; blocks {}; {} ms each, {rep}, interleaved{}\n",
        paths.join(" vs "),
        tests.join(","),
        blocks.join(","),
        p.time_ms,
        d.group_id
            .map(|g| format!("; group {g}"))
            .unwrap_or_default()
    )
}

/// The placement policy and, per path, how its repetitions were placed.
fn placement_lines(s: &mut String, d: &CompareDoc) {
    if d.placement.is_empty() && d.plan.placement.is_free() {
        return;
    }
    let _ = writeln!(s, "placement ({}):", d.plan.placement.describe());
    for p in &d.placement {
        let cpus = |c: &[u32]| mtuperf_proto::placement::format_cpu_list(c);
        let _ = writeln!(
            s,
            "  {:<10} {} of {} repetitions cross-CPU, {} same CPU; client threads on CPU {}, agent's on CPU {}",
            p.path,
            p.cross_cpu,
            p.repetitions,
            p.shared_cpu,
            cpus(&p.client_cpus),
            cpus(&p.agent_cpus)
        );
    }
    if let Some(w) = &d.placement_warning {
        let _ = writeln!(s, "WARNING: {w}");
    }
}

/// The comparison as text: checks, per-path summaries, verdict.
pub fn text(d: &CompareDoc) -> String {
    let mut s = d
        .answer
        .as_ref()
        .map(|a| format!("{}\n", super::answer::line(a)))
        .unwrap_or_default();
    s.push_str(&plan_line(d));
    s.push_str("path checks:\n");
    for c in &d.checks {
        let v = if c.verdict == Verdict::Ok {
            "ok"
        } else {
            "BROKEN"
        };
        let _ = writeln!(s, "  {:<10} {v:<7} {}", c.name, super::check_reason(c));
    }
    if let Some(r) = &d.refused {
        let _ = writeln!(
            s,
            "refused: {r}\n  (--force compares anyway; the report then flags the path)"
        );
        return s;
    }
    for f in &d.flagged {
        let _ = writeln!(
            s,
            "WARNING: path {f} failed its check and was measured only because of --force"
        );
    }
    s.push_str("summary (mean ± 95% CI half-width: Student t of the mean, log-t where marked, none below 3 runs; median, min … max, n):\n");
    let mut last = None;
    for c in &d.summaries {
        let key = (c.test, c.block, c.clients, c.figure);
        if last != Some(key) {
            let _ = writeln!(
                s,
                "  {} {} [{}]",
                super::cell_label(c.test, c.block, c.clients),
                c.figure.label(),
                c.figure.unit()
            );
            last = Some(key);
        }
        let m = &c.summary;
        let _ = writeln!(
            s,
            "    {:<10} {:>14} {:>16}   median {:>14}   {} … {}   n={}",
            c.path,
            value(c.figure, m.mean),
            crate::fmt::ci(m),
            value(c.figure, m.median),
            value(c.figure, m.min),
            value(c.figure, m.max),
            m.n
        );
    }
    placement_lines(&mut s, d);
    s.push_str("verdict (relative difference against the first path; 95% CI of the ratio of means on a log scale, Welch df; none below 3 runs per path):\n");
    for v in &d.verdicts {
        let _ = writeln!(s, "  {v}");
    }
    if d.interrupted {
        s.push_str("interrupted: the figures cover the repetitions finished so far; `mtuperf compare --resume ID` continues\n");
    }
    s
}

fn avg(rows: &[&PerlFigures], f: impl Fn(&PerlFigures) -> f64) -> f64 {
    rows.iter().map(|p| f(p)).sum::<f64>() / rows.len().max(1) as f64
}

/// perl-sockets' packet-averages.pl output (plain means), per path and block.
pub fn legacy(d: &CompareDoc) -> String {
    let mut s = String::new();
    for p in &d.plan.paths {
        for &b in &d.plan.blocks {
            let rows: Vec<&PerlFigures> = d
                .runs
                .iter()
                .filter(|r| !r.interrupted && r.path == p.name && r.block == b)
                .filter_map(|r| r.perl.as_ref())
                .collect();
            if rows.is_empty() {
                continue;
            }
            let _ = writeln!(
                s,
                "# {} ({}), {} blocks, {} runs",
                p.name,
                p.target,
                block_label(b),
                rows.len()
            );
            let lines: [(&str, f64); 8] = [
                ("Bytes Received", avg(&rows, |p| p.bytes_received as f64)),
                ("Avg Packet Size", avg(&rows, |p| p.avg_packet_size)),
                (
                    "Packets Received",
                    avg(&rows, |p| p.packets_received as f64),
                ),
                ("Average milliseconds", avg(&rows, |p| p.average_ms)),
                ("Avg Megabytes/Second", avg(&rows, |p| p.avg_mib_per_s)),
                ("Avg milliseconds/MiB", avg(&rows, |p| p.avg_ms_per_mib)),
                ("Total Elapsed Seconds", avg(&rows, |p| p.total_elapsed_s)),
                (
                    "Network Elapsed Seconds",
                    avg(&rows, |p| p.network_elapsed_s),
                ),
            ];
            for (k, v) in lines {
                let _ = writeln!(s, "key/avg: {k} {v:.6}");
            }
            s.push('\n');
        }
    }
    s
}
