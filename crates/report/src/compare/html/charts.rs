//! The comparison's charts of each figure per path, for every kind it compares: the
//! mean as a bar with its 95% CI whisker, and each repetition in run order (to show
//! drift).

use mtuperf_engine::compare::{Cell, TestKind};
use plotters::prelude::*;

use crate::compare::{block_label, CompareDoc, Figure};
use crate::html::axis::{color, tick, Unit, FONT_DESC, FONT_TICK, FONT_TITLE};
use crate::html::chart::{
    category_at, lines_svg, plain_lines, wrap, Frame, Named, X_LABELS, Y_LABELS,
};

/// Scale for a figure's axis: goodput in Gbit/s, the others as they are.
fn scaled(f: Figure, v: f64) -> f64 {
    match f {
        Figure::Goodput => v / 1e9,
        Figure::P50 | Figure::P99 => v / 1e3,
        _ => v,
    }
}

/// Tick labels of a figure's (scaled) axis.
fn unit(f: Figure) -> Unit {
    match f {
        Figure::P50 | Figure::P99 | Figure::CpuPerMib | Figure::CpuPerBlock => Unit::Micros,
        Figure::BlocksPerS => Unit::Count,
        Figure::Goodput | Figure::FramesPerBlock => Unit::Plain,
    }
}

/// A figure's axis: what the summary table calls it, with the axis unit where the
/// ticks do not carry one.
fn axis(f: Figure, test: TestKind) -> String {
    match f {
        Figure::Goodput => format!("{}, Gbit/s", f.measured(test)),
        _ => f.measured(test).to_string(),
    }
}

/// Width and height of a bar chart (no legend: the paths name the bars).
const BAR_SIZE: (u32, u32) = (600, 340);

/// Each path's bar for `f` in `cell`: colour index, name, mean, and the 95% interval
/// (the mean at both ends when there is none).
fn bar_rows(d: &CompareDoc, cell: Cell, f: Figure) -> Vec<(usize, &str, f64, f64, f64)> {
    d.plan
        .paths
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            d.summaries
                .iter()
                .find(|s| {
                    s.path == p.name
                        && s.test == cell.test
                        && s.clients == cell.clients
                        && s.block == cell.block
                        && s.figure == f
                })
                .map(|s| {
                    let m = &s.summary;
                    (
                        i,
                        p.name.as_str(),
                        scaled(f, m.mean),
                        // No interval (n < 3): no error bar, not a made-up one.
                        scaled(f, m.ci95_low.unwrap_or(m.mean)),
                        scaled(f, m.ci95_high.unwrap_or(m.mean)),
                    )
                })
        })
        .collect()
}

/// Mean per path as a bar, with its 95% interval as a whisker.
pub fn bars(d: &CompareDoc, cell: Cell, f: Figure) -> String {
    let rows = bar_rows(d, cell, f);
    if rows.is_empty() {
        return String::new();
    }
    let top = rows.iter().map(|r| r.4).fold(0.0_f64, f64::max).max(1e-9) * 1.15;
    let n = d.plan.paths.len();
    let names: Vec<String> = d.plan.paths.iter().map(|p| p.name.clone()).collect();
    let title = format!(
        "{}: mean {}, 95% CI",
        crate::compare::cell_label(cell.test, cell.block, cell.clients),
        f.measured(cell.test)
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, BAR_SIZE).into_drawing_area();
        let _ = root.fill(&WHITE);
        let Ok(mut chart) = ChartBuilder::on(&root)
            .caption(&title, ("sans-serif", FONT_TITLE))
            .margin(10)
            .x_label_area_size(X_LABELS - 16)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(0.0..n as f64, 0.0..top)
        else {
            return String::new();
        };
        let _ = chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&|x| category_at(&names, *x))
            .y_desc(axis(f, cell.test))
            .label_style(("sans-serif", FONT_TICK))
            .axis_desc_style(("sans-serif", FONT_DESC))
            .y_label_formatter(&|v| tick(unit(f), *v))
            .draw();
        for &(i, _, mean, lo, hi) in &rows {
            let x = i as f64;
            let _ = chart.draw_series(std::iter::once(Rectangle::new(
                [(x + 0.2, 0.0), (x + 0.8, mean)],
                color(i).filled(),
            )));
            if hi <= lo {
                continue; // no interval (fewer than 3 repetitions): no whisker
            }
            let _ = chart.draw_series([
                PathElement::new(vec![(x + 0.5, lo), (x + 0.5, hi)], BLACK.stroke_width(2)),
                PathElement::new(vec![(x + 0.4, lo), (x + 0.6, lo)], BLACK.stroke_width(2)),
                PathElement::new(vec![(x + 0.4, hi), (x + 0.6, hi)], BLACK.stroke_width(2)),
            ]);
        }
        let _ = root.present();
    }
    let note = if rows.iter().all(|r| r.4 <= r.3) {
        "no whiskers: an interval needs at least 3 repetitions per path"
    } else {
        "whiskers: 95% confidence interval of the mean"
    };
    wrap(&svg, rows.len(), &format!("{title}; {note}"))
}

/// One path's points: colour index, name, (round, value).
type Series<'a> = Named<&'a str>;

/// The headline of every repetition in round order, one series per path.
pub fn rounds(d: &CompareDoc, cell: Cell) -> String {
    let f = Figure::Goodput;
    let series: Vec<Series> = d
        .plan
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let pts = d
                .runs
                .iter()
                .filter(|r| {
                    !r.interrupted
                        && r.path == p.name
                        && r.test == cell.test
                        && r.clients == cell.clients
                        && r.block == cell.block
                })
                .filter_map(|r| f.of(r).map(|v| (f64::from(r.round) + 1.0, scaled(f, v))))
                .collect();
            (i, p.name.as_str(), pts)
        })
        .collect();
    let points: usize = series.iter().map(|s| s.2.len()).sum();
    // One repetition per path has no order to show: the summary table holds it.
    if series.iter().all(|s| s.2.len() < 2) {
        return String::new();
    }
    let xmax = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.0))
        .fold(1.0_f64, f64::max)
        + 0.5;
    let ymax = series
        .iter()
        .flat_map(|s| s.2.iter().map(|p| p.1))
        .fold(0.0_f64, f64::max)
        .max(1e-9)
        * 1.15;
    let title = format!(
        "{} {}: goodput of each repetition",
        cell.test.name(),
        block_label(cell.block)
    );
    let lines = plain_lines(&series);
    let y_desc = axis(f, cell.test);
    let frame = Frame {
        title: &title,
        x: 0.5..xmax,
        log_x: false,
        y: 0.0..ymax,
        log_y: false,
        x_desc: "repetition",
        y_desc: &y_desc,
        x_unit: Unit::Int,
        y_unit: unit(f),
        dot: 4,
        stroke: 1,
    };
    let svg = lines_svg(&frame, &lines);
    wrap(
        &svg,
        points,
        &format!("{title} (interleaved: drift shows as a slope in every path)"),
    )
}
