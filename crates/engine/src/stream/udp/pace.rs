//! Pacing: how many datagrams are due by a given time at a given rate, and when the
//! next one is. The sender sleeps to the next slot and sends what is due in one
//! batch, so it holds the rate without spinning a core; a sender that fell far
//! behind (descheduled) restarts its schedule rather than bursting to catch up.
//!
//! A batched sender (sendmmsg, GSO) sends `k` datagrams per call: when the first of
//! them is due it also sends the next ones whose slots are near, but never a
//! datagram more than one batch's worth of time (`k` slots) before its slot. `k` is
//! as many slots as fit in [`BATCH_TIME`], so at low rates a batch is one datagram
//! and the schedule is the plain one.

use std::time::Duration;

/// The longest backlog a sender catches up on at once.
const MAX_BACKLOG: Duration = Duration::from_millis(20);
/// Sleeping shorter than this costs more than it saves: send the next one early.
pub const MIN_SLEEP: Duration = Duration::from_micros(50);
/// At most this many datagrams in one batch of a plain sender.
pub const BATCH: u64 = 64;
/// The most time one batch of a batched sender may cover: its last datagram goes at
/// most this long before its slot. A quarter of iperf3's 1 ms pacing timer: at
/// 10 Gbit/s a batch is 300 KB, at 1 Gbit/s of 1472-byte datagrams 21 of them.
pub const BATCH_TIME: Duration = Duration::from_micros(250);

#[derive(Debug, Clone, Copy)]
pub struct Pacer {
    /// ns per datagram (0: unpaced).
    gap_ns: f64,
    /// Start of the schedule (ns on the sender's clock) and datagrams counted on it.
    origin_ns: u64,
    base: u64,
    /// The most datagrams one step sends.
    max_step: u64,
    /// A batched sender: how long before its slot a datagram may go (one batch's
    /// worth of slots); 0 for a plain sender.
    lead_ns: f64,
}

/// What to do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Send(u64),
    SleepNs(u64),
}

fn gap_ns(rate_bps: u64, block: u32) -> f64 {
    if rate_bps == 0 {
        0.0
    } else {
        f64::from(block) * 8.0 * 1e9 / rate_bps as f64
    }
}

impl Pacer {
    /// `rate_bps` of `block`-byte datagrams; 0 sends as fast as the socket takes them.
    pub fn new(rate_bps: u64, block: u32, now_ns: u64) -> Pacer {
        Pacer {
            gap_ns: gap_ns(rate_bps, block),
            origin_ns: now_ns,
            base: 0,
            max_step: BATCH,
            lead_ns: 0.0,
        }
    }

    /// A batched sender's pacer: at most `most` datagrams a step, as many as fit in
    /// [`BATCH_TIME`] (at least one).
    pub fn batched(rate_bps: u64, block: u32, now_ns: u64, most: u64) -> Pacer {
        let gap = gap_ns(rate_bps, block);
        let most = most.max(1);
        let k = if gap < 1.0 {
            most
        } else {
            ((BATCH_TIME.as_nanos() as f64 / gap) as u64).clamp(1, most)
        };
        Pacer {
            gap_ns: gap,
            origin_ns: now_ns,
            base: 0,
            max_step: k,
            lead_ns: k as f64 * gap,
        }
    }

    /// How long before its slot a datagram may go: one batch's worth of time (0 for
    /// a plain sender, which sends only what is due).
    #[cfg(test)]
    pub fn lead_ns(&self) -> f64 {
        self.lead_ns
    }

    /// The step after `sent` datagrams at `now_ns`.
    pub fn step(&mut self, sent: u64, now_ns: u64) -> Step {
        if self.gap_ns < 1.0 {
            return Step::Send(self.max_step);
        }
        let elapsed = now_ns.saturating_sub(self.origin_ns) as f64;
        let due = self.base + (elapsed / self.gap_ns) as u64 + 1;
        if due > sent {
            // How late the next datagram already is.
            let behind = elapsed - (sent - self.base) as f64 * self.gap_ns;
            if behind > MAX_BACKLOG.as_nanos() as f64 {
                self.origin_ns = now_ns;
                self.base = sent;
                return Step::Send(self.within_lead(sent, now_ns).max(1));
            }
            return Step::Send(
                self.within_lead(sent, now_ns)
                    .max(due - sent)
                    .min(self.max_step),
            );
        }
        let next_at = self.origin_ns as f64 + (sent - self.base) as f64 * self.gap_ns;
        let wait = (next_at - now_ns as f64).max(0.0) as u64;
        if wait >= MIN_SLEEP.as_nanos() as u64 {
            return Step::SleepNs(wait);
        }
        if self.lead_ns == 0.0 {
            return Step::Send(1);
        }
        match self.within_lead(sent, now_ns) {
            0 => Step::SleepNs(wait),
            n => Step::Send(n),
        }
    }

