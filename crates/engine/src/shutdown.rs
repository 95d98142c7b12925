//! The agent's stop, as an event: a flag that loops with work to do read as they go
//! (sessions, tests), and a socket that becomes readable once the flag is set, which
//! idle threads sleep on beside their own sockets (poll(2)) or with a timeout equal to
//! their next real deadline. An idle agent therefore never wakes to look at the flag:
//! it sleeps until a connection, a deadline of its own, or the stop.
//!
//! Signals set the flag first, then write the byte (signal-hook calls a signal's
//! actions in the order they were registered), so a woken thread always finds the
//! flag set. The byte is never read: once set, the socket stays readable for every
//! waiter, now and later.

use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

/// Without the wake socket (none could be made: no descriptor left), waiters look at
/// the flag this often instead.
const FALLBACK_POLL: Duration = Duration::from_millis(500);

/// A stop shared by the agent's threads; clones share it.
#[derive(Clone)]
pub struct Shutdown {
    flag: Arc<AtomicBool>,
    /// (read end, write end); None when the socket pair could not be made.
    wake: Option<Arc<(UnixStream, UnixStream)>>,
}

impl std::fmt::Debug for Shutdown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shutdown")
            .field("set", &self.is_set())
            .field("wakes", &self.wake.is_some())
            .finish_non_exhaustive()
    }
}

impl Default for Shutdown {
    fn default() -> Self {
        Shutdown::new()
    }
}

impl Shutdown {
    /// A stop not yet triggered. Without a descriptor for its socket pair, waiters
    /// fall back to looking at the flag every half second.
    pub fn new() -> Shutdown {
        let wake = UnixStream::pair()
            .and_then(|(r, w)| w.set_nonblocking(true).map(|()| (r, w)))
            .ok()
            .map(Arc::new);
        Shutdown {
            flag: Arc::new(AtomicBool::new(false)),
            wake,
        }
    }

    /// Stops: sets the flag, then wakes every waiter.
    pub fn trigger(&self) {
        self.flag.store(true, Ordering::SeqCst);
        if let Some(w) = &self.wake {
            // Non-blocking: one byte is enough, a full buffer means one is there.
            let _ = (&w.1).write(&[1]);
        }
    }

    pub fn is_set(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
    }

    /// The flag alone, for loops that only look at it (sessions, tests).
    pub fn flag(&self) -> &Arc<AtomicBool> {
        &self.flag
    }

    /// Triggers the stop on each of `signals` (the flag set before the wake-up).
    pub fn on_signals(&self, signals: &[i32]) -> io::Result<()> {
        for &sig in signals {
            signal_hook::flag::register(sig, self.flag.clone())?;
            if let Some(w) = &self.wake {
                signal_hook::low_level::pipe::register(sig, w.1.try_clone()?)?;
            }
        }
        Ok(())
    }

