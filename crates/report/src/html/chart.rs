//! What every chart of every page shares (plotters, SVG): the `<figure>` a chart sits
//! in, whose `data-points` attribute counts the values it draws; the line chart with
//! its legend pane; the key points of a log axis; the labels of a category axis.

use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;

use super::axis::{color, legend, tick, Entry, Unit, FONT_DESC, FONT_TICK, FONT_TITLE, LEGEND_W};
use super::esc;

/// The chart in its `<figure>`, as wide as the SVG (so the caption wraps under it).
pub(crate) fn wrap(svg: &str, points: usize, caption: &str) -> String {
    let width = svg
        .split_once("width=\"")
        .and_then(|(_, rest)| rest.split('"').next())
        .and_then(|w| w.parse::<u32>().ok())
        .map_or(String::new(), |w| format!(" style=\"width:{w}px\""));
    format!(
        "<figure class=\"chart\" data-points=\"{points}\"{width}>{svg}<figcaption>{}</figcaption></figure>\n",
        esc(caption)
    )
}

/// The frame of a line chart.
pub(crate) struct Frame<'a> {
    pub title: &'a str,
    pub x: std::ops::Range<f64>,
    /// A logarithmic x axis (latency CDFs); linear otherwise.
    pub log_x: bool,
    pub y: std::ops::Range<f64>,
    /// A logarithmic y axis (latency by percentile, whose tail would squash the rest).
    pub log_y: bool,
    pub x_desc: &'a str,
    pub y_desc: &'a str,
    pub x_unit: Unit,
    pub y_unit: Unit,
    /// Radius of each point's dot and width of the joining line.
    pub dot: u32,
    pub stroke: u32,
}

/// One path's line: colour index, legend name, points, and a point to ring (a knee).
pub(crate) struct Line<'a> {
    pub color: usize,
    pub name: &'a str,
    pub pts: &'a [(f64, f64)],
    pub ring: Option<(f64, f64)>,
    /// A label beside each point (e.g. its client count), or none.
    pub labels: Vec<String>,
    /// Drawn dashed (a second series of one colour: the reverse direction, p99).
    pub dashed: bool,
}

/// One path's points with its colour index and name.
pub(crate) type Named<S> = (usize, S, Vec<(f64, f64)>);

/// Lines without a ringed point, one per series.
pub(crate) fn plain_lines<S: AsRef<str>>(series: &[Named<S>]) -> Vec<Line<'_>> {
    series
        .iter()
        .map(|(i, name, pts)| Line {
            color: *i,
            name: name.as_ref(),
            pts,
            ring: None,
            labels: Vec::new(),
            dashed: false,
        })
        .collect()
}

/// Width and height of every chart: the plot area plus the legend pane (two side by
/// side on a page 1400 px wide).
pub(crate) const SIZE: (u32, u32) = (470 + LEGEND_W, 380);

/// Room for the tick labels and the axis description left of and below a plot.
pub(crate) const Y_LABELS: u32 = 84;
pub(crate) const X_LABELS: u32 = 52;

/// Points joined by lines, one per path, with a legend in its own pane right of the
/// plot: the SVG, or an empty string when plotters cannot lay the chart out.
pub(crate) fn lines_svg(frame: &Frame<'_>, lines: &[Line<'_>]) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let _ = root.fill(&WHITE);
        let Ok(titled) = root.titled(frame.title, ("sans-serif", FONT_TITLE)) else {
            return String::new();
        };
        let (plot, pane) = titled.split_horizontally(SIZE.0 - LEGEND_W);
        let entries: Vec<Entry> = lines
            .iter()
            .map(|l| (color(l.color), l.name.to_string(), l.dashed))
            .collect();
        legend(&pane, &entries);
        let mut builder = ChartBuilder::on(&plot);
        builder
            .margin(10)
            .x_label_area_size(X_LABELS)
            .y_label_area_size(Y_LABELS);
        let (x, y) = (frame.x.clone(), frame.y.clone());
        let drawn = match (frame.log_x, frame.log_y) {
            (false, false) => builder
                .build_cartesian_2d(x, y)
                .map(|mut c| draw_lines(&mut c, frame, lines)),
            (true, false) => builder
                .build_cartesian_2d(x.log_scale(), y)
                .map(|mut c| draw_lines(&mut c, frame, lines)),
            (false, true) => {
                let (bold, light) = log_points(&y);
                let y = y.log_scale().with_key_points(bold).with_light_points(light);
                builder
                    .build_cartesian_2d(x, y)
                    .map(|mut c| draw_lines(&mut c, frame, lines))
            }
            (true, true) => {
                let (bold, light) = log_points(&y);
                let y = y.log_scale().with_key_points(bold).with_light_points(light);
                builder
                    .build_cartesian_2d(x.log_scale(), y)
                    .map(|mut c| draw_lines(&mut c, frame, lines))
            }
        };
        if drawn.is_err() {
            return String::new();
        }
        let _ = root.present();
    }
    svg
}

