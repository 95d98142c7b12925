//! Human tick labels (20k, 1.5 ms, p99.9), the charts' type sizes and colours, and the
//! legend pane drawn to the right of the plot area, so that no legend box ever covers a
//! data point.

use plotters::coord::Shift;
use plotters::prelude::*;

/// What an axis counts, for its tick labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// A plain count or rate: 950, 20k, 1.5M.
    Count,
    /// Microseconds shown as µs, ms or s: 850 µs, 1.5 ms.
    Micros,
    /// Whole numbers only (repetitions, client counts): 1.5 has no tick label.
    Int,
    /// A value shown as it is, with at most 3 significant decimals trimmed.
    Plain,
    /// `1 / (1 − quantile)` on a log axis, labelled as the percentile: 100 → p99.
    Percentile,
}

/// Trims "1.500" to "1.5" and "2.0" to "2".
fn trim(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn sig(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    };
    trim(s)
}

/// One tick label.
pub(crate) fn tick(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Count => {
            let a = v.abs();
            if a >= 1e9 {
                format!("{}G", sig(v / 1e9))
            } else if a >= 1e6 {
                format!("{}M", sig(v / 1e6))
            } else if a >= 1e3 {
                format!("{}k", sig(v / 1e3))
            } else {
                sig(v)
            }
        }
        Unit::Micros => {
            let a = v.abs();
            if a == 0.0 {
                "0".into()
            } else if a >= 1e6 {
                format!("{} s", sig(v / 1e6))
            } else if a >= 1e3 {
                format!("{} ms", sig(v / 1e3))
            } else {
                format!("{} µs", sig(v))
            }
        }
        Unit::Int => {
            if (v - v.round()).abs() < 1e-6 {
                format!("{}", v.round() as i64)
            } else {
                String::new()
            }
        }
        Unit::Plain => sig(v),
        Unit::Percentile => {
            if v <= 1.0 {
                "p0".into()
            } else {
                let pct = (1.0 - 1.0 / v) * 100.0;
                format!("p{}", trim(format!("{pct:.3}")))
            }
        }
    }
}

/// Type sizes as plotters takes them; its SVG backend writes `font-size` as the size
/// / 1.24 px, so 16 is a 12.9 px label (the SVGs are shown at their natural size):
/// nothing under 11 px. Titles (16.1 px):
pub(crate) const FONT_TITLE: u32 = 20;
/// Axis descriptions ("p99 block latency", 13.7 px).
pub(crate) const FONT_DESC: u32 = 17;
/// Tick labels, legend names and point labels (12.9 px).
pub(crate) const FONT_TICK: u32 = 16;

/// The Okabe–Ito palette (Okabe & Ito, "Color Universal Design", 2008): eight colours
/// told apart with every common colour-vision deficiency, in the order series take
/// them (yellow last: it is faint on white).
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// The colour of series `i` (the palette again after eight).
pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The legend border's colour: the report test finds legend boxes by it.
pub(crate) const LEGEND_STROKE: RGBColor = RGBColor(90, 90, 90);
/// Width of the legend pane to the right of the plot.
pub(crate) const LEGEND_W: u32 = 170;

/// One legend entry: its colour, its name, and whether its line is dashed.
pub(crate) type Entry = (RGBColor, String, bool);

/// Draws one entry per (colour, name, dashed) in `area` (the pane right of the plot):
/// a bordered box with a square swatch (two dashes for a dashed line) and the name.
/// Nothing when there is nothing to name.
pub(crate) fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[Entry]) {
    if entries.is_empty() {
        return;
    }
    let row = 20;
    let top = 40;
    let h = top - 2 + row * entries.len() as i32;
    let w = LEGEND_W as i32 - 10;
    let _ = area.draw(&Rectangle::new(
        [(4, top - 8), (w, h)],
        LEGEND_STROKE.stroke_width(1),
    ));
    for (i, (c, name, dashed)) in entries.iter().enumerate() {
        let y = top + row * i as i32;
        if *dashed {
            for x in [8, 18] {
                let dash = [(x, y + 6), (x + 6, y + 6)];
                let _ = area.draw(&PathElement::new(dash, c.stroke_width(3)));
            }
        } else {
            let _ = area.draw(&Rectangle::new([(10, y), (22, y + 12)], c.filled()));
        }
        let shown: String = if name.chars().count() > 17 {
            name.chars().take(16).chain(std::iter::once('…')).collect()
        } else {
            name.clone()
        };
        let _ = area.draw(&Text::new(shown, (28, y - 1), ("sans-serif", FONT_TICK)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_read_as_people_write_them() {
        assert_eq!(tick(Unit::Count, 20000.0), "20k");
        assert_eq!(tick(Unit::Count, 1_500_000.0), "1.5M");
        assert_eq!(tick(Unit::Count, 950.0), "950");
        assert_eq!(tick(Unit::Micros, 1500.0), "1.5 ms");
        assert_eq!(tick(Unit::Micros, 85.0), "85 µs");
        assert_eq!(tick(Unit::Micros, 2_000_000.0), "2 s");
        assert_eq!(tick(Unit::Int, 1.5), "");
        assert_eq!(tick(Unit::Int, 2.0), "2");
        assert_eq!(tick(Unit::Plain, 2.0), "2");
        assert_eq!(tick(Unit::Percentile, 100.0), "p99");
        assert_eq!(tick(Unit::Percentile, 10000.0), "p99.99");
        assert_eq!(tick(Unit::Percentile, 1000.0), "p99.9");
    }

    /// Distance between two colours in RGB space.
    pub(crate) fn dist(a: RGBColor, b: RGBColor) -> f64 {
        let d = |x: u8, y: u8| (f64::from(x) - f64::from(y)).powi(2);
        (d(a.0, b.0) + d(a.1, b.1) + d(a.2, b.2)).sqrt()
    }

    #[test]
    fn series_colours_are_far_apart() {
        for (i, &a) in PALETTE.iter().enumerate() {
            for &b in &PALETTE[i + 1..] {
                assert!(dist(a, b) > 60.0, "{a:?} and {b:?} are too close");
            }
        }
        assert_eq!(color(8), color(0));
    }
}
