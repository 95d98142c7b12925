//! Summary of repeated runs: centre, spread and the 95% interval of the mean.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tdist::t_quantile;

/// Summary statistics of a sample, with a 95% confidence interval of its centre when
/// the sample allows one (see [`summarize`] for the method).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// Sample standard deviation (divisor n - 1); 0 when n < 2.
    pub stddev: f64,
    pub min: f64,
    pub max: f64,
    /// The 95% interval; `None` with fewer than 3 values (`ci95_method` "none" and the
    /// reason in `ci95_note`).
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
    /// The larger distance from the mean to an end of the interval, as a percentage of
    /// |mean|: the netperf-style "within ±x%" figure. `None` without an interval or
    /// with a mean of 0.
    pub ci95_half_width_pct: Option<f64>,
    /// How the interval was computed.
    pub ci95_method: CiMethod,
    /// Why there is no interval, or why log-t was used.
    pub ci95_note: Option<String>,
}

/// How a 95% interval was computed (its JSON names are "student-t", "log-t", "none").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CiMethod {
    /// Student t interval of the mean.
    StudentT,
    /// The t interval of the log values mapped back: an interval of the geometric
    /// mean, for positive values whose t interval would reach 0 or below.
    LogT,
    /// No interval (fewer than [`MIN_N_FOR_CI`] values).
    None,
}

impl CiMethod {
    /// Its name as the documents spell it.
    pub fn name(self) -> &'static str {
        match self {
            CiMethod::StudentT => "student-t",
            CiMethod::LogT => "log-t",
            CiMethod::None => "none",
        }
    }
}

impl std::fmt::Display for CiMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Fewest values for which [`summarize`] gives an interval.
pub const MIN_N_FOR_CI: usize = 3;

/// The 95% interval of a sample of `n` ≥ 2 values: Student t of the mean; for
/// positive values whose t interval would reach 0 or below (a throughput or a latency
/// cannot), the t interval of the log values mapped back (an interval of the
/// geometric mean, which is never ≤ 0).
fn interval(xs: &[f64], n: usize, mean: f64, stddev: f64) -> (f64, f64, CiMethod, Option<String>) {
    let t = t_quantile(0.975, (n - 1) as f64);
    let half = t * stddev / (n as f64).sqrt();
    let positive = xs.iter().all(|x| *x > 0.0);
    if !positive || mean - half > 0.0 {
        return (mean - half, mean + half, CiMethod::StudentT, None);
    }
    let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    let (_, lm, lv) = mean_var(&logs).unwrap_or((n, 0.0, 0.0));
    let lhalf = t * lv.sqrt() / (n as f64).sqrt();
    (
        (lm - lhalf).exp(),
        (lm + lhalf).exp(),
        CiMethod::LogT,
        Some(format!(
            "the t interval of the mean reached {:.3e}, below 0 for a positive quantity: the interval is of the geometric mean, on a log scale",
            mean - half
        )),
    )
}

/// Summarise a sample. `None` for an empty sample or one holding a NaN or an infinity:
/// such values are rejected, not skipped, so a broken run cannot silently shrink `n`.
/// With fewer than [`MIN_N_FOR_CI`] values there is no interval: with 2 the t quantile
/// is 12.7, and the interval of a throughput would reach far below zero.
pub fn summarize(xs: &[f64]) -> Option<Summary> {
    let (n, mean, var) = mean_var(xs)?;
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let stddev = var.sqrt();
    let (ci95_low, ci95_high, method, note) = if n < MIN_N_FOR_CI {
        (
            None,
            None,
            CiMethod::None,
            Some(format!(
                "{n} value{}: a 95% interval needs at least {MIN_N_FOR_CI}",
                if n == 1 { "" } else { "s" }
            )),
        )
    } else {
        let (l, h, m, note) = interval(xs, n, mean, stddev);
        (Some(l), Some(h), m, note)
    };
    let ci95_half_width_pct = match (ci95_low, ci95_high) {
        (Some(l), Some(h)) if mean != 0.0 => {
            Some((mean - l).max(h - mean).max(0.0) / mean.abs() * 100.0)
        }
        _ => None,
    };
    Some(Summary {
        n,
        mean,
        median: percentile(&sorted, 50.0)?,
        stddev,
        min: *sorted.first()?,
        max: *sorted.last()?,
        ci95_low,
        ci95_high,
        ci95_half_width_pct,
        ci95_method: method,
        ci95_note: note,
    })
}

/// Count, mean and sample variance (n - 1; 0 for one value) of finite, non-empty data.
pub(crate) fn mean_var(xs: &[f64]) -> Option<(usize, f64, f64)> {
    if xs.is_empty() || !xs.iter().all(|x| x.is_finite()) {
        return None;
    }
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n as f64;
    // Two-pass: subtract the mean first, so large offsets (bits/s ~ 1e10) keep precision.
    let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    let var = if n < 2 { 0.0 } else { ss / (n - 1) as f64 };
    Some((n, mean, var))
}