fn draw_lines<'b, X, Y>(
    chart: &mut ChartContext<'b, SVGBackend<'b>, Cartesian2d<X, Y>>,
    frame: &Frame<'_>,
    lines: &[Line<'_>],
) where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let (xu, yu) = (frame.x_unit, frame.y_unit);
    let _ = chart
        .configure_mesh()
        .x_desc(frame.x_desc)
        .y_desc(frame.y_desc)
        .label_style(("sans-serif", FONT_TICK))
        .axis_desc_style(("sans-serif", FONT_DESC))
        .x_label_formatter(&|v| tick(xu, *v))
        .y_label_formatter(&|v| tick(yu, *v))
        .draw();
    for l in lines {
        let c = color(l.color);
        let dots = l.pts.iter().map(|&p| Circle::new(p, frame.dot, c.filled()));
        let _ = chart.draw_series(dots);
        let style = c.stroke_width(frame.stroke);
        if l.dashed {
            let line = DashedLineSeries::new(l.pts.iter().copied(), 6, 4, style);
            let _ = chart.draw_series(line);
        } else {
            let _ = chart.draw_series(LineSeries::new(l.pts.iter().copied(), style));
        }
        let labels = l.pts.iter().zip(&l.labels).map(|(&p, t)| {
            EmptyElement::at(p) + Text::new(t.clone(), (6, -18), ("sans-serif", FONT_TICK))
        });
        let _ = chart.draw_series(labels);
        if let Some(k) = l.ring {
            let _ = chart.draw_series(std::iter::once(Circle::new(k, 9, BLACK.stroke_width(2))));
        }
    }
}

/// A log axis's labelled lines (1, 2 and 5 × 10^k) and light ones (the other whole
/// multiples) within `r`: plotters' own give a decade or two of latency one or two
/// labels, none below the first power of ten.
fn log_points(r: &std::ops::Range<f64>) -> (Vec<f64>, Vec<f64>) {
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    if r.start <= 0.0 || r.end <= r.start {
        return (bold, light);
    }
    let first = r.start.log10().floor() as i32;
    let last = r.end.log10().ceil() as i32;
    for k in first..=last {
        for m in 1..=9 {
            let v = f64::from(m) * 10f64.powi(k);
            if !r.contains(&v) {
                continue;
            }
            if matches!(m, 1 | 2 | 5) {
                bold.push(v);
            } else {
                light.push(v);
            }
        }
    }
    (bold, light)
}

/// The label of a category axis at `x`: category i's name at its middle (i + 0.5),
/// nothing between categories.
pub(crate) fn category_at<S: AsRef<str>>(names: &[S], x: f64) -> String {
    let i = x.floor() as usize;
    if (x - i as f64 - 0.5).abs() < 0.01 {
        names
            .get(i)
            .map(|n| n.as_ref().to_string())
            .unwrap_or_default()
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axes_are_labelled_at_one_two_five() {
        let (bold, light) = log_points(&(15.0..30_000.0));
        assert_eq!(
            bold,
            [20.0, 50.0, 100.0, 200.0, 500.0, 1e3, 2e3, 5e3, 1e4, 2e4]
        );
        assert!(light.contains(&30.0) && light.contains(&9000.0));
        assert!(!light.contains(&10.0), "below the range");
        assert_eq!(log_points(&(0.0..10.0)), (vec![], vec![]));
    }

    #[test]
    fn a_figure_takes_the_width_of_its_chart() {
        let f = wrap("<svg width=\"640\" height=\"380\"></svg>", 3, "a <b>");
        assert!(f.contains("style=\"width:640px\""), "{f}");
        assert!(f.contains("<figcaption>a &lt;b&gt;</figcaption>"), "{f}");
    }
}
