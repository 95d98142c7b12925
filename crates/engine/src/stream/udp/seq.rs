//! A receiver's sequence accounting: distinct, duplicated and reordered datagrams by
//! sequence number, with a window of the recent sequences seen, and RFC 3550
//! interarrival jitter. Pure: fed (sequence, send stamp, arrival) triples.

/// Sequences remembered below the highest seen: a duplicate older than this counts
/// as a late (reordered) arrival, which on any real path it cannot be.
const WINDOW: u64 = 1 << 16;
const WORDS: usize = (WINDOW / 64) as usize;

/// A sequence this far past the highest seen is not from an honest sender.
const MAX_JUMP: u64 = 1 << 32;

#[derive(Debug, Clone)]
pub struct SeqTracker {
    /// One past the highest sequence seen.
    pub next: u64,
    pub unique: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Bit `s % WINDOW` is set when `s` in `[next - WINDOW, next)` was seen.
    seen: Box<[u64; WORDS]>,
    /// RFC 3550 J in ns, and the previous datagram's transit time.
    jitter: f64,
    last_transit: Option<i64>,
}

/// What one arrival was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    New,
    Late,
    Duplicate,
    /// Beyond any honest sender's sequence: ignored.
    Bogus,
}

impl Default for SeqTracker {
    fn default() -> Self {
        SeqTracker {
            next: 0,
            unique: 0,
            duplicated: 0,
            reordered: 0,
            seen: Box::new([0; WORDS]),
            jitter: 0.0,
            last_transit: None,
        }
    }
}

impl SeqTracker {
    fn bit(s: u64) -> (usize, u64) {
        (((s % WINDOW) / 64) as usize, 1 << (s % 64))
    }

    fn test_and_set(&mut self, s: u64) -> bool {
        let (w, b) = Self::bit(s);
        let word = &mut self.seen[w];
        let was = *word & b != 0;
        *word |= b;
        was
    }

    fn clear(&mut self, s: u64) {
        let (w, b) = Self::bit(s);
        self.seen[w] &= !b;
    }

    /// Counts one datagram; `stamp_ns` is the sender's clock, `now_ns` ours.
    pub fn arrive(&mut self, seq: u64, stamp_ns: u64, now_ns: u64) -> Arrival {
        let kind = if seq >= self.next {
            if seq - self.next > MAX_JUMP {
                return Arrival::Bogus;
            }
            if seq - self.next >= WINDOW {
                self.seen.fill(0);
            } else {
                for s in self.next..seq {
                    self.clear(s);
                }
            }
            self.clear(seq);
            self.test_and_set(seq);
            self.next = seq + 1;
            self.unique += 1;
            Arrival::New
        } else if self.next - seq > WINDOW {
            self.unique += 1;
            self.reordered += 1;
            Arrival::Late
        } else if self.test_and_set(seq) {
            self.duplicated += 1;
            return Arrival::Duplicate;
        } else {
            self.unique += 1;
            self.reordered += 1;
            Arrival::Late
        };
        // RFC 3550 §6.4.1 / A.8: D from consecutive arrivals' transit times,
        // J += (|D| - J) / 16. Both clocks are monotonic; their offset cancels.
        let transit = now_ns as i64 - stamp_ns as i64;
        if let Some(prev) = self.last_transit {
            let d = (transit - prev).unsigned_abs() as f64;
            self.jitter += (d - self.jitter) / 16.0;
        }
        self.last_transit = Some(transit);
        kind
    }

    pub fn jitter_ns(&self) -> u64 {
        self.jitter as u64
    }

    /// Sequences skipped so far and not (yet) filled: `next - unique`.
    #[cfg(test)]
    pub fn gaps(&self) -> u64 {
        self.next.saturating_sub(self.unique)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_new_late_duplicate_and_gaps() {
        use Arrival::{Duplicate as D, Late as L, New as N};
        let mut t = SeqTracker::default();
        let kinds: Vec<Arrival> = [0, 1, 3, 2, 2, 6, 5]
            .iter()
            .map(|&s| t.arrive(s, 0, 0))
            .collect();
        assert_eq!(kinds, [N, N, N, L, D, N, L]);
        assert_eq!((t.next, t.unique, t.duplicated, t.reordered), (7, 6, 1, 2));
        // 4 never came: sent 7 = received 6 + lost 1.
        assert_eq!(t.gaps(), 1);
    }

    #[test]
    fn a_jump_past_the_window_forgets_old_bits_and_bogus_jumps_are_ignored() {
        let mut t = SeqTracker::default();
        t.arrive(0, 0, 0);
        t.arrive(WINDOW + 10, 0, 0);
        // Sequences skipped by the jump were never seen: a late one is new, not a copy.
        assert_eq!(t.arrive(10 + WINDOW / 2, 0, 0), Arrival::Late);
        assert_eq!(t.arrive(u64::MAX / 2, 0, 0), Arrival::Bogus);
        assert_eq!(t.next, WINDOW + 11);
    }

    #[test]
    fn jitter_follows_rfc3550() {
        let mut t = SeqTracker::default();
        // Transit 100, 110, 100, 110 ...: |D| = 10 every time, J converges to 10.
        for i in 0..200u64 {
            let transit = if i % 2 == 0 { 100 } else { 110 };
            t.arrive(i, i * 1000, i * 1000 + transit);
        }
        assert!((t.jitter_ns() as i64 - 10).abs() <= 1, "{}", t.jitter_ns());
        let mut steady = SeqTracker::default();
        for i in 0..50u64 {
            steady.arrive(i, i * 1000, i * 1000 + 500);
        }
        assert_eq!(steady.jitter_ns(), 0);
    }
}
