//! Comparing two samples (path A against path B) with 95% intervals.

use serde::Serialize;

use crate::summary::mean_var;
use crate::tdist::t_quantile;

/// Fewest values per sample for which any 95% interval is given: with 2 the t
/// quantile is 12.7 and the interval says nothing but "too few runs".
pub const MIN_N_FOR_INTERVAL: usize = 3;

/// How [`rel_diff`] computed its interval (or why there is none).
pub const METHOD_LOG_RATIO: &str = "log-ratio-welch";
pub const METHOD_PAIRED_LOG_RATIO: &str = "paired-log-ratio";
pub const METHOD_NONE: &str = "none";

/// Relative difference of sample B against sample A, with its 95% confidence interval
/// when the samples allow one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelDiff {
    /// mean_b / mean_a - 1: +0.05 means B is 5% higher than A.
    pub rel: f64,
    /// 95% confidence interval of `rel`; `None` with the reason in `no_interval`.
    /// Always above -1 (a ratio of positive means is positive).
    pub low: Option<f64>,
    pub high: Option<f64>,
    /// The interval exists and excludes 0.
    pub significant: bool,
    /// How the interval was computed: [`METHOD_LOG_RATIO`] or [`METHOD_NONE`].
    pub method: &'static str,
    /// Why there is no interval.
    pub no_interval: Option<String>,
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
/// rel = m_b / m_a - 1. The interval is built for ln(m_b / m_a), where a ratio of
/// positive means is symmetric and unbounded, and mapped back, so it can never claim
/// that B may be below -100% of A (the old interval, built on the linear scale, gave
/// "+49% [-409, +507]" for two runs per path). The standard error of ln m is s/(m√n)
/// (delta method), the degrees of freedom Welch–Satterthwaite's:
///
/// ```text
/// c_a = s_a² / (n_a m_a²),  c_b = s_b² / (n_b m_b²)
/// df  = (c_a + c_b)² / (c_a²/(n_a-1) + c_b²/(n_b-1))
/// CI  = exp(ln(m_b/m_a) ± t(0.975, df) · √(c_a + c_b)) - 1
/// ```
///
/// No interval (`low`/`high` `None`, the reason in `no_interval`) with fewer than
/// [`MIN_N_FOR_INTERVAL`] values in either sample, or when a value is not positive (a
/// ratio of such quantities has no log scale). `None` when a sample is empty, holds a
/// non-finite value, or mean_a is not positive.
pub fn rel_diff(a: &[f64], b: &[f64]) -> Option<RelDiff> {
    let (na, ma, va) = mean_var(a)?;
    let (nb, mb, vb) = mean_var(b)?;
    if ma <= 0.0 {
        return None;
    }
    let rel = mb / ma - 1.0;
    let none = |why: String| RelDiff {
        rel,
        low: None,
        high: None,
        significant: false,
        method: METHOD_NONE,
        no_interval: Some(why),
    };
    if na < MIN_N_FOR_INTERVAL || nb < MIN_N_FOR_INTERVAL {
        return Some(none(format!(
            "{na} and {nb} repetitions: an interval needs at least {MIN_N_FOR_INTERVAL} per path"
        )));
    }
    if a.iter().chain(b).any(|x| *x <= 0.0) {
        return Some(none("a value is not positive: no ratio interval".into()));
    }
    let (na, nb) = (na as f64, nb as f64);
    let c_a = va / (na * ma * ma);
    let c_b = vb / (nb * mb * mb);
    let (half, _df) = interval(c_a, na, c_b, nb);
    let centre = (mb / ma).ln();
    let (low, high) = ((centre - half).exp() - 1.0, (centre + half).exp() - 1.0);
    Some(RelDiff {
        rel,
        low: Some(low),
        high: Some(high),
        significant: low > 0.0 || high < 0.0,
        method: METHOD_LOG_RATIO,
        no_interval: None,
    })
}

