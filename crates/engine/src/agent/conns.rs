//! The cap on every connection the agent holds (in handshake, control sessions and
//! data connections handed to a session), set well below RLIMIT_NOFILE so the
//! listener always has descriptors left: beyond it a connection is refused with a
//! named reason at once instead of accept() failing with EMFILE for everyone.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use nix::sys::resource::{getrlimit, setrlimit, Resource};

/// Descriptors kept for the listeners, UDP sockets of rr and path tests, files
/// read by doctor, and the standard streams.
const HEADROOM: u64 = 128;

pub struct Conns {
    live: AtomicUsize,
    cap: usize,
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

impl Conns {
    pub fn new(cap: usize) -> Arc<Conns> {
        Arc::new(Conns {
            live: AtomicUsize::new(0),
            cap,
        })
    }

    /// Takes a share, or None when the cap is reached.
    pub fn enter(self: &Arc<Self>) -> Option<ConnGuard> {
        let prev = self.live.fetch_add(1, Ordering::Relaxed);
        if prev >= self.cap {
            self.live.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(ConnGuard(self.clone()))
    }

    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    pub fn cap(&self) -> usize {
        self.cap
    }
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

/// Half of the descriptors beyond the headroom (at least 16).
pub fn cap_for(nofile: u64) -> usize {
    let usable = nofile.saturating_sub(HEADROOM) / 2;
    usable.clamp(16, 1 << 20) as usize
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{cap_for, Conns};

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
}
