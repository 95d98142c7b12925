//! Connections accepted but not yet through their handshake: a global cap, and a
//! fair share of it per source address, so that a few hosts flooding the port with
//! silent connections cannot take every slot and lock the other clients out.
//!
//! The share shrinks as sources arrive: with `n` sources holding slots (the asking one
//! included), each may hold `max / (n + 1)`, so `max / (n + 1)` slots stay free for a
//! newcomer whatever the `n` sources do. One source alone gets half (a real client
//! needs far fewer: 1 + 2 × its streams, or an rr step's clients connecting one after
//! another); two get a third each. Slots held beyond a share that has since shrunk
//! come back within one handshake timeout, the longest a connection stays here.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard};

/// A share never shrinks below this many slots (or the cap, when it is smaller):
/// room for one client's control connection and a few data connections at once.
const MIN_SHARE: usize = 8;

/// Which cap a connection met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Full {
    /// Every slot is taken.
    All { max: usize },
    /// This source holds its share.
    Share { share: usize, sources: usize },
}

impl std::fmt::Display for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Full::All { max } => write!(f, "all {max} handshake slots taken"),
            Full::Share { share, sources } => write!(
                f,
                "this address holds its share of the handshake slots ({share}; source addresses in handshake: {sources})"
            ),
        }
    }
}

#[derive(Default)]
pub(super) struct Pending {
    by_source: Mutex<HashMap<IpAddr, usize>>,
}

impl Pending {
    fn lock(&self) -> MutexGuard<'_, HashMap<IpAddr, usize>> {
        match self.by_source.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Takes a slot for `ip`, or says which cap is reached.
    pub(super) fn enter(&self, ip: IpAddr, max: usize) -> Result<(), Full> {
        let mut m = self.lock();
        let total: usize = m.values().sum();
        if total >= max {
            return Err(Full::All { max });
        }
        let sources = m.len() + usize::from(!m.contains_key(&ip));
        let share = (max / (sources + 1)).max(MIN_SHARE.min(max));
        if m.get(&ip).copied().unwrap_or(0) >= share {
            return Err(Full::Share { share, sources });
        }
        *m.entry(ip).or_insert(0) += 1;
        Ok(())
    }

    pub(super) fn leave(&self, ip: IpAddr) {
        let mut m = self.lock();
        if let Some(n) = m.get_mut(&ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                m.remove(&ip);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{Full, Pending};
    use std::net::IpAddr;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    /// Takes slots for `ip` until refused; how many it got.
    fn fill(p: &Pending, ip: IpAddr, max: usize) -> usize {
        let mut n = 0;
        while p.enter(ip, max).is_ok() {
            n += 1;
        }
        n
    }

    #[test]
    fn two_flooding_sources_leave_room_for_a_third() {
        let p = Pending::default();
        assert_eq!(fill(&p, ip(1), 1024), 512, "one source alone: half");
        assert_eq!(fill(&p, ip(2), 1024), 341, "a second: a third");
        assert_eq!(
            p.enter(ip(2), 1024),
            Err(Full::Share {
                share: 341,
                sources: 2
            })
        );
        // A third source still gets in: a quarter of the slots, more than it needs.
        assert_eq!(fill(&p, ip(3), 1024), 171, "what the two left free");
        assert_eq!(p.enter(ip(4), 1024), Err(Full::All { max: 1024 }));
        // As the first source's connections end, it gets back only its new share.
        for _ in 0..512 {
            p.leave(ip(1));
        }
        assert_eq!(fill(&p, ip(1), 1024), 256);
    }

    #[test]
    fn many_sources_each_keep_a_floor_until_the_cap() {
        let p = Pending::default();
        for i in 1..=9 {
            p.enter(ip(i), 64).unwrap();
        }
        // Nine sources: 64 / 10 = 6 each, but a share never drops below 8.
        assert_eq!(fill(&p, ip(1), 64), 7);
        assert_eq!(
            p.enter(ip(1), 64),
            Err(Full::Share {
                share: 8,
                sources: 9
            })
        );
        // The floor can take every slot: then everyone is refused, by the cap.
        for i in 2..=9 {
            fill(&p, ip(i), 64);
        }
        assert_eq!(p.enter(ip(20), 64), Err(Full::All { max: 64 }));
        assert_eq!(p.lock().len(), 9, "a refused source holds nothing");
        let tiny = Pending::default();
        assert_eq!(fill(&tiny, ip(1), 4), 4, "a cap below the floor: all of it");
    }
}