/// Relative difference of b against a over paired values (`a[i]` and `b[i]` measured
/// on the same unit: the same node pair over two networks), with a 95% interval.
///
/// Each pair gives one log ratio d_i = ln(b_i / a_i); the units' own level (a slow
/// node pair is slow on both networks) cancels, which an unpaired comparison would
/// count as noise. rel is the geometric mean of the ratios less 1, and the interval
/// is the Student t interval of the mean log ratio mapped back:
///
/// ```text
/// rel = exp(mean d) - 1,  CI = exp(mean d ± t(0.975, n-1) · s_d / √n) - 1
/// ```
///
/// No interval (the reason in `no_interval`) with fewer than [`MIN_N_FOR_INTERVAL`]
/// pairs. `None` when the slices are empty or of different lengths, or a value is
/// not finite or not positive (a ratio of such values has no log scale: leave such
/// pairs out and say so).
pub fn paired_rel_diff(a: &[f64], b: &[f64]) -> Option<RelDiff> {
    if a.len() != b.len() || a.iter().chain(b).any(|x| !x.is_finite() || *x <= 0.0) {
        return None;
    }
    let logs: Vec<f64> = a.iter().zip(b).map(|(x, y)| (y / x).ln()).collect();
    let (n, mean, var) = mean_var(&logs)?;
    let rel = mean.exp() - 1.0;
    if n < MIN_N_FOR_INTERVAL {
        return Some(RelDiff {
            rel,
            low: None,
            high: None,
            significant: false,
            method: METHOD_NONE,
            no_interval: Some(format!(
                "{n} pairs: an interval needs at least {MIN_N_FOR_INTERVAL}"
            )),
        });
    }
    let half = t_quantile(0.975, (n - 1) as f64) * (var / n as f64).sqrt();
    let (low, high) = ((mean - half).exp() - 1.0, (mean + half).exp() - 1.0);
    Some(RelDiff {
        rel,
        low: Some(low),
        high: Some(high),
        significant: low > 0.0 || high < 0.0,
        method: METHOD_PAIRED_LOG_RATIO,
        no_interval: None,
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
        // The formula of the doc comment evaluated independently in Python, with the
        // t quantile from numerical integration of the t density (checked against
        // scipy's t.ppf(0.975, 4) = 2.7764451051977987 to 1e-14). The earlier
        // linear-scale interval [+3.72%, +5.37%] differs only in the 4th digit here:
        // the two agree when runs are tight and part when they are not.
        let r = rel_diff(&A, &B).unwrap();
        assert!(close(r.rel, 0.045_456_155_890_168_49), "{r:?}");
        assert!(close(r.low.unwrap(), 0.037_260_030_589_002_51), "{r:?}");
        assert!(close(r.high.unwrap(), 0.053_717_044_575_607_89), "{r:?}");
        assert!(r.significant);
        assert_eq!(r.method, METHOD_LOG_RATIO);

        // Noisy, overlapping samples: not significant.
        let r = rel_diff(
            &[100.0, 120.0, 90.0, 110.0],
            &[105.0, 95.0, 125.0, 115.0, 100.0],
        )
        .unwrap();
        assert!(close(r.rel, 0.028_571_428_571_428_47), "{r:?}");
        assert!(close(r.low.unwrap(), -0.151_114_476_410_432_4), "{r:?}");
        assert!(close(r.high.unwrap(), 0.246_291_937_221_193_36), "{r:?}");
        assert!(!r.significant);

        // B lower than A: negative and significant.
        let r = rel_diff(&B, &A).unwrap();
        assert!(
            r.rel < 0.0 && r.high.unwrap() < 0.0 && r.significant,
            "{r:?}"
        );
    }

    #[test]
    fn intervals_respect_the_quantity() {
        // (a, b, interval given): wild runs, few runs, non-positive values. A ratio
        // interval never reaches -100% and never exists below 3 runs per path.
        let cases: [(&[f64], &[f64], bool); 6] = [
            // Seed of issue 12: two runs each, one of them a collapse.
            (&[9.4e9, 1.0e9], &[9.3e9, 9.5e9], false),
            (&[9.4e9, 9.3e9, 9.5e9], &[9.3e9, 9.5e9], false),
            (&[9.4e9, 0.2e9, 9.5e9], &[0.1e9, 9.3e9, 9.5e9], true),
            (&[1.0, 50.0, 2.0], &[100.0, 1.0, 3.0, 2.0], true),
            (&[1.0, 2.0, 3.0], &[0.0, 1.0, 2.0], false),
            (&[5.0, 5.0, 5.0], &[6.0, 6.0, 6.0], true),
        ];
        for (a, b, given) in cases {
            let r = rel_diff(a, b).unwrap();
            assert_eq!(r.low.is_some(), given, "{a:?} {b:?}: {r:?}");
            assert_eq!(r.high.is_some(), given, "{r:?}");
            if let (Some(l), Some(h)) = (r.low, r.high) {
                assert!(l > -1.0 && l <= r.rel && r.rel <= h, "{r:?}");
                assert_eq!(r.method, METHOD_LOG_RATIO);
                assert!(r.no_interval.is_none());
            } else {
                assert_eq!(r.method, METHOD_NONE);
                assert!(!r.significant);
                assert!(r.no_interval.as_ref().is_some_and(|w| !w.is_empty()));
            }
        }
    }

    #[test]
    fn paired_known_values() {
        // The doc comment's formula evaluated in Python with t(0.975, 4) =
        // 2.7764451051977987: block p50 (µs) of five node pairs at 1500 and at 9000.
        let a = [48.0, 47.0, 48.0, 50.0, 46.0];
        let b = [31.0, 30.0, 31.0, 29.0, 34.0];
        let r = paired_rel_diff(&a, &b).unwrap();
        assert!(close(r.rel, -0.352_137_745_888_352_8), "{r:?}");
        assert!(close(r.low.unwrap(), -0.418_036_461_935_590_5), "{r:?}");
        assert!(close(r.high.unwrap(), -0.278_776_980_257_874_9), "{r:?}");
        assert!(r.significant);
        assert_eq!(r.method, METHOD_PAIRED_LOG_RATIO);
        // Pairing removes the units' own level: pairs at very different levels, each
        // 20% lower, give exactly -20% with no spread, where an unpaired comparison
        // of the same values finds nothing significant.
        let a = [10.0, 100.0, 1000.0];
        let b = [8.0, 80.0, 800.0];
        let r = paired_rel_diff(&a, &b).unwrap();
        assert!(close(r.rel, -0.2) && close(r.low.unwrap(), -0.2), "{r:?}");
        assert!(r.significant);
        assert!(!rel_diff(&a, &b).unwrap().significant);
        // Two pairs: the ratio, no interval.
        let r = paired_rel_diff(&[2.0, 4.0], &[1.0, 2.0]).unwrap();
        assert!(
            close(r.rel, -0.5) && r.low.is_none() && !r.significant,
            "{r:?}"
        );
        assert_eq!(r.method, METHOD_NONE);
        assert!(r.no_interval.is_some());
        // Rejected: unequal lengths, empty, a zero (no block answered), NaN.
        assert_eq!(paired_rel_diff(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(paired_rel_diff(&[], &[]), None);
        assert_eq!(paired_rel_diff(&[1.0, 2.0], &[0.0, 2.0]), None);
        assert_eq!(paired_rel_diff(&[1.0, f64::NAN], &[1.0, 2.0]), None);
    }

    #[test]
    fn rejected_inputs() {
        assert_eq!(welch(&[1.0], &B), None);
        assert_eq!(welch(&A, &[]), None);
        assert_eq!(rel_diff(&[], &B), None);
        assert_eq!(rel_diff(&[-1.0, 1.0], &B), None);
        assert_eq!(rel_diff(&A, &[1.0, f64::NAN]), None);
    }

    #[test]
    fn zero_variance_collapses_the_interval() {
        assert_eq!(
            welch(&[2.0, 2.0], &[3.0, 3.0, 3.0]),
            Some((1.0, 1.0, 1.0, 3.0))
        );
        let r = rel_diff(&[2.0, 2.0, 2.0], &[3.0, 3.0, 3.0]).unwrap();
        assert!(close(r.rel, 0.5), "{r:?}");
        assert!(
            close(r.low.unwrap(), 0.5) && close(r.high.unwrap(), 0.5),
            "{r:?}"
        );
        assert!(r.significant);
        // One constant sample: df is the other sample's n - 1.
        let (_, _, _, df) = welch(&[2.0, 2.0], &[1.0, 2.0, 3.0]).unwrap();
        assert!(close(df, 2.0));
    }
}