    /// Datagrams from `sent` on whose slot is less than the lead after `now_ns`
    /// (at most a step's worth; 0 for a plain sender).
    fn within_lead(&self, sent: u64, now_ns: u64) -> u64 {
        if self.lead_ns == 0.0 {
            return 0;
        }
        let horizon = now_ns.saturating_sub(self.origin_ns) as f64 + self.lead_ns;
        // Slot i = origin + (i - base) * gap < now + lead  <=>  i < base + horizon/gap.
        let end = self.base + (horizon / self.gap_ns).ceil() as u64;
        end.saturating_sub(sent).min(self.max_step)
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

    /// A batched sender against a fake clock: every datagram of every step goes at
    /// most one batch's worth of time (`lead_ns`) before its slot, never after its
    /// slot by more than the clock's own lateness, and the rate holds. Returns the
    /// datagrams sent and the steps that sent.
    fn batched_bound(rate: u64, block: u32, most: u64, overshoot_ns: u64) -> (u64, u64) {
        let gap = f64::from(block) * 8.0 * 1e9 / rate as f64;
        let mut p = Pacer::batched(rate, block, 0, most);
        let lead = p.lead_ns();
        assert!(lead >= gap, "a batch covers at least one slot");
        assert!(lead <= BATCH_TIME.as_nanos() as f64 || lead <= gap + 1.0);
        let (mut now, mut sent, mut sends) = (0u64, 0u64, 0u64);
        // A clock that also jitters: each sleep overshoots by 0..overshoot.
        let mut jitter = 0x9e37_79b9_7f4a_7c15u64;
        while now < 1_000_000_000 {
            match p.step(sent, now) {
                Step::Send(n) => {
                    assert!(n >= 1 && n <= most, "{n}");
                    for i in sent..sent + n {
                        let slot = i as f64 * gap;
                        assert!(
                            slot < now as f64 + lead,
                            "datagram {i} at {now} ns, {} ns before its slot (a batch is {lead} ns)",
                            slot - now as f64
                        );
                    }
                    sent += n;
                    sends += 1;
                    now += 500 + n * 100;
                }
                Step::SleepNs(ns) => {
                    jitter ^= jitter << 13;
                    jitter ^= jitter >> 7;
                    jitter ^= jitter << 17;
                    now += ns + jitter % overshoot_ns.max(1);
                }
            }
        }
        let got = sent as f64 * f64::from(block) * 8.0;
        let err = (got - rate as f64).abs() / rate as f64;
        assert!(err < 0.005, "rate {rate}: got {got} ({err})");
        (sent, sends)
    }

    #[test]
    fn a_batch_never_sends_ahead_of_its_schedule_by_more_than_a_batch() {
        for (rate, block, most) in [
            (10_000_000u64, 8192u32, 64u64),
            (1_000_000_000, 8192, 64),
            (1_000_000_000, 1472, 64),
            (5_000_000_000, 1472, 352),
            (20_000_000_000, 1472, 352),
            (40_000_000_000, 8192, 56),
        ] {
            for overshoot in [1, 60_000, 300_000] {
                let (sent, sends) = batched_bound(rate, block, most, overshoot);
                assert!(sends <= sent, "{rate} {block}");
            }
        }
    }

    #[test]
    fn batches_fill_at_high_rates_and_are_single_at_low_ones() {
        // 10 Mbit/s of 8 KiB: a slot every 6.5 ms, far over a batch's time: one a step.
        let p = Pacer::batched(10_000_000, 8192, 0, 64);
        assert_eq!(p.max_step, 1);
        let (sent, sends) = batched_bound(10_000_000, 8192, 64, 60_000);
        assert_eq!(sent, sends);
        // 5 Gbit/s of 1472 B: 2.4 µs a slot, 106 slots in 250 µs: a step sends ~100.
        let p = Pacer::batched(5_000_000_000, 1472, 0, 352);
        assert_eq!(p.max_step, 106);
        let (sent, sends) = batched_bound(5_000_000_000, 1472, 352, 60_000);
        assert!(sent / sends >= 50, "{sent} datagrams in {sends} steps");
        // Unpaced: the most a step may send.
        let mut p = Pacer::batched(0, 1472, 0, 352);
        assert_eq!(p.step(9, 1), Step::Send(352));
    }

    #[test]
    fn a_batched_sender_that_fell_behind_restarts_with_one_batch() {
        let mut p = Pacer::batched(1_000_000_000, 1472, 0, 64);
        let k = p.max_step;
        assert!(k > 1);
        // 100 ms without a chance to send: the schedule restarts with one batch.
        assert_eq!(p.step(0, 100_000_000), Step::Send(k));
        assert!(matches!(p.step(k, 100_000_001), Step::SleepNs(_)));
    }
}
