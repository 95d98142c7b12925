//! The wait both live tickers (stream and rr) share: sleep up to an interval
//! boundary, woken at once when the run's last data thread ends, and tell a boundary
//! met from a process that was stopped (a wakeup far too late becomes one long
//! sample, not a burst of made-up ones).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::{self, Thread};
use std::time::{Duration, Instant};

/// A wakeup this much later than its interval boundary (on top of an interval) means
/// this process was stopped: the gap becomes one sample. Ordinary scheduling delays
/// on a busy host stay far below it.
pub const LATE_NS: u64 = 1_000_000_000;

/// Longest single sleep between boundaries: how soon a ticker notices what nothing
/// wakes it for (a stop flag, a cut that is due). The end of the run wakes it at once
/// ([`Running`]), so the step can be long: a ticker wakes about 4 times a second
/// instead of 50, and each wakeup on a busy host can preempt a data thread.
pub const STEP: Duration = Duration::from_millis(250);

/// The data threads of a run still going, and the ticker waiting on them: the last
/// one to finish wakes the ticker, which can then sleep whole steps in between.
/// Created on the ticker's own thread.
#[derive(Debug)]
pub struct Running {
    left: AtomicUsize,
    ticker: Thread,
}

impl Running {
    /// `n` data threads, waited on by the current thread.
    pub fn new(n: usize) -> Running {
        Running {
            left: AtomicUsize::new(n),
            ticker: thread::current(),
        }
    }

    /// A data thread is done; the last one wakes the ticker. True for the last.
    pub fn finish_one(&self) -> bool {
        let last = self.left.fetch_sub(1, Ordering::AcqRel) == 1;
        if last {
            self.ticker.unpark();
        }
        last
    }

    /// No data thread is left.
    pub fn is_done(&self) -> bool {
        self.left.load(Ordering::Acquire) == 0
    }
}

/// How a wait for a boundary ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Woke {
    /// The run ended (`finished` said so) before the boundary.
    pub finished: bool,
    /// Where the sample ends, ns after `t0`: the boundary, or now when the run ended
    /// or this process woke more than an interval (at least a second) late.
    pub end_ns: u64,
}

/// Waits until `target_ns` after `t0` or until `finished()`; `each(now)` runs at
/// every step (the stream ticker watches its connections there). Sleeps park the
/// thread, so [`Running::finish_one`] ends a wait at once.
pub fn wait_boundary(
    t0: Instant,
    target_ns: u64,
    interval_ns: u64,
    mut finished: impl FnMut() -> bool,
    mut each: impl FnMut(Instant),
) -> Woke {
    let finished = loop {
        if finished() {
            break true;
        }
        let now_i = Instant::now();
        each(now_i);
        let now = now_i.saturating_duration_since(t0).as_nanos() as u64;
        if now >= target_ns {
            break false;
        }
        thread::park_timeout(Duration::from_nanos(target_ns - now).min(STEP));
    };
    let now_ns = t0.elapsed().as_nanos() as u64;
    let end_ns = if finished || now_ns > target_ns + interval_ns.max(LATE_NS) {
        now_ns
    } else {
        target_ns
    };
    Woke { finished, end_ns }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boundary_met_ends_the_sample_on_it() {
        let t0 = Instant::now();
        let w = wait_boundary(t0, 5_000_000, 5_000_000, || false, |_| {});
        assert_eq!(
            w,
            Woke {
                finished: false,
                end_ns: 5_000_000
            }
        );
        assert!(t0.elapsed() >= Duration::from_millis(5));
    }

    #[test]
    fn a_finished_run_ends_the_sample_now() {
        let t0 = Instant::now();
        let steps = std::cell::Cell::new(0);
        let w = wait_boundary(
            t0,
            60_000_000_000,
            1_000_000_000,
            || steps.get() > 0,
            |_| steps.set(steps.get() + 1),
        );
        assert!(w.finished);
        assert!(w.end_ns < 60_000_000_000, "{w:?}");
    }

    #[test]
    fn the_last_data_thread_wakes_the_ticker_and_only_the_last() {
        let running = Running::new(2);
        std::thread::scope(|s| {
            assert!(!s.spawn(|| running.finish_one()).join().unwrap());
            assert!(!running.is_done());
            assert!(s.spawn(|| running.finish_one()).join().unwrap());
        });
        assert!(running.is_done());
        // The wakeup is kept for the ticker's next sleep: it does not sleep at all.
        let t = Instant::now();
        thread::park_timeout(Duration::from_secs(30));
        assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    }

    #[test]
    fn a_wakeup_far_too_late_is_one_long_sample() {
        let t0 = Instant::now().checked_sub(Duration::from_secs(5)).unwrap();
        let w = wait_boundary(t0, 1_000_000, 1_000_000, || false, |_| {});
        assert!(!w.finished);
        assert!(w.end_ns >= 5_000_000_000, "{w:?}");
    }
}
