//! rr charts: latency (or CPU per block) against throughput over the `--clients` steps,
//! one line per path and block size with the knee marked (`mtuperf_stats::knee`) and
//! each point labelled with its client count; block-latency CDFs and percentile
//! spectra (HdrHistogram style, log axis to p99.99, latency on a log axis too) per
//! path, or per load when one path was swept over several client counts.

use mtuperf_engine::compare::TestKind;

use crate::compare::{block_label, CompareDoc, Figure};
use crate::html::axis::Unit;
use crate::html::chart::{lines_svg, plain_lines, wrap, Frame, Line, Named};

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

/// One line of a load chart: colour index, name, (blocks/s, y), client labels, knee.
struct Curve {
    color: usize,
    name: String,
    pts: Vec<(f64, f64)>,
    labels: Vec<String>,
    knee: Option<usize>,
}

/// One path's CDF: colour index, name, (µs, fraction).
type Cdf = Named<String>;

/// "1, 4 and 16"
fn list(xs: &[u32]) -> String {
    let s: Vec<String> = xs.iter().map(ToString::to_string).collect();
    match s.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `y` (p99 or client CPU per block) against blocks/s: one line per path and block
/// size over the client counts, each point labelled ×clients; for p99 the knee ringed.
fn load_chart(d: &CompareDoc, blocks: &[u32], y: Figure, title: &str) -> String {
    let mut clients = d.plan.clients.clone();
    clients.sort_unstable();
    // One load step is one point per line: the summary table holds it.
    if clients.len() < 2 {
        return String::new();
    }
    let series = curves(d, blocks, &clients, y);
    let points: usize = series.iter().map(|s| s.pts.len()).sum();
    if points == 0 {
        return String::new();
    }
    let xmax = series
        .iter()
        .flat_map(|s| s.pts.iter().map(|p| p.0))
        .fold(1.0_f64, f64::max)
        * 1.15;
    let ymax = series
        .iter()
        .flat_map(|s| s.pts.iter().map(|p| p.1))
        .fold(1e-9_f64, f64::max)
        * 1.2;
    let lines: Vec<Line> = series
        .iter()
        .map(|s| Line {
            color: s.color,
            name: &s.name,
            pts: &s.pts,
            ring: s.knee.and_then(|k| s.pts.get(k).copied()),
            labels: s.labels.clone(),
            dashed: false,
        })
        .collect();
    let y_desc = format!("mean {}", y.measured(TestKind::Rr));
    let x_desc = format!("mean {}", Figure::BlocksPerS.measured(TestKind::Rr));
    let frame = Frame {
        title,
        x: 0.0..xmax,
        log_x: false,
        y: 0.0..ymax,
        log_y: false,
        x_desc: &x_desc,
        y_desc: &y_desc,
        x_unit: Unit::Count,
        y_unit: Unit::Micros,
        dot: 4,
        stroke: 1,
    };
    let svg = lines_svg(&frame, &lines);
    let note = if y != Figure::P99 {
        "labels: concurrent clients; system-wide CPU of the client host per block answered"
    } else if series.iter().any(|s| s.knee.is_some()) {
        "labels: concurrent clients; ringed: the knee (last load step that raised blocks/s by 10% or more, p99 rising after it)"
    } else {
        "labels: concurrent clients; no knee: still scaling at the highest load, or nothing saturated (needs 2+ client counts)"
    };
    wrap(&svg, points, &format!("{title}; {note}"))
}

/// The lines of a load chart: per path and block size, `y` at each client count.
fn curves(d: &CompareDoc, blocks: &[u32], clients: &[u32], y: Figure) -> Vec<Curve> {
    let one_path = d.plan.paths.len() == 1;
    let mut series: Vec<Curve> = Vec::new();
    for (i, p) in d.plan.paths.iter().enumerate() {
        for (j, &b) in blocks.iter().enumerate() {
            let pts: Vec<(u32, f64, f64)> = clients
                .iter()
                .filter_map(|&c| {
                    let t = mean(d, &p.name, b, c, Figure::BlocksPerS)?;
                    let l = mean(d, &p.name, b, c, y)?;
                    // Latency figures are in ns; CPU per block already in µs.
                    let l = if y == Figure::CpuPerBlock { l } else { l / 1e3 };
                    Some((c, t, l))
                })
                .collect();
            if pts.is_empty() {
                continue;
            }
            let knee = if y == Figure::P99 {
                let triples: Vec<(f64, f64, f64)> =
                    pts.iter().map(|&(c, t, l)| (f64::from(c), t, l)).collect();
                mtuperf_stats::knee(&triples)
            } else {
                None
            };
            let name = match (one_path, blocks.len()) {
                (_, 1) => p.name.clone(),
                (true, _) => block_label(b),
                (false, _) => format!("{} {}", p.name, block_label(b)),
            };
            series.push(Curve {
                color: i * blocks.len() + j,
                name,
                pts: pts.iter().map(|&(_, t, l)| (t, l)).collect(),
                labels: pts.iter().map(|&(c, _, _)| format!("×{c}")).collect(),
                knee,
            });
        }
    }
    series
}

/// "1 client", "1, 4 and 16 clients".
fn clients_text(d: &CompareDoc) -> String {
    let mut clients = d.plan.clients.clone();
    clients.sort_unstable();
    let s = if clients == [1] { "" } else { "s" };
    format!("{} client{s}", list(&clients))
}

/// p99 against blocks/s for one block size, one line per path; the knee ringed.
pub fn curve(d: &CompareDoc, block: u32) -> String {
    let title = format!(
        "rr {}: p99 latency vs blocks/s, {}",
        block_label(block),
        clients_text(d)
    );
    load_chart(d, &[block], Figure::P99, &title)
}

/// p99 against blocks/s for every block size in one chart (seed 004's figure).
pub fn by_block(d: &CompareDoc) -> String {
    let labels: Vec<String> = d.plan.blocks.iter().map(|&b| block_label(b)).collect();
    let title = format!(
        "rr: p99 latency vs blocks/s per block size ({})",
        labels.join(", ")
    );
    load_chart(d, &d.plan.blocks, Figure::P99, &title)
}

/// Client CPU per block against blocks/s, every block size.
pub fn cpu(d: &CompareDoc) -> String {
    let title = format!("rr: client CPU per block vs blocks/s, {}", clients_text(d));
    load_chart(d, &d.plan.blocks, Figure::CpuPerBlock, &title)
}

/// Whose latencies a CDF or spectrum draws: each path at one client count, or one
/// path's every client count (a sweep of one path: its loads side by side).
#[derive(Debug, Clone, Copy)]
pub enum Load {
    Clients(u32),
    Each,
}

/// The latency series of `block` under `load`: one per path, or one per client count.
fn cdfs(d: &CompareDoc, block: u32, load: Load) -> Vec<Cdf> {
    let points = |path: &str, clients: u32| {
        d.latency
            .iter()
            .find(|c| c.path == path && c.block == block && c.clients == clients)
            .map(|c| c.points.iter().map(|[x, y]| (*x, *y)).collect::<Vec<_>>())
    };
    match load {
        Load::Clients(clients) => d
            .plan
            .paths
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((i, p.name.clone(), points(&p.name, clients)?)))
            .collect(),
        Load::Each => {
            let Some(path) = d.plan.paths.first() else {
                return Vec::new();
            };
            let mut clients = d.plan.clients.clone();
            clients.sort_unstable();
            clients
                .iter()
                .enumerate()
                .filter_map(|(j, &c)| {
                    let name = format!("{c} client{}", if c == 1 { "" } else { "s" });
                    Some((j, name, points(&path.name, c)?))
                })
                .collect()
        }
    }
}

