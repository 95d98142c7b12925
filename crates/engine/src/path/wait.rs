//! How long one probe waits for its answer: bounded by the pair's measured round
//! trip, never a fixed timeout. A size that vanishes costs its wait on every attempt,
//! so on a LAN (RTT well under a millisecond) a silent search costs tens of
//! milliseconds instead of a tenth of a second per lost probe, while a long path
//! (RTT of 100 ms and more) still gets the time its answers need.

use schemars::JsonSchema;
use std::time::Duration;

/// Added to four round trips: the far end's scheduling and a burst of other traffic.
pub const FLOOR: Duration = Duration::from_millis(2);
/// The shortest wait, whatever the round trip: a loaded host's scheduler can hold an
/// answer this long, and the agent waits at least 10 ms for a reverse probe's ack.
pub const MIN_WAIT: Duration = Duration::from_millis(20);
/// The longest wait, whatever the round trip: a path slower than this is not one an
/// MTU search can serve (the pair's deadline would pass first).
pub const MAX_WAIT: Duration = Duration::from_secs(1);
/// Before any round trip is known (no TCP_INFO): a first wait of about the former
/// fixed 100 ms.
const UNKNOWN_RTT: Duration = Duration::from_millis(25);

/// The wait of a probe on a pair whose slowest answer so far took `rtt`:
/// `max(4 × rtt + FLOOR, MIN_WAIT)`, at most `MAX_WAIT`.
pub fn bound(rtt: Duration) -> Duration {
    (rtt.saturating_mul(4) + FLOOR).clamp(MIN_WAIT, MAX_WAIT)
}

/// A pair's probe wait: starts from the control connection's round trip, then
/// follows the slowest probe answered (a late answer included), never shrinking once
/// measured, so one slow answer makes every later wait long enough for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeWait {
    /// The slowest round trip seen: the control connection's (TCP's smoothed RTT
    /// plus its variation) until a probe's own answer is timed.
    slowest: Duration,
    /// Whether a probe's own answer has been timed (else `slowest` is TCP's).
    measured: bool,
    /// The largest round trip a wait was derived from (None: no wait given yet).
    bounded_by: Option<Duration>,
}

impl ProbeWait {
    /// From the control connection's round trip (TCP_INFO's `rtt + rttvar`, in µs),
    /// when the kernel gave one.
    pub fn from_tcp(rtt_us: Option<u32>) -> ProbeWait {
        ProbeWait {
            slowest: rtt_us.map_or(UNKNOWN_RTT, |us| Duration::from_micros(u64::from(us))),
            measured: false,
            bounded_by: None,
        }
    }

    /// The wait of the next probe: [`bound`] of the slowest round trip seen.
    pub fn for_probe(&mut self) -> Duration {
        self.bounded_by = Some(
            self.bounded_by
                .map_or(self.slowest, |b| b.max(self.slowest)),
        );
        bound(self.slowest)
    }

    /// A probe's answer came `rtt` after it was sent.
    pub fn answered(&mut self, rtt: Duration) {
        self.slowest = if self.measured {
            self.slowest.max(rtt)
        } else {
            rtt
        };
        self.measured = true;
    }

    /// The same pair's wait for another search: the round trip known so far, no wait
    /// given yet.
    pub fn again(&self) -> ProbeWait {
        ProbeWait {
            bounded_by: None,
            ..*self
        }
    }

    /// The largest round trip a wait was derived from.
    pub fn bounded_by(&self) -> Option<Duration> {
        self.bounded_by
    }

    /// The longest wait a probe was given: [`bound`] of [`Self::bounded_by`].
    pub fn longest(&self) -> Option<Duration> {
        self.bounded_by.map(bound)
    }
}

/// What a direction's probes waited, for the result (µs): the largest round trip a
/// probe's wait was derived from (TCP's before the first answer, then the slowest
/// probe answer), and that wait, `max(4 × rtt + FLOOR, MIN_WAIT)` within `MAX_WAIT`:
/// a lost probe cost at most `wait_us`. Null where no probe was sent.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, JsonSchema,
)]
pub struct Waited {
    /// The largest round trip a probe's wait was derived from, µs: the control connection's
    /// before the first answer, then the slowest probe answer.
    pub rtt_us: Option<u64>,
    /// The longest a probe waited for its answer, µs: max(4 x RTT + 2 ms, 20 ms), at most 1
    /// s.
    pub wait_us: Option<u64>,
}

impl From<&ProbeWait> for Waited {
    fn from(w: &ProbeWait) -> Waited {
        let us = |d: Duration| d.as_micros().try_into().unwrap_or(u64::MAX);
        Waited {
            rtt_us: w.bounded_by().map(us),
            wait_us: w.longest().map(us),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const US: Duration = Duration::from_micros(1);

    #[test]
    fn the_wait_is_four_round_trips_and_a_floor_within_its_bounds() {
        // (slowest round trip, wait)
        let cases = [
            (Duration::ZERO, MIN_WAIT),
            (50 * US, MIN_WAIT),
            (4 * MS, MIN_WAIT),
            (5 * MS, 22 * MS),
            (100 * MS, 402 * MS),
            (300 * MS, MAX_WAIT),
            (Duration::from_mins(1), MAX_WAIT),
        ];
        for (rtt, want) in cases {
            assert_eq!(bound(rtt), want, "rtt {rtt:?}");
        }
    }

    #[test]
    fn a_probe_answer_replaces_tcps_estimate_then_only_slower_ones_count() {
        // TCP's RTT on a loaded host (rttvar included) is larger than a probe's.
        let mut w = ProbeWait::from_tcp(Some(30_000));
        assert_eq!(w.longest(), None);
        assert_eq!(w.for_probe(), 122 * MS);
        w.answered(200 * US);
        assert_eq!(w.for_probe(), MIN_WAIT);
        w.answered(100 * US);
        assert_eq!(w.for_probe(), MIN_WAIT);
        // A late answer (an ack after its probe's wait) makes later waits cover it.
        w.answered(10 * MS);
        assert_eq!(w.for_probe(), 42 * MS);
        // The longest wait was the first, from TCP's round trip.
        assert_eq!(
            Waited::from(&w),
            Waited {
                rtt_us: Some(30_000),
                wait_us: Some(122_000)
            }
        );
        // The reverse search starts from what the forward one measured.
        let mut again = w.again();
        assert_eq!(again.longest(), None);
        assert_eq!(again.for_probe(), 42 * MS);
        assert_eq!(
            Waited::from(&again),
            Waited {
                rtt_us: Some(10_000),
                wait_us: Some(42_000)
            }
        );
    }

    #[test]
    fn without_tcps_round_trip_the_first_wait_is_still_bounded() {
        let mut w = ProbeWait::from_tcp(None);
        assert_eq!(w.for_probe(), 102 * MS);
    }
}
