//! The HTML report of one `path` run: the verdict, each direction's search (largest
//! passing size against the expected MTU and the sender's interface MTU) as a table and
//! a chart, and the run's text.

use std::fmt::Write as _;

use mtuperf_engine::path::{DirResult, Limit};
use plotters::prelude::*;

use super::{Dir, Document};
use crate::figure::Figure;
use crate::html::axis::{
    color, legend, tick, Unit, FONT_DESC, FONT_TICK, FONT_TITLE, LEGEND_W, PALETTE,
};
use crate::html::chart::{category_at, wrap, SIZE};
use crate::html::{esc, head, table, when, CSS};

/// The expected MTU's line (vermillion, dashed: it shows over the interface MTU's when
/// they are equal) and the interface MTU's (grey).
const EXPECT: RGBColor = PALETTE[3];
const IFACE: RGBColor = RGBColor(150, 150, 150);

/// One bar per direction (the largest size that passed, labelled), a dashed line at the
/// expected MTU and a grey one at the sender's interface MTU (the search's top).
fn chart(ds: &[Dir<'_>], expect: u32) -> String {
    if ds.is_empty() {
        return String::new();
    }
    let n = ds.len();
    let top = ds.iter().map(|d| d.1.top).max().unwrap_or(0);
    let ymax = f64::from(top.max(expect).max(1)) * 1.15;
    let title = "largest packet that passed, per direction";
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        let _ = root.fill(&WHITE);
        let Ok(titled) = root.titled(title, ("sans-serif", FONT_TITLE)) else {
            return String::new();
        };
        let (plot, pane) = titled.split_horizontally(SIZE.0 - LEGEND_W);
        legend(
            &pane,
            &[
                (color(0), "largest passing".into(), false),
                (EXPECT, format!("expected {expect}"), true),
                (IFACE, format!("iface MTU {top}"), false),
            ],
        );
        let names: Vec<&str> = ds.iter().map(|d| dir_title(d.0)).collect();
        let Ok(mut chart) = ChartBuilder::on(&plot)
            .margin(10)
            .x_label_area_size(36)
            .y_label_area_size(84)
            .build_cartesian_2d(0.0..n as f64, 0.0..ymax)
        else {
            return String::new();
        };
        let _ = chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&|x| category_at(&names, *x))
            .y_desc("IP packet size, bytes")
            .label_style(("sans-serif", FONT_TICK))
            .axis_desc_style(("sans-serif", FONT_DESC))
            .y_label_formatter(&|v| tick(Unit::Count, *v))
            .draw();
        for (i, d) in ds.iter().enumerate() {
            let x = i as f64;
            let v = f64::from(d.1.largest_ok);
            let _ = chart.draw_series(std::iter::once(Rectangle::new(
                [(x + 0.25, 0.0), (x + 0.75, v)],
                color(0).filled(),
            )));
            let label = format!("{} ({} probes)", d.1.largest_ok, d.1.probes);
            let _ = chart.draw_series(std::iter::once(
                EmptyElement::at((x + 0.25, v))
                    + Text::new(label, (0, -18), ("sans-serif", FONT_TICK)),
            ));
        }
        let line = |v: u32| [(0.0, f64::from(v)), (n as f64, f64::from(v))];
        let _ = chart.draw_series(std::iter::once(PathElement::new(
            line(top),
            IFACE.stroke_width(2),
        )));
        let _ = chart.draw_series(DashedLineSeries::new(
            line(expect),
            8,
            5,
            EXPECT.stroke_width(2),
        ));
        let _ = root.present();
    }
    wrap(&svg, n, title)
}

/// A direction's figure `name` (whole bytes or probes).
fn dir_figure(figs: &[Figure], name: &str, dir: &str) -> Option<u64> {
    figs.iter()
        .find(|f| f.name == name && f.labels.iter().any(|(k, v)| *k == "direction" && v == dir))
        .map(|f| f.value as u64)
}

/// How the report names a direction.
fn dir_title(dir: &str) -> &str {
    if dir == "both" {
        "both (ICMP echo)"
    } else {
        dir
    }
}

fn stopped_by(d: &DirResult) -> String {
    match &d.limit {
        Limit::Top => "reached the top".into(),
        Limit::Icmp { mtu, .. } => format!("ICMP too-big, MTU {mtu}"),
        Limit::Local { mtu } => format!("local route/interface, MTU {mtu}"),
        Limit::Silent => "silence (black hole)".into(),
    }
}

/// The whole report of one path run as one HTML document.
pub fn html(doc: &Document) -> String {
    let mut o = String::new();
    let target = doc
        .agent
        .as_ref()
        .map(|r| r.target.clone())
        .or_else(|| doc.icmp.as_ref().map(|r| r.target.to_string()))
        .or_else(|| doc.hops.as_ref().map(|r| r.target.to_string()))
        .unwrap_or_default();
    let run = doc.run_id.map_or(String::new(), |id| format!("run {id}, "));
    let title = format!("mtuperf path to {target}: {run}{}", when(&doc.started));
    o.push_str(&head(CSS, &title));
    let _ = writeln!(o, "<p class=\"run\">{} mode</p>", esc(doc.mode_name()));
    let class = if doc.ok { "verdict" } else { "flag" };
    o.push_str("<h2>Verdict</h2>\n");
    for (v, fix) in super::verdicts(doc) {
        let _ = writeln!(o, "<p class=\"{class}\">{}</p>", esc(&v));
        if let Some(f) = fix {
            let _ = writeln!(o, "<p>Fix: {}</p>", esc(&f));
        }
    }
    let (ds, expect) = doc.directions();
    if !ds.is_empty() {
        o.push_str("<h2>Searches</h2>\n");
        // The numbers are the run's figures; "stopped by" is the search's own words.
        let figs = super::figures(doc);
        let rows: Vec<Vec<String>> = ds
            .iter()
            .map(|(name, d, _)| {
                let n = |fig: &str| dir_figure(&figs, fig, name);
                let cell = |fig: &str| n(fig).map_or(String::new(), |v| v.to_string());
                let vs = if n("path_mtu") >= Some(u64::from(expect)) {
                    "ok"
                } else {
                    "BELOW"
                };
                vec![
                    dir_title(name).to_string(),
                    cell("path_mtu"),
                    cell("largest_passing"),
                    cell("search_top"),
                    stopped_by(d),
                    cell("probes"),
                    cell("unanswered"),
                    vs.to_string(),
                ]
            })
            .collect();
        table(
            &mut o,
            &[
                "direction",
                "MTU",
                "largest passing",
                "search top",
                "stopped by",
                "probes",
                "unanswered",
                &format!("vs expected {expect}"),
            ],
            &rows,
        );
        o.push_str(&chart(&ds, expect));
    }
    o.push_str("<h2>Details</h2>\n<pre>");
    o.push_str(&esc(&super::text(doc)));
    o.push_str("</pre>\n</body></html>\n");
    o
}