/// How many points the series hold, and the largest value of `axis` among them.
fn extent(series: &[Cdf], axis: fn(&(f64, f64)) -> f64) -> (usize, f64) {
    let points = series.iter().map(|s| s.2.len()).sum();
    let max = series
        .iter()
        .flat_map(|s| s.2.iter().map(axis))
        .fold(1e-9_f64, f64::max);
    (points, max)
}

/// "rr 8K, 4 clients: WHAT", or "rr 8K, 1, 4 and 16 clients: WHAT per load".
fn load_title(d: &CompareDoc, block: u32, load: Load, what: &str) -> String {
    match load {
        Load::Clients(clients) => format!(
            "rr {}, {clients} client{}: {what}",
            block_label(block),
            if clients == 1 { "" } else { "s" }
        ),
        Load::Each => format!(
            "rr {}, {}: {what} per load",
            block_label(block),
            clients_text(d)
        ),
    }
}

/// Block-latency CDF for one block size: per path at one client count, or per load.
pub fn cdf(d: &CompareDoc, block: u32, load: Load) -> String {
    let series = cdfs(d, block, load);
    let (points, xmax) = extent(&series, |p| p.0);
    if points == 0 {
        return String::new();
    }
    let xmax = xmax * 1.05;
    let title = load_title(d, block, load, "block latency CDF");
    let lines = plain_lines(&series);
    let frame = Frame {
        title: &title,
        x: 0.5..xmax.max(1.0),
        log_x: true,
        y: 0.0..1.0,
        log_y: false,
        x_desc: "block latency (log scale)",
        y_desc: "fraction of blocks",
        x_unit: Unit::Micros,
        y_unit: Unit::Plain,
        dot: 1,
        stroke: 2,
    };
    let svg = lines_svg(&frame, &lines);
    wrap(&svg, points, &format!("{title}, all repetitions merged"))
}