    /// The descriptor that becomes readable at the stop, for a caller's own poll
    /// set; None when there is none (then poll with [`Shutdown::poll_timeout`]).
    pub fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.wake.as_ref().map(|w| w.0.as_fd())
    }

    /// The poll(2) timeout for a sleep of at most `wait` (None: no deadline of the
    /// caller's own), bounded by the fallback's look at the flag when there is no
    /// wake socket. Rounded up to the next millisecond so that a deadline 0.4 ms away
    /// does not spin.
    pub fn poll_timeout(&self, wait: Option<Duration>) -> PollTimeout {
        let wait = match (wait, self.wake.is_some()) {
            (w, true) => w,
            (Some(w), false) => Some(w.min(FALLBACK_POLL)),
            (None, false) => Some(FALLBACK_POLL),
        };
        match wait {
            None => PollTimeout::NONE,
            Some(w) => {
                let ms = w.as_micros().div_ceil(1000);
                PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX)
            }
        }
    }

    /// Sleeps until the stop or `at`: true when stopped, false when `at` came first.
    pub fn wait_until(&self, at: Instant) -> bool {
        loop {
            if self.is_set() {
                return true;
            }
            let left = at.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            self.sleep(Some(left));
        }
    }

    /// Sleeps until the stop (no deadline).
    pub fn wait(&self) {
        while !self.is_set() {
            self.sleep(None);
        }
    }

    /// One poll(2) on the wake socket alone, at most `wait`.
    fn sleep(&self, wait: Option<Duration>) {
        let timeout = self.poll_timeout(wait);
        if let Some(fd) = self.fd() {
            let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
            if poll(&mut fds, timeout).is_err() {
                // EINTR (a signal): the caller's loop looks at the flag and the time
                // again; a short pause so a storm of signals cannot spin it.
                std::thread::sleep(Duration::from_millis(1));
            }
        } else {
            let ms = i32::from(timeout).max(0);
            std::thread::sleep(Duration::from_millis(ms.unsigned_abs().into()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiter_sleeps_until_its_deadline_when_nothing_stops() {
        let s = Shutdown::new();
        let t0 = Instant::now();
        assert!(!s.wait_until(t0 + Duration::from_millis(50)));
        assert!(t0.elapsed() >= Duration::from_millis(50));
        assert!(!s.is_set());
    }

    #[test]
    fn trigger_wakes_every_waiter_long_before_its_deadline() {
        let s = Shutdown::new();
        let far = Instant::now() + Duration::from_mins(1);
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let s = s.clone();
                std::thread::spawn(move || (s.wait_until(far), Instant::now()))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(50));
        let at = Instant::now();
        s.trigger();
        for w in waiters {
            let (stopped, when) = w.join().unwrap();
            assert!(stopped);
            assert!(when.duration_since(at) < Duration::from_secs(5));
        }
        // Later waiters see it at once, and the flag is what sessions read.
        assert!(s.wait_until(far));
        s.wait();
        assert!(s.flag().load(Ordering::Relaxed));
    }

    #[test]
    fn the_wake_socket_is_readable_only_after_the_trigger() {
        let s = Shutdown::new();
        let readable = |s: &Shutdown| {
            let mut fds = [PollFd::new(s.fd().unwrap(), PollFlags::POLLIN)];
            poll(&mut fds, PollTimeout::ZERO).unwrap() == 1
        };
        assert!(!readable(&s));
        s.trigger();
        assert!(readable(&s));
        s.trigger();
        assert!(readable(&s), "still readable: the byte is never consumed");
    }

    #[test]
    fn a_signal_sets_the_flag_and_wakes_a_waiter() {
        let s = Shutdown::new();
        s.on_signals(&[signal_hook::consts::SIGUSR2]).unwrap();
        let w = s.clone();
        let waiter =
            std::thread::spawn(move || w.wait_until(Instant::now() + Duration::from_mins(1)));
        std::thread::sleep(Duration::from_millis(50));
        signal_hook::low_level::raise(signal_hook::consts::SIGUSR2).unwrap();
        assert!(waiter.join().unwrap(), "woken by the signal, flag set");
        assert!(s.is_set());
    }

    #[test]
    fn poll_timeouts_round_up_and_have_no_limit_without_a_deadline() {
        let s = Shutdown::new();
        assert_eq!(s.poll_timeout(None), PollTimeout::NONE);
        assert_eq!(
            i32::from(s.poll_timeout(Some(Duration::from_micros(400)))),
            1
        );
        assert_eq!(
            s.poll_timeout(Some(Duration::from_hours(2400))),
            PollTimeout::MAX
        );
        let no_socket = Shutdown {
            flag: Arc::default(),
            wake: None,
        };
        assert_eq!(i32::from(no_socket.poll_timeout(None)), 500);
        assert!(!no_socket.wait_until(Instant::now() + Duration::from_millis(20)));
        no_socket.trigger();
        assert!(no_socket.wait_until(Instant::now() + Duration::from_mins(1)));
    }
}
