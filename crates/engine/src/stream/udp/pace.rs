//! Pacing: how many datagrams are due by a given time at a given rate, and when the
//! next one is. The sender sleeps to the next slot and sends what is due in one
//! batch, so it holds the rate without spinning a core; a sender that fell far
//! behind (descheduled) restarts its schedule rather than bursting to catch up.

use std::time::Duration;

/// The longest backlog a sender catches up on at once.
const MAX_BACKLOG: Duration = Duration::from_millis(20);
/// Sleeping shorter than this costs more than it saves: send the next one early.
pub const MIN_SLEEP: Duration = Duration::from_micros(50);
/// At most this many datagrams in one batch.
pub const BATCH: u64 = 64;

#[derive(Debug, Clone, Copy)]
pub struct Pacer {
    /// ns per datagram (0: unpaced).
    gap_ns: f64,
    /// Start of the schedule (ns on the sender's clock) and datagrams counted on it.
    origin_ns: u64,
    base: u64,
}

/// What to do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Send(u64),
    SleepNs(u64),
}

impl Pacer {
    /// `rate_bps` of `block`-byte datagrams; 0 sends as fast as the socket takes them.
    pub fn new(rate_bps: u64, block: u32, now_ns: u64) -> Pacer {
        let gap_ns = if rate_bps == 0 {
            0.0
        } else {
            f64::from(block) * 8.0 * 1e9 / rate_bps as f64
        };
        Pacer {
            gap_ns,
            origin_ns: now_ns,
            base: 0,
        }
    }

    /// The step after `sent` datagrams at `now_ns`.
    pub fn step(&mut self, sent: u64, now_ns: u64) -> Step {
        if self.gap_ns < 1.0 {
            return Step::Send(BATCH);
        }
        let elapsed = now_ns.saturating_sub(self.origin_ns) as f64;
        let due = self.base + (elapsed / self.gap_ns) as u64 + 1;
        if due > sent {
            // How late the next datagram already is.
            let behind = elapsed - (sent - self.base) as f64 * self.gap_ns;
            if behind > MAX_BACKLOG.as_nanos() as f64 {
                self.origin_ns = now_ns;
                self.base = sent;
                return Step::Send(1);
            }
            return Step::Send((due - sent).min(BATCH));
        }
        let next_at = self.origin_ns as f64 + (sent - self.base) as f64 * self.gap_ns;
        let wait = (next_at - now_ns as f64).max(0.0) as u64;
        if wait < MIN_SLEEP.as_nanos() as u64 {
            Step::Send(1)
        } else {
            Step::SleepNs(wait)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a pacer against a simulated clock for `secs`, with each send costing
    /// `cost_ns`; returns datagrams sent and the number of sleeps.
    fn simulate(rate: u64, block: u32, secs: u64, cost_ns: u64) -> (u64, u64) {
        let mut p = Pacer::new(rate, block, 0);
        let (mut now, mut sent, mut sleeps) = (0u64, 0u64, 0u64);
        while now < secs * 1_000_000_000 {
            match p.step(sent, now) {
                Step::Send(n) => {
                    sent += n;
                    now += n * cost_ns;
                }
                Step::SleepNs(ns) => {
                    sleeps += 1;
                    // A real sleep overshoots by tens of µs.
                    now += ns + 60_000;
                }
            }
        }
        (sent, sleeps)
    }

    #[test]
    fn holds_the_rate_within_half_a_percent() {
        for rate in [10_000_000u64, 1_000_000_000, 4_000_000_000] {
            let (sent, _) = simulate(rate, 8192, 2, 2_000);
            let got = sent as f64 * 8192.0 * 8.0 / 2.0;
            let err = (got - rate as f64).abs() / rate as f64;
            assert!(err < 0.005, "rate {rate}: got {got} ({err})");
        }
    }

    #[test]
    fn sleeps_rather_than_spins_and_batches_at_high_rates() {
        // 10 Mbit/s of 8 KiB is 153 datagrams/s: about one sleep per datagram.
        let (sent, sleeps) = simulate(10_000_000, 8192, 1, 2_000);
        assert!(sleeps >= sent / 2 && sleeps <= sent + 1, "{sent} {sleeps}");
        // 4 Gbit/s is one every 16 µs: sleeps far fewer than datagrams.
        let (sent, sleeps) = simulate(4_000_000_000, 8192, 1, 1_000);
        assert!(sleeps * 2 < sent, "{sent} {sleeps}");
    }

    #[test]
    fn a_slow_sender_does_not_burst_to_catch_up() {
        let mut p = Pacer::new(1_000_000_000, 8192, 0);
        // 100 ms without a chance to send: the schedule restarts.
        assert_eq!(p.step(0, 100_000_000), Step::Send(1));
        assert!(matches!(p.step(1, 100_000_001), Step::SleepNs(_)));
    }

    #[test]
    fn unpaced_sends_batches() {
        let mut p = Pacer::new(0, 8192, 0);
        assert_eq!(p.step(123, 5), Step::Send(BATCH));
    }
}
