//! Stalls: spans in a run's own interval samples where nothing moved (or the process
//! itself was stopped and sampled late). A stall must not pass for a normal run, so
//! the client reports each one and marks the run.

use std::time::Duration;

use mtuperf_proto::interrupt::{Interrupt, Span as StallSpan, Stalled};

/// The shortest span counted as a stall (and at least two intervals).
pub const STALL_MIN: Duration = Duration::from_secs(2);

/// One sample as the detector sees it.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub start_ns: u64,
    pub end_ns: u64,
    /// Anything moved (bytes, blocks) in the span.
    pub moved: bool,
}

/// The stalls in `spans` (in order) that begin before `until_ns` (the planned end):
/// maximal runs of samples where nothing moved or that are longer than two
/// intervals (a stopped process samples late), lasting at least [`STALL_MIN`] and
/// two intervals, after the first sample that moved anything.
pub fn stalls(spans: &[Span], interval_ns: u64, until_ns: u64) -> Vec<(u64, u64)> {
    let min = (STALL_MIN.as_nanos() as u64).max(2 * interval_ns);
    let mut out = Vec::new();
    let mut started = false;
    let mut run: Option<(u64, u64)> = None;
    for s in spans.iter().filter(|s| s.start_ns < until_ns) {
        let late = s.end_ns.saturating_sub(s.start_ns) > 2 * interval_ns;
        if (!s.moved || late) && started {
            let (a, _) = run.unwrap_or((s.start_ns, s.end_ns));
            run = Some((a, s.end_ns.min(until_ns.max(a))));
        } else if let Some((a, b)) = run.take() {
            if b - a >= min {
                out.push((a, b));
            }
        }
        started |= s.moved;
    }
    if let Some((a, b)) = run {
        if b - a >= min {
            out.push((a, b));
        }
    }
    out
}

/// The stalls as an interrupt cause (None: none); `what` did not move.
pub fn describe(stalls: &[(u64, u64)], what: Stalled) -> Option<Interrupt> {
    (!stalls.is_empty()).then(|| Interrupt::Stalled {
        what,
        spans: stalls
            .iter()
            .map(|&(from_ns, to_ns)| StallSpan { from_ns, to_ns })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::{describe, stalls, Interrupt, Span, StallSpan, Stalled};

    const S: u64 = 1_000_000_000;

    fn spans(moved: &[bool]) -> Vec<Span> {
        moved
            .iter()
            .enumerate()
            .map(|(i, &m)| Span {
                start_ns: i as u64 * S,
                end_ns: (i as u64 + 1) * S,
                moved: m,
            })
            .collect()
    }

    #[test]
    fn a_gap_of_two_seconds_after_traffic_is_a_stall() {
        let s = spans(&[true, true, false, false, false, false]);
        assert_eq!(stalls(&s, S, 6 * S), vec![(2 * S, 6 * S)]);
        assert_eq!(
            describe(&stalls(&s, S, 6 * S), Stalled::Bytes),
            Some(Interrupt::Stalled {
                what: Stalled::Bytes,
                spans: vec![StallSpan {
                    from_ns: 2 * S,
                    to_ns: 6 * S
                }]
            })
        );
        assert_eq!(describe(&[], Stalled::Bytes), None);
        // One quiet second is not; nor is a quiet start; nor what follows the end.
        assert!(stalls(&spans(&[true, false, true, true]), S, 4 * S).is_empty());
        assert!(stalls(&spans(&[false, false, false, true]), S, 4 * S).is_empty());
        assert!(stalls(&spans(&[true, true, false, false, false]), S, 2 * S).is_empty());
    }

    #[test]
    fn a_late_sample_is_a_stall_even_if_bytes_moved() {
        let s = vec![
            Span {
                start_ns: 0,
                end_ns: S,
                moved: true,
            },
            Span {
                start_ns: S,
                end_ns: 16 * S,
                moved: true,
            },
        ];
        assert_eq!(stalls(&s, S, 8 * S), vec![(S, 8 * S)]);
    }
}
