//! The agent's test gate: tests the agent serves and its own watch checks never
//! overlap. A watch check starts only when no test is being served (the checks of
//! one cycle run side by side); a test that arrives during checks waits for them,
//! at most `TEST_WAIT` (checks are short and bounded), then runs anyway so that two
//! agents checking each other cannot lock.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Longest a test waits for a running watch check.
pub const TEST_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Default)]
struct State {
    tests: u32,
    /// Watch checks running.
    watching: u32,
}

#[derive(Debug, Default)]
pub struct Gate {
    state: Mutex<State>,
    changed: Condvar,
}

/// A test being served; leaves the gate on drop.
pub struct TestGuard<'a>(&'a Gate);

/// A watch check running; leaves the gate on drop.
pub struct WatchGuard<'a>(&'a Gate);

impl Gate {
    fn lock(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Enters a test: waits while a watch check runs, at most `wait`. Says whether it
    /// had to go ahead of a check still running.
    pub fn enter_test(&self, wait: Duration) -> (TestGuard<'_>, bool) {
        let deadline = Instant::now() + wait;
        let mut s = self.lock();
        while s.watching > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            s = match self.changed.wait_timeout(s, left) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        let overlapped = s.watching > 0;
        s.tests += 1;
        (TestGuard(self), overlapped)
    }

    /// Starts a watch check if no test is served (other checks may run).
    pub fn try_watch(&self) -> Option<WatchGuard<'_>> {
        let mut s = self.lock();
        if s.tests > 0 {
            return None;
        }
        s.watching += 1;
        Some(WatchGuard(self))
    }

    pub fn tests(&self) -> u32 {
        self.lock().tests
    }
}

impl Drop for TestGuard<'_> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.tests = s.tests.saturating_sub(1);
        drop(s);
        self.0.changed.notify_all();
    }
}

impl Drop for WatchGuard<'_> {
    fn drop(&mut self) {
        let mut s = self.0.lock();
        s.watching = s.watching.saturating_sub(1);
        drop(s);
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_check_waits_for_tests_and_tests_wait_for_a_check() {
        let g = Gate::default();
        let (t, overlapped) = g.enter_test(Duration::ZERO);
        assert!(!overlapped);
        assert!(
            g.try_watch().is_none(),
            "a check must not start during a test"
        );
        drop(t);
        let w = g.try_watch().unwrap();
        // Checks of one cycle run side by side; a test waits for all of them.
        let w2 = g.try_watch().unwrap();
        drop(w2);
        // A test arriving during a check waits for it, then goes ahead when it ends.
        std::thread::scope(|sc| {
            let h = sc.spawn(|| {
                let t0 = Instant::now();
                let (_t, overlapped) = g.enter_test(Duration::from_secs(10));
                (t0.elapsed(), overlapped)
            });
            std::thread::sleep(Duration::from_millis(200));
            drop(w);
            let (waited, overlapped) = h.join().unwrap();
            assert!(!overlapped);
            assert!(waited >= Duration::from_millis(150), "waited {waited:?}");
        });
        // Past its wait a test goes ahead of a check and says so.
        let _w = g.try_watch().unwrap();
        let (_t, overlapped) = g.enter_test(Duration::from_millis(20));
        assert!(overlapped);
        assert_eq!(g.tests(), 1);
    }
}
