//! Knee of a load sweep: the last load that still bought throughput.

/// Minimum relative throughput gain of one load step for that step to count as scaling.
pub const KNEE_MIN_GAIN: f64 = 0.10;

/// Index of the knee of a load sweep, given `(load, throughput, p99)` points in order of
/// increasing load.
///
/// The rule, exactly:
///
/// 1. Step i (from point i-1 to point i) *gains* when
///    `throughput[i] >= (1 + KNEE_MIN_GAIN) * throughput[i-1]` and `throughput[i] > 0`
///    (so any step up from zero throughput gains).
/// 2. The candidate k is the index of the point ending the **last** gaining step, or 0
///    when no step gains (throughput flat from the first load on).
/// 3. k is the knee if the sweep went past it (k is not the last point) and p99 kept
///    rising past it: p99 at the last point is strictly higher than at k. Beyond the knee
///    more load buys less than 10% per step and costs latency.
///
/// `None` when there is no knee to report: fewer than 2 points; a non-finite value; no
/// positive throughput; the last step still gained (still scaling when the sweep ended,
/// the knee lies beyond the highest load tried); or p99 did not rise after the candidate
/// (flat throughput *and* flat latency: nothing saturated, e.g. the load generator is the
/// limit). Loads are used only for their order and are not checked.
pub fn knee(points: &[(f64, f64, f64)]) -> Option<usize> {
    let finite = points
        .iter()
        .all(|&(l, t, p)| l.is_finite() && t.is_finite() && p.is_finite());
    if points.len() < 2 || !finite || !points.iter().any(|&(_, t, _)| t > 0.0) {
        return None;
    }
    let k = points
        .windows(2)
        .enumerate()
        .rev()
        .find_map(|(i, w)| match w {
            [(_, before, _), (_, after, _)] if gains(*before, *after) => Some(i + 1),
            _ => None,
        })
        .unwrap_or(0);
    let (_, _, p99_at_knee) = *points.get(k)?;
    let (_, _, p99_last) = *points.last()?;
    (k + 1 < points.len() && p99_last > p99_at_knee).then_some(k)
}

fn gains(before: f64, after: f64) -> bool {
    after > 0.0 && after >= (1.0 + KNEE_MIN_GAIN) * before
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points with loads 1, 2, 3, ... from throughput and p99 columns.
    fn sweep(tput: &[f64], p99: &[f64]) -> Vec<(f64, f64, f64)> {
        tput.iter()
            .zip(p99)
            .enumerate()
            .map(|(i, (&t, &p))| (i as f64 + 1.0, t, p))
            .collect()
    }

    #[test]
    fn knee_of_a_saturating_curve() {
        // Gains: +100%, +50%, +30%, then +7.7%, +2.4%, 0, -1.2% while p99 climbs.
        let tput = [1.0, 2.0, 3.0, 3.9, 4.2, 4.3, 4.3, 4.25];
        let p99 = [10.0, 10.0, 11.0, 12.0, 20.0, 40.0, 80.0, 160.0];
        assert_eq!(knee(&sweep(&tput, &p99)), Some(3));
    }

    /// Name, throughputs, p99s, expected knee.
    type Case = (&'static str, &'static [f64], &'static [f64], Option<usize>);

    #[test]
    fn rule_edges() {
        let cases: &[Case] = &[
            ("empty", &[], &[], None),
            ("single point", &[5.0], &[1.0], None),
            (
                "still scaling at the end",
                &[1.0, 2.0, 3.0],
                &[1.0, 2.0, 3.0],
                None,
            ),
            (
                "flat throughput, rising p99",
                &[5.0, 5.0, 5.1],
                &[1.0, 2.0, 4.0],
                Some(0),
            ),
            (
                "flat throughput, flat p99",
                &[5.0, 5.0, 5.0],
                &[1.0, 1.0, 1.0],
                None,
            ),
            (
                "p99 falls after the candidate",
                &[1.0, 2.0, 2.0],
                &[5.0, 5.0, 4.0],
                None,
            ),
            (
                "exactly 10% gains",
                &[1.0, 1.1, 1.15],
                &[1.0, 2.0, 3.0],
                Some(1),
            ),
            ("up from zero", &[0.0, 3.0, 3.1], &[1.0, 2.0, 3.0], Some(1)),
            (
                "no throughput at all",
                &[0.0, 0.0, 0.0],
                &[1.0, 2.0, 3.0],
                None,
            ),
            (
                "a late 12% step moves the knee",
                &[1.0, 2.0, 2.05, 2.3, 2.3],
                &[1.0, 2.0, 3.0, 4.0, 9.0],
                Some(3),
            ),
            ("non-finite", &[1.0, f64::NAN, 2.0], &[1.0, 2.0, 3.0], None),
        ];
        for &(name, tput, p99, want) in cases {
            assert_eq!(knee(&sweep(tput, p99)), want, "{name}");
        }
    }
}
