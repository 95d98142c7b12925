//! Block latency histograms: one HDR histogram per client thread (recorded in ns,
//! 3 significant digits, 1 ns to 100 s; larger values are clamped to 100 s), merged at
//! the end into a summary that keeps every non-empty bucket.

use hdrhistogram::Histogram;
use mtuperf_proto::msg::rr::Latency;

const HIGHEST_NS: u64 = 100_000_000_000;

/// A histogram of 1 ns to 100 s at 3 significant digits.
#[allow(clippy::expect_used)]
pub fn new_histogram() -> Histogram<u64> {
    // Constant bounds that satisfy hdrhistogram's rules (low >= 1, high >= 2 * low,
    // sigfig <= 5): construction cannot fail.
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("constant, valid histogram bounds")
}

pub fn record(h: &mut Histogram<u64>, ns: u64) {
    h.saturating_record(ns.clamp(1, HIGHEST_NS));
}

/// The summary of `h` that crosses the wire and goes into the documents: with no
/// block recorded, a count of 0 and no figure (None), never 0 ns.
pub fn from_histogram(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency {
            unit: "ns".into(),
            ..Latency::default()
        };
    }
    Latency {
        unit: "ns".into(),
        count: h.len(),
        min: Some(h.min()),
        mean: Some(h.mean()),
        p50: Some(h.value_at_quantile(0.50)),
        p90: Some(h.value_at_quantile(0.90)),
        p99: Some(h.value_at_quantile(0.99)),
        p999: Some(h.value_at_quantile(0.999)),
        max: Some(h.max()),
        buckets: h
            .iter_recorded()
            .map(|v| [v.value_iterated_to(), v.count_at_value()])
            .collect(),
    }
}

/// The latency of the union of several runs: every bucket of each recorded again into
/// one histogram of the same bounds and precision (each bucket's value falls back into
/// its own bucket), so the percentiles are the union's, not averages of percentiles.
/// Min and max are the exact extremes of the parts.
pub fn merge<'a>(parts: impl IntoIterator<Item = &'a Latency>) -> Latency {
    let mut h = new_histogram();
    let (mut min, mut max): (Option<u64>, Option<u64>) = (None, None);
    for l in parts {
        for &[value, count] in &l.buckets {
            let _ = h.record_n(value.clamp(1, HIGHEST_NS), count);
        }
        min = min.into_iter().chain(l.min).min();
        max = max.into_iter().chain(l.max).max();
    }
    let mut merged = from_histogram(&h);
    if merged.count > 0 {
        merged.min = min.or(merged.min);
        merged.max = max.or(merged.max);
    }
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_a_known_distribution() {
        let mut a = new_histogram();
        let mut b = new_histogram();
        for i in 1..=500u64 {
            record(&mut a, i * 1000);
        }
        for i in 501..=1000u64 {
            record(&mut b, i * 1000);
        }
        a.add(&b).unwrap();
        let l = from_histogram(&a);
        assert_eq!(l.count, 1000);
        let (p50, p99) = (l.p50.unwrap(), l.p99.unwrap());
        assert!((p50 as f64 - 500_000.0).abs() / 500_000.0 < 0.002, "{p50}");
        assert!((p99 as f64 - 990_000.0).abs() / 990_000.0 < 0.002, "{p99}");
        assert_eq!(l.buckets.iter().map(|b| b[1]).sum::<u64>(), 1000);
        assert!(l.min.unwrap() <= 1000 && l.max.unwrap() >= 999_000);
    }

    #[test]
    fn merged_percentiles_are_the_unions() {
        // Host one answers fast, host two slowly: the union's p50 sits at the edge
        // between them and its p99 in the slow half, unlike the average of the two.
        let (mut a, mut b, mut all) = (new_histogram(), new_histogram(), new_histogram());
        for i in 1..=900u64 {
            record(&mut a, i * 100);
            record(&mut all, i * 100);
        }
        for i in 1..=100u64 {
            record(&mut b, 1_000_000 + i * 10_000);
            record(&mut all, 1_000_000 + i * 10_000);
        }
        let m = merge([&from_histogram(&a), &from_histogram(&b)]);
        let u = from_histogram(&all);
        assert_eq!(m.count, 1000);
        assert_eq!((m.p50, m.p90, m.p99, m.p999), (u.p50, u.p90, u.p99, u.p999));
        assert_eq!(m.buckets, u.buckets);
        assert_eq!((m.min, m.max), (Some(100), u.max));
        assert_eq!(merge([]).count, 0);
        // A part with no block answered adds nothing, and no zero minimum.
        let none = from_histogram(&new_histogram());
        let m2 = merge([&from_histogram(&a), &none]);
        assert_eq!((m2.count, m2.min), (900, Some(100)));
    }

    #[test]
    fn empty_histogram_gives_no_latency_not_zero() {
        let l = from_histogram(&new_histogram());
        assert_eq!(l.count, 0);
        assert_eq!(
            (l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max),
            (None, None, None, None, None, None, None)
        );
        let json = serde_json::to_value(&l).unwrap();
        assert!(json["p99"].is_null() && json["mean"].is_null(), "{json}");
    }
}