/// The `p`th percentile (0 ≤ p ≤ 100) of data sorted in ascending order, by linear
/// interpolation between closest ranks: rank = p/100 · (n - 1) (numpy's default, R type 7).
///
/// `None` when `sorted` is empty or holds a non-finite value, or `p` is outside 0..=100
/// or NaN. The data is not checked for order; unsorted input gives a meaningless result.
pub fn percentile(sorted: &[f64], p: f64) -> Option<f64> {
    if !(0.0..=100.0).contains(&p) || !sorted.iter().all(|x| x.is_finite()) {
        return None;
    }
    let rank = p / 100.0 * (sorted.len().checked_sub(1)? as f64);
    let below = rank.floor() as usize;
    let lo = *sorted.get(below)?;
    let Some(&hi) = sorted.get(below + 1) else {
        return Some(lo);
    };
    Some(lo + (hi - lo) * (rank - below as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= 1e-9 * want.abs().max(1.0)
    }

    #[test]
    fn known_sample() {
        // numpy/scipy 1.17.1: mean, std(ddof=1), mean ± t.ppf(0.975, 4) * sd / sqrt(5).
        let s = summarize(&[10.0, 12.0, 9.0, 11.0, 13.0]).unwrap();
        assert_eq!(
            (s.n, s.mean, s.median, s.min, s.max),
            (5, 11.0, 11.0, 9.0, 13.0)
        );
        assert!(close(s.stddev, 1.581_138_830_084_189_8), "{s:?}");
        assert!(close(s.ci95_low.unwrap(), 9.036_756_838_522_443), "{s:?}");
        assert!(close(s.ci95_high.unwrap(), 12.963_243_161_477_557), "{s:?}");
        assert!(
            close(s.ci95_half_width_pct.unwrap(), 17.847_665_104_341_427),
            "{s:?}"
        );
        assert_eq!(s.ci95_method, CiMethod::StudentT);
    }

    #[test]
    #[allow(clippy::float_cmp)] // exact: copies of inputs, zeros and a midpoint of integers
    fn small_and_degenerate_samples() {
        assert_eq!(summarize(&[]), None);
        // (sample, interval given, method)
        let cases: [(&[f64], bool, &str); 6] = [
            (&[9.41e9], false, "none"),
            // Two runs: t(0.975, 1) = 12.7 would put the lower end at -11.7 Gbit/s.
            (&[9.4e9, 1.0e9], false, "none"),
            (&[0.0, 0.0, 0.0], true, "student-t"),
            (&[-1.0, 1.0, 0.0], true, "student-t"),
            // Positive, wild: the t interval of the mean would go below 0.
            (&[9.4e9, 0.1e9, 0.2e9], true, "log-t"),
            (&[9.4e9, 9.3e9, 9.5e9], true, "student-t"),
        ];
        for (xs, given, method) in cases {
            let s = summarize(xs).unwrap();
            assert_eq!(s.ci95_low.is_some(), given, "{xs:?}: {s:?}");
            assert_eq!(s.ci95_method.name(), method, "{xs:?}: {s:?}");
            assert_eq!(s.ci95_note.is_some(), method != "student-t", "{s:?}");
            if xs.iter().all(|x| *x > 0.0) {
                assert!(s.ci95_low.is_none_or(|l| l > 0.0), "{s:?}");
            }
        }
        let flat = summarize(&[0.0, 0.0, 0.0]).unwrap();
        assert_eq!((flat.mean, flat.ci95_half_width_pct), (0.0, None));
        let even = summarize(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(even.median, 2.5);
    }

    #[test]
    fn non_finite_values_are_rejected() {
        assert_eq!(summarize(&[1.0, f64::NAN, 3.0]), None);
        assert_eq!(summarize(&[1.0, f64::INFINITY]), None);
        assert_eq!(percentile(&[1.0, f64::NAN], 50.0), None);
    }

    #[test]
    fn large_offsets_keep_precision() {
        let s = summarize(&[1e10 + 1.0, 1e10 + 2.0, 1e10 + 3.0]).unwrap();
        assert!(close(s.stddev, 1.0), "{s:?}");
    }

    #[test]
    fn percentiles() {
        // numpy 1.x/2.x np.percentile([1, 2, 3, 4, 10], p) (linear method).
        let data = [1.0, 2.0, 3.0, 4.0, 10.0];
        let cases = [
            (0.0, 1.0),
            (25.0, 2.0),
            (50.0, 3.0),
            (90.0, 7.6),
            (99.0, 9.76),
            (100.0, 10.0),
        ];
        for (p, want) in cases {
            let got = percentile(&data, p).unwrap();
            assert!(close(got, want), "p{p}: {got} != {want}");
        }
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[7.0], 0.0), Some(7.0));
        assert_eq!(percentile(&[7.0], 99.9), Some(7.0));
        assert_eq!(percentile(&[7.0], 100.0), Some(7.0));
        for p in [-0.1, 100.1, f64::NAN] {
            assert_eq!(percentile(&data, p), None, "p = {p}");
        }
    }

    #[test]
    fn serialises() {
        let json = serde_json::to_string(&summarize(&[1.0, 2.0]).unwrap()).unwrap();
        assert!(json.contains(r#""ci95_method":"none""#), "{json}");
        assert!(
            json.contains(r#""n":2"#) && json.contains(r#""mean":1.5"#),
            "{json}"
        );
    }
}
