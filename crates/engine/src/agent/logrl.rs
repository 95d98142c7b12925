//! Rate limit of the agent's warnings: a flood of refused connections must not turn
//! into a flood of log lines (17,000 in 45 s before this). Per event, at most
//! `BURST` warnings per `WINDOW`; the rest are counted and summarised in one line when
//! the next warning of that event gets through.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const WINDOW: Duration = Duration::from_secs(10);
pub const BURST: u32 = 20;

#[derive(Default)]
pub struct LogLimiter {
    events: Mutex<HashMap<&'static str, State>>,
}

struct State {
    since: Instant,
    shown: u32,
    suppressed: u64,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Write the line; `suppressed` lines of the same event were dropped before it.
    Emit {
        suppressed: u64,
    },
    Drop,
}

impl LogLimiter {
    pub fn check(&self, event: &'static str, now: Instant) -> Verdict {
        let mut m = match self.events.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let s = m.entry(event).or_insert(State {
            since: now,
            shown: 0,
            suppressed: 0,
        });
        if now.saturating_duration_since(s.since) >= WINDOW {
            s.since = now;
            s.shown = 0;
        }
        if s.shown >= BURST {
            s.suppressed += 1;
            return Verdict::Drop;
        }
        s.shown += 1;
        let suppressed = std::mem::take(&mut s.suppressed);
        Verdict::Emit { suppressed }
    }
}

#[cfg(test)]
mod tests {
    use super::{LogLimiter, Verdict, BURST, WINDOW};
    use std::time::Instant;

    #[test]
    fn a_flood_is_cut_to_a_burst_per_window_and_counted() {
        let l = LogLimiter::default();
        let t0 = Instant::now();
        let shown = (0..10_000)
            .filter(|_| l.check("refused", t0) != Verdict::Drop)
            .count();
        assert_eq!(shown, BURST as usize);
        // Another event is not affected.
        assert_eq!(l.check("auth", t0), Verdict::Emit { suppressed: 0 });
        // Next window: the first line carries the count of the dropped ones.
        assert_eq!(
            l.check("refused", t0 + WINDOW),
            Verdict::Emit {
                suppressed: 10_000 - u64::from(BURST)
            }
        );
        assert_eq!(
            l.check("refused", t0 + WINDOW),
            Verdict::Emit { suppressed: 0 }
        );
    }
}
