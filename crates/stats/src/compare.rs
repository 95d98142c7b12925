//! Comparing two samples (path A against path B) with 95% intervals.

use serde::Serialize;

use crate::summary::mean_var;
use crate::t_quantile;

/// Relative difference of sample B against sample A, with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RelDiff {
    /// (mean_b - mean_a) / mean_a: +0.05 means B is 5% higher than A.
    pub rel: f64,
    /// 95% confidence interval of `rel`.
    pub low: f64,
    pub high: f64,
    /// The interval excludes 0: the difference is not explained by run-to-run noise.
    pub significant: bool,
    /// How the interval was computed ("welch-delta", see [`rel_diff`]).
    pub method: &'static str,
}

/// Welch's t interval for mean_b - mean_a (variances not assumed equal).
///
/// Returns `(diff, low, high, df)`: diff = mean_b - mean_a, the 95% interval
/// diff ± t(0.975, df) · √(s_a²/n_a + s_b²/n_b), and the Welch–Satterthwaite degrees of
/// freedom df = (s_a²/n_a + s_b²/n_b)² / ((s_a²/n_a)²/(n_a-1) + (s_b²/n_b)²/(n_b-1)).
///
/// `None` if either sample has fewer than 2 values or a non-finite one. When both samples
/// have zero variance the interval collapses to diff and df (0/0 in the formula) is
/// reported as n_a + n_b - 2.
pub fn welch(a: &[f64], b: &[f64]) -> Option<(f64, f64, f64, f64)> {
    let (na, ma, va) = two_or_more(a)?;
    let (nb, mb, vb) = two_or_more(b)?;
    let diff = mb - ma;
    let (half, df) = interval(va / na, na, vb / nb, nb);
    Some((diff, diff - half, diff + half, df))
}

/// Relative difference of b against a with a 95% confidence interval.
///
/// rel = m_b / m_a - 1. Its standard error is the delta-method (first-order Taylor)
/// expansion of the ratio m_b / m_a, which, unlike Welch's interval for the difference
/// simply divided by m_a, also carries the uncertainty of the denominator m_a (what
/// Fieller's interval treats exactly):
///
/// ```text
/// c_b = s_b² / (n_b m_a²)            (noise of B, scaled by A)
/// c_a = m_b² s_a² / (n_a m_a⁴)       (noise of A, through the denominator)
/// se  = √(c_a + c_b)
/// df  = (c_a + c_b)² / (c_a²/(n_a-1) + c_b²/(n_b-1))     (Welch–Satterthwaite)
/// CI  = rel ± t(0.975, df) · se
/// ```
///
/// When m_b = m_a this is Welch's interval divided by m_a. The first-order expansion is
/// good while A's interval stays well clear of 0 (half width under ~10-20% of m_a, which
/// repeated throughput and latency runs give); it is too narrow when m_a is barely
/// distinguishable from 0.
///
/// `None` if either sample has fewer than 2 values or a non-finite one, or mean_a is 0.
/// With zero variance in both samples the interval collapses to `rel`.
pub fn rel_diff(a: &[f64], b: &[f64]) -> Option<RelDiff> {
    let (na, ma, va) = two_or_more(a)?;
    let (nb, mb, vb) = two_or_more(b)?;
    if ma == 0.0 {
        return None;
    }
    let rel = mb / ma - 1.0;
    let c_a = mb * mb * va / (na * ma.powi(4));
    let c_b = vb / (nb * ma * ma);
    let (half, _df) = interval(c_a, na, c_b, nb);
    let (low, high) = (rel - half, rel + half);
    Some(RelDiff {
        rel,
        low,
        high,
        significant: low > 0.0 || high < 0.0,
        method: "welch-delta",
    })
}

/// Count (as f64), mean and sample variance of a sample with at least two finite values.
fn two_or_more(xs: &[f64]) -> Option<(f64, f64, f64)> {
    let (n, mean, var) = mean_var(xs)?;
    (n >= 2).then_some((n as f64, mean, var))
}

/// Half width of the 95% interval and Welch–Satterthwaite df for a sum of two variance
/// components `c_a`, `c_b` estimated from samples of `na`, `nb` values.
fn interval(c_a: f64, na: f64, c_b: f64, nb: f64) -> (f64, f64) {
    let total = c_a + c_b;
    if total == 0.0 {
        return (0.0, na + nb - 2.0);
    }
    let df = total * total / (c_a * c_a / (na - 1.0) + c_b * c_b / (nb - 1.0));
    (t_quantile(0.975, df) * total.sqrt(), df)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs().max(1e-3)
    }

    // Gbit/s of six runs over path A and five over path B.
    const A: [f64; 6] = [9.41, 9.38, 9.44, 9.40, 9.39, 9.43];
    const B: [f64; 5] = [9.80, 9.91, 9.75, 9.88, 9.84];

    #[test]
    fn welch_matches_scipy() {
        // scipy 1.17.1: r = stats.ttest_ind(B, A, equal_var=False);
        // r.confidence_interval(0.95), r.df.
        let (diff, low, high, df) = welch(&A, &B).unwrap();
        assert!(close(diff, 0.427_666_666_666_668_86), "{diff}");
        assert!(close(low, 0.350_215_780_171_888_2), "{low}");
        assert!(close(high, 0.505_117_553_161_449_5), "{high}");
        assert!(close(df, 4.888_880_801_075_842), "{df}");
    }

    #[test]
    fn rel_diff_known_values() {
        // numpy + scipy.stats.t.ppf 1.17.1, the formula of the doc comment evaluated
        // independently in Python.
        let r = rel_diff(&A, &B).unwrap();
        assert!(close(r.rel, 0.045_456_155_890_168_49), "{r:?}");
        assert!(close(r.low, 0.037_227_733_851_704_93), "{r:?}");
        assert!(close(r.high, 0.053_684_577_928_632_06), "{r:?}");
        assert!(r.significant);
        assert_eq!(r.method, "welch-delta");

        // Noisy, overlapping samples: not significant.
        let r = rel_diff(
            &[100.0, 120.0, 90.0, 110.0],
            &[105.0, 95.0, 125.0, 115.0, 100.0],
        )
        .unwrap();
        assert!(close(r.rel, 0.028_571_428_571_428_47), "{r:?}");
        assert!(close(r.low, -0.168_916_153_075_622_74), "{r:?}");
        assert!(close(r.high, 0.226_059_010_218_479_68), "{r:?}");
        assert!(!r.significant);

        // B lower than A: negative and significant.
        let r = rel_diff(&B, &A).unwrap();
        assert!(r.rel < 0.0 && r.high < 0.0 && r.significant, "{r:?}");
    }

    #[test]
    fn rejected_inputs() {
        assert_eq!(welch(&[1.0], &B), None);
        assert_eq!(welch(&A, &[]), None);
        assert_eq!(rel_diff(&[1.0], &B), None);
        assert_eq!(rel_diff(&[-1.0, 1.0], &B), None);
        assert_eq!(rel_diff(&A, &[1.0, f64::NAN]), None);
    }

    #[test]
    fn zero_variance_collapses_the_interval() {
        assert_eq!(
            welch(&[2.0, 2.0], &[3.0, 3.0, 3.0]),
            Some((1.0, 1.0, 1.0, 3.0))
        );
        let r = rel_diff(&[2.0, 2.0], &[3.0, 3.0]).unwrap();
        assert_eq!((r.rel, r.low, r.high, r.significant), (0.5, 0.5, 0.5, true));
        // One constant sample: df is the other sample's n - 1.
        let (_, _, _, df) = welch(&[2.0, 2.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!(close(df, 2.0));
    }
}