/// The percentile spectrum: latency against percentile on a log axis of 1/(1−q), so
/// p90, p99, p99.9 and p99.99 are evenly spaced (as HdrHistogram's plots draw it), and
/// latency on a log axis, so a tail of milliseconds leaves the microseconds readable.
pub fn spectrum(d: &CompareDoc, block: u32, load: Load) -> String {
    const TOP: f64 = 10_000.0; // p99.99
    let series: Vec<Cdf> = cdfs(d, block, load)
        .into_iter()
        .map(|(i, name, pts)| {
            let pts = pts
                .into_iter()
                .filter(|&(us, q)| q < 1.0 && us > 0.0)
                .map(|(us, q)| ((1.0 / (1.0 - q)).min(TOP), us))
                .collect();
            (i, name, pts)
        })
        .collect();
    let (points, ymax) = extent(&series, |p| p.1);
    if points == 0 {
        return String::new();
    }
    let ymin = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.1))
        .fold(f64::INFINITY, f64::min);
    let title = load_title(d, block, load, "latency by percentile");
    let lines = plain_lines(&series);
    let frame = Frame {
        title: &title,
        x: 1.0..TOP,
        log_x: true,
        y: ymin * 0.8..ymax * 1.25,
        log_y: true,
        x_desc: "percentile (log scale of 1/(1-q))",
        y_desc: "block latency (log scale)",
        x_unit: Unit::Percentile,
        y_unit: Unit::Micros,
        dot: 1,
        stroke: 2,
    };
    let svg = lines_svg(&frame, &lines);
    wrap(
        &svg,
        points,
        &format!("{title}, all repetitions merged; the tail beyond p99.99 is drawn at p99.99"),
    )
}

/// For each path and block size with an rr load sweep: where its knee is, or that there
/// is none, and its highest throughput (the sweep's verdict).
pub fn knee_lines(d: &CompareDoc) -> Vec<String> {
    let mut clients = d.plan.clients.clone();
    clients.sort_unstable();
    if clients.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for p in &d.plan.paths {
        for &b in &d.plan.blocks {
            let pts: Vec<(u32, f64, f64)> = clients
                .iter()
                .filter_map(|&c| {
                    let t = mean(d, &p.name, b, c, Figure::BlocksPerS)?;
                    let l = mean(d, &p.name, b, c, Figure::P99)?;
                    Some((c, t, l))
                })
                .collect();
            if pts.len() < 2 {
                continue;
            }
            let triples: Vec<(f64, f64, f64)> =
                pts.iter().map(|&(c, t, l)| (f64::from(c), t, l)).collect();
            let Some(max) = pts.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            let head = format!("{} rr {}", p.name, block_label(b));
            let knee = match mtuperf_stats::knee(&triples).and_then(|k| pts.get(k)) {
                Some(&(c, t, l)) => format!(
                    "knee at {c} clients ({t:.0} blocks/s, p99 {})",
                    crate::fmt::micros(l / 1e3)
                ),
                None => "no knee over these loads".to_string(),
            };
            out.push(format!(
                "{head}: {knee}; highest throughput {:.0} blocks/s at {} clients",
                max.1, max.0
            ));
        }
    }
    out
}
