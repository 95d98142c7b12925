//! rr charts: latency against throughput over the `--clients` steps per path with the
//! knee marked (`mtuperf_stats::knee`), and block-latency CDFs per path.

use mtuperf_engine::compare::TestKind;

use super::charts::{lines_svg, plain_lines, wrap, Frame, Line, Named};
use crate::compare::{block_label, CompareDoc, Figure};

fn mean(d: &CompareDoc, path: &str, block: u32, clients: u32, f: Figure) -> Option<f64> {
    d.summaries
        .iter()
        .find(|s| {
            s.path == path
                && s.test == TestKind::Rr
                && s.block == block
                && s.clients == clients
                && s.figure == f
        })
        .map(|s| s.summary.mean)
}

/// One path's curve: colour index, name, (blocks/s, p99 µs), knee index.
type Curve = (usize, String, Vec<(f64, f64)>, Option<usize>);
/// One path's CDF: colour index, name, (µs, fraction).
type Cdf = Named<String>;

/// p99 (µs) against blocks/s, one line per path over its client counts; the knee ringed.
pub fn curve(d: &CompareDoc, block: u32) -> String {
    let mut clients = d.plan.clients.clone();
    clients.sort_unstable();
    let series: Vec<Curve> = d
        .plan
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let pts: Vec<(f64, f64, f64)> = clients
                .iter()
                .filter_map(|&c| {
                    let t = mean(d, &p.name, block, c, Figure::BlocksPerS)?;
                    let l = mean(d, &p.name, block, c, Figure::P99)?;
                    Some((f64::from(c), t, l / 1e3))
                })
                .collect();
            let knee = mtuperf_stats::knee(&pts);
            (
                i,
                p.name.clone(),
                pts.iter().map(|&(_, t, l)| (t, l)).collect(),
                knee,
            )
        })
        .collect();
    let points: usize = series.iter().map(|s| s.2.len()).sum();
    if points == 0 {
        return String::new();
    }
    let xmax = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.0))
        .fold(1.0_f64, f64::max)
        * 1.1;
    let ymax = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.1))
        .fold(1e-9_f64, f64::max)
        * 1.15;
    let title = format!(
        "rr {}: p99 latency vs blocks/s over {:?} clients",
        block_label(block),
        clients
    );
    let lines: Vec<Line> = series
        .iter()
        .map(|(i, name, pts, knee)| Line {
            color: *i,
            name,
            pts,
            ring: knee.and_then(|k| pts.get(k).copied()),
        })
        .collect();
    let frame = Frame {
        title: &title,
        caption_size: 15,
        x: 0.0..xmax,
        log_x: false,
        y: 0.0..ymax,
        x_desc: "blocks/s (mean)",
        y_desc: "p99 µs (mean)",
        dot: 4,
        stroke: 1,
    };
    let svg = lines_svg(&frame, &lines);
    let note = if series.iter().any(|s| s.3.is_some()) {
        "ringed: the knee (last load step that raised blocks/s by 10% or more, p99 rising after it)"
    } else {
        "no knee: still scaling at the highest load, or nothing saturated (needs 2+ client counts)"
    };
    wrap(&svg, points, &format!("{title}; {note}"))
}

/// Block-latency CDF per path for one block size and client count.
pub fn cdf(d: &CompareDoc, block: u32, clients: u32) -> String {
    let series: Vec<Cdf> = d
        .plan
        .paths
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let c = d
                .latency
                .iter()
                .find(|c| c.path == p.name && c.block == block && c.clients == clients)?;
            Some((
                i,
                p.name.clone(),
                c.points.iter().map(|[x, y]| (*x, *y)).collect(),
            ))
        })
        .collect();
    let points: usize = series.iter().map(|s| s.2.len()).sum();
    if points == 0 {
        return String::new();
    }
    let xmax = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.0))
        .fold(1e-9_f64, f64::max)
        * 1.05;
    let title = format!("rr {} x{clients}: block latency CDF", block_label(block));
    let lines = plain_lines(&series);
    let frame = Frame {
        title: &title,
        caption_size: 15,
        x: 0.5..xmax.max(1.0),
        log_x: true,
        y: 0.0..1.0,
        x_desc: "latency µs (log)",
        y_desc: "fraction of blocks",
        dot: 1,
        stroke: 2,
    };
    let svg = lines_svg(&frame, &lines);
    wrap(&svg, points, &format!("{title}, all repetitions merged"))
}
