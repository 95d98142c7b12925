//! The cap on every connection the agent holds (in handshake, control sessions, data
//! connections handed to a session, the metrics listener's), set well below
//! RLIMIT_NOFILE so the listener always has descriptors left: beyond it a connection
//! is refused with a named reason at once instead of accept() failing with EMFILE for
//! everyone.
//!
//! Inside the cap, tests are admitted by what they will hold: a test's data
//! connections are promised to it when it is accepted ([`Conns::reserve`]), out of
//! what is left once room is kept for handshakes, control sessions and the metrics
//! listener. A test that does not fit is refused up front, by name, instead of being
//! accepted and then starved of connections together with every other one.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use nix::sys::resource::{getrlimit, setrlimit, Resource};

/// Descriptors kept for the listeners, UDP sockets of rr and path tests, files
/// read by doctor, and the standard streams.
const HEADROOM: u64 = 128;

pub struct Conns {
    live: AtomicUsize,
    cap: AtomicUsize,
    /// Connections no test may be promised: room for handshakes, control sessions
    /// and the metrics listener.
    kept: AtomicUsize,
    /// Connections promised to the tests being served.
    committed: Mutex<usize>,
}

/// One connection's share of the cap; released on drop.
pub struct ConnGuard(Arc<Conns>);

impl Drop for ConnGuard {
    fn drop(&mut self) {
        self.0.live.fetch_sub(1, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for ConnGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ConnGuard")
    }
}

/// Connections promised to one test; given back on drop.
pub struct Reservation {
    conns: Arc<Conns>,
    n: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut c = self.conns.committed();
        *c = c.saturating_sub(self.n);
    }
}

/// Why a test's connections were not promised: how many are free now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoRoom {
    pub free: usize,
    /// Promised to the tests being served.
    pub committed: usize,
}

impl Conns {
    pub fn new(cap: usize) -> Arc<Conns> {
        Arc::new(Conns {
            live: AtomicUsize::new(0),
            cap: AtomicUsize::new(cap),
            kept: AtomicUsize::new(0),
            committed: Mutex::new(0),
        })
    }

    /// The cap the process's present RLIMIT_NOFILE gives (before the agent raises it).
    pub fn for_this_process() -> Arc<Conns> {
        Conns::new(cap_for(nofile()))
    }

    fn committed(&self) -> MutexGuard<'_, usize> {
        match self.committed.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Sets the cap, and the room kept from tests for `handshakes` connections in
    /// handshake and `sessions` control connections (the metrics share is kept too).
    pub fn configure(&self, cap: usize, handshakes: usize, sessions: usize) {
        self.cap.store(cap, Ordering::Relaxed);
        let kept = handshakes.min(cap / 4) + sessions + metrics_share(cap);
        self.kept.store(kept, Ordering::Relaxed);
    }

    /// Takes a share, or None when the cap is reached.
    pub fn enter(self: &Arc<Self>) -> Option<ConnGuard> {
        let prev = self.live.fetch_add(1, Ordering::Relaxed);
        if prev >= self.cap() {
            self.live.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(ConnGuard(self.clone()))
    }

    /// Promises `n` connections to a test, or says how many are free.
    pub fn reserve(self: &Arc<Self>, n: usize) -> Result<Reservation, NoRoom> {
        let mut c = self.committed();
        let free = self.test_budget().saturating_sub(*c);
        if n > free {
            return Err(NoRoom {
                free,
                committed: *c,
            });
        }
        *c += n;
        Ok(Reservation {
            conns: self.clone(),
            n,
        })
    }

    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    pub fn cap(&self) -> usize {
        self.cap.load(Ordering::Relaxed)
    }

    /// Connections that tests may be promised together.
    pub fn test_budget(&self) -> usize {
        self.cap().saturating_sub(self.kept.load(Ordering::Relaxed))
    }

    /// Connections the metrics listener may hold at once.
    pub fn metrics_share(&self) -> usize {
        metrics_share(self.cap())
    }
}

/// The metrics listener's small share of the cap: 1/32 of it, 4 to 64 connections
/// (a Prometheus server or two scrape it, each over one connection at a time).
fn metrics_share(cap: usize) -> usize {
    (cap / 32).clamp(4, 64)
}

/// Raises the soft RLIMIT_NOFILE to the hard limit and returns the connection cap:
/// half of what is left after the headroom. Also the limit in force, for the log.
pub fn raise_nofile() -> (usize, u64) {
    let soft = match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) => {
            if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
                hard
            } else {
                soft
            }
        }
        Err(_) => 1024,
    };
    (cap_for(soft), soft)
}

/// The soft RLIMIT_NOFILE in force.
pub fn nofile() -> u64 {
    getrlimit(Resource::RLIMIT_NOFILE).map_or(1024, |(soft, _)| soft)
}

/// Half of the descriptors beyond the headroom (at least 16).
pub fn cap_for(nofile: u64) -> usize {
    let usable = nofile.saturating_sub(HEADROOM) / 2;
    usable.clamp(16, 1 << 20) as usize
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{cap_for, Conns, NoRoom};

    #[test]
    fn the_cap_is_held_and_released() {
        let c = Conns::new(2);
        let a = c.enter().unwrap();
        let _b = c.enter().unwrap();
        assert!(c.enter().is_none());
        assert_eq!(c.live(), 2);
        drop(a);
        assert!(c.enter().is_some());
        assert_eq!(cap_for(1024), 448);
        assert_eq!(cap_for(100), 16);
    }

    #[test]
    fn tests_are_promised_what_fits_and_the_rest_is_refused_with_what_is_free() {
        // RLIMIT_NOFILE 20000: 9936 connections; kept: 1024 handshakes, 4 sessions
        // and the metrics listener's 64. Two 4096-client rr tests fit, a third not.
        let c = Conns::new(0);
        c.configure(cap_for(20_000), 1024, 4);
        assert_eq!(c.cap(), 9936);
        assert_eq!(c.metrics_share(), 64);
        let a = c.reserve(4096).unwrap();
        let b = c.reserve(4096).unwrap();
        assert_eq!(
            c.reserve(4096).err(),
            Some(NoRoom {
                free: 9936 - 1024 - 4 - 64 - 8192,
                committed: 8192
            })
        );
        // What is free still goes to a smaller test; an ended test gives its share back.
        let small = c.reserve(600).unwrap();
        drop(a);
        let _c = c.reserve(4096).unwrap();
        drop((b, small));
        assert!(c.reserve(4096).is_ok());
        // A small cap keeps only a quarter of itself for handshakes.
        let tiny = Conns::new(0);
        tiny.configure(36, 1024, 4);
        assert_eq!(tiny.reserve(20).err().map(|e| e.free), Some(36 - 9 - 4 - 4));
    }
}
