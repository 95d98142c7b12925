//! Plain verdict sentences: "jumbo vs std: stream 8K goodput +97% [+90, +104]; ...".

use super::{Diff, Figure};

fn pct(x: f64) -> String {
    // + 0.0 turns a rounded -0 into 0, which would otherwise print as "+-0".
    let v = (x * 100.0).round() + 0.0;
    if v < 0.0 {
        format!("\u{2212}{}", -v)
    } else {
        format!("+{v}")
    }
}

/// "+97% [+90, +104]", with " not significant" when the interval holds zero, or
/// "+49% (no interval)" when there is none.
pub fn fmt_rel(rel: f64, low: Option<f64>, high: Option<f64>, significant: bool) -> String {
    let (Some(low), Some(high)) = (low, high) else {
        return format!("{}% (no interval)", pct(rel));
    };
    let mut s = format!("{}% [{}, {}]", pct(rel), pct(low), pct(high));
    if !significant {
        s.push_str(" not significant");
    }
    s
}

/// One sentence for `path` against `baseline` over every cell and figure.
pub fn verdict_line(path: &str, baseline: &str, diffs: &[Diff]) -> String {
    let parts: Vec<String> = diffs
        .iter()
        .filter(|d| d.path == path && d.figure != Figure::FramesPerBlock)
        .map(|d| {
            format!(
                "{} {} {}",
                super::cell_label(d.test, d.block, d.clients),
                d.figure.label(),
                fmt_rel(d.rel, d.low, d.high, d.significant)
            )
        })
        .collect();
    if parts.is_empty() {
        return format!(
            "{path} vs {baseline}: not enough repetitions to compare (need 1 per path, 3 for an interval)"
        );
    }
    let why = diffs
        .iter()
        .filter(|d| d.path == path)
        .find_map(|d| d.no_interval.as_deref())
        .map(|w| format!(" (no interval: {w})"))
        .unwrap_or_default();
    format!("{path} vs {baseline}: {}{why}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_engine::compare::TestKind;

    #[test]
    fn relative_difference_text() {
        let cases = [
            (0.97, Some(0.90), Some(1.04), true, "+97% [+90, +104]"),
            (
                -0.31,
                Some(-0.35),
                Some(-0.27),
                true,
                "\u{2212}31% [\u{2212}35, \u{2212}27]",
            ),
            (
                0.03,
                Some(-0.02),
                Some(0.08),
                false,
                "+3% [\u{2212}2, +8] not significant",
            ),
            // Two runs per path: the relative difference, no made-up interval.
            (0.49, None, None, false, "+49% (no interval)"),
            (
                -0.004,
                Some(-0.73),
                Some(2.65),
                false,
                "+0% [\u{2212}73, +265] not significant",
            ),
        ];
        for (rel, low, high, sig, want) in cases {
            assert_eq!(fmt_rel(rel, low, high, sig), want);
        }
    }

    #[test]
    fn verdict_joins_cells_and_figures() {
        let d = |figure, rel: f64, sig| Diff {
            path: "jumbo".into(),
            baseline: "std".into(),
            test: TestKind::Stream,
            block: 8192,
            clients: 1,
            figure,
            rel,
            low: Some(rel - 0.05),
            high: Some(rel + 0.05),
            significant: sig,
            method: "log-ratio-welch".into(),
            no_interval: None,
        };
        let diffs = [
            d(Figure::Goodput, 0.97, true),
            d(Figure::CpuPerMib, -0.02, false),
            d(Figure::FramesPerBlock, -0.8, true),
        ];
        assert_eq!(
            verdict_line("jumbo", "std", &diffs),
            "jumbo vs std: stream 8K goodput +97% [+92, +102]; stream 8K CPU per MiB \u{2212}2% [\u{2212}7, +3] not significant"
        );
        assert!(verdict_line("other", "std", &diffs).contains("not enough repetitions"));
    }
}
