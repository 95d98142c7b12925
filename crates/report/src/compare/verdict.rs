//! Plain verdict sentences: "jumbo vs std: stream 8K goodput +97% [+90, +104]; ...".

use super::{Diff, Figure};

fn pct(x: f64) -> String {
    let v = (x * 100.0).round();
    if v < 0.0 {
        format!("\u{2212}{}", -v)
    } else {
        format!("+{v}")
    }
}

/// "+97% [+90, +104]", with " not significant" when the interval holds zero.
pub fn fmt_rel(rel: f64, low: f64, high: f64, significant: bool) -> String {
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
            "{path} vs {baseline}: not enough repetitions to compare (need 2 per path)"
        );
    }
    format!("{path} vs {baseline}: {}", parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_engine::compare::TestKind;

    #[test]
    fn relative_difference_text() {
        assert_eq!(fmt_rel(0.97, 0.90, 1.04, true), "+97% [+90, +104]");
        assert_eq!(
            fmt_rel(-0.31, -0.35, -0.27, true),
            "\u{2212}31% [\u{2212}35, \u{2212}27]"
        );
        assert_eq!(
            fmt_rel(0.03, -0.02, 0.08, false),
            "+3% [\u{2212}2, +8] not significant"
        );
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
            low: rel - 0.05,
            high: rel + 0.05,
            significant: sig,
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
