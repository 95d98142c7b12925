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
//!
//! A test the agent admitted brings its data connections from its client's address
//! all at once (4096 for an rr step of 4096 TCP clients): its [`Allowance`] adds them
//! to that address's share and to the cap while the test waits for them. They were
//! promised by the admission (`conns::Conns::reserve`), so no one else's room is
//! taken.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

/// A share never shrinks below this many slots (or the cap, when it is smaller):
/// room for one client's control connection and a few data connections at once.
const MIN_SHARE: usize = 8;

/// Which cap a connection met.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Full {
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
struct State {
    /// Slots held, by source.
    by_source: HashMap<IpAddr, usize>,
    /// Slots beyond the share and the cap, for the data connections of admitted tests.
    allowed: HashMap<IpAddr, usize>,
}

#[derive(Default)]
pub(crate) struct Pending {
    state: Mutex<State>,
}

/// Room in handshake for the data connections of one admitted test; given back on
/// drop (once the test has them).
pub(crate) struct Allowance {
    pending: Arc<Pending>,
    ip: IpAddr,
    n: usize,
}

impl Drop for Allowance {
    fn drop(&mut self) {
        let mut s = self.pending.lock();
        if let Some(a) = s.allowed.get_mut(&self.ip) {
            *a = a.saturating_sub(self.n);
            if *a == 0 {
                s.allowed.remove(&self.ip);
            }
        }
    }
}

impl Pending {
    fn lock(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// Takes a slot for `ip`, or says which cap is reached.
    pub(crate) fn enter(&self, ip: IpAddr, max: usize) -> Result<(), Full> {
        let mut s = self.lock();
        let total: usize = s.by_source.values().sum();
        let allowed: usize = s.allowed.values().sum();
        if total >= max + allowed {
            return Err(Full::All { max });
        }
        let m = &s.by_source;
        let sources = m.len() + usize::from(!m.contains_key(&ip));
        let share = (max / (sources + 1)).max(MIN_SHARE.min(max));
        let mine = s.allowed.get(&ip).copied().unwrap_or(0) + share;
        if m.get(&ip).copied().unwrap_or(0) >= mine {
            return Err(Full::Share { share, sources });
        }
        *s.by_source.entry(ip).or_insert(0) += 1;
        Ok(())
    }

    pub(crate) fn leave(&self, ip: IpAddr) {
        let mut s = self.lock();
        if let Some(n) = s.by_source.get_mut(&ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                s.by_source.remove(&ip);
            }
        }
    }

    /// Lets `ip` hold `n` more slots, beyond its share and the cap, until the
    /// allowance is dropped.
    pub(crate) fn allow(self: &Arc<Self>, ip: IpAddr, n: usize) -> Allowance {
        *self.lock().allowed.entry(ip).or_insert(0) += n;
        Allowance {
            pending: self.clone(),
            ip,
            n,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{Full, Pending};
    use std::net::IpAddr;
    use std::sync::Arc;

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
        assert_eq!(
            p.lock().by_source.len(),
            9,
            "a refused source holds nothing"
        );
        let tiny = Pending::default();
        assert_eq!(fill(&tiny, ip(1), 4), 4, "a cap below the floor: all of it");
    }

    #[test]
    fn an_admitted_test_brings_its_data_connections_beyond_the_share_and_the_cap() {
        let p = Arc::new(Pending::default());
        assert_eq!(fill(&p, ip(1), 64), 32);
        // Two tests of 100 connections each admitted for 10.0.0.1.
        let a = p.allow(ip(1), 100);
        let b = p.allow(ip(1), 100);
        assert_eq!(fill(&p, ip(1), 64), 200);
        // Others keep their room: the cap grew by the allowances.
        assert_eq!(fill(&p, ip(2), 64), 21);
        // Given back: beyond the cap again until the connections leave.
        drop(a);
        assert_eq!(p.enter(ip(3), 64), Err(Full::All { max: 64 }));
        drop(b);
        assert!(p.lock().allowed.is_empty());
    }
}
