//! Connections accepted but not yet through their handshake: a global cap, and a
//! per-source cap of half of it so that one host flooding the port with silent
//! connections cannot take every slot and lock the other clients out.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, MutexGuard};

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
    pub(super) fn enter(&self, ip: IpAddr, max: usize) -> Result<(), &'static str> {
        let mut m = self.lock();
        let total: usize = m.values().sum();
        if total >= max {
            return Err("too many connections in handshake");
        }
        let mine = m.entry(ip).or_insert(0);
        // A real client needs at most 1 + 2 x max-streams connections in handshake at
        // once, far below half of the default cap of 1024.
        if *mine >= (max / 2).max(1) {
            return Err("too many connections in handshake from this address");
        }
        *mine += 1;
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
    use super::Pending;
    use std::net::IpAddr;

    #[test]
    fn one_source_gets_at_most_half() {
        let p = Pending::default();
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        for _ in 0..4 {
            p.enter(a, 8).unwrap();
        }
        assert!(p.enter(a, 8).is_err());
        for _ in 0..4 {
            p.enter(b, 8).unwrap();
        }
        assert!(p.enter(b, 8).is_err());
        p.leave(a);
        p.enter(a, 8).unwrap();
        assert!(
            p.enter("10.0.0.3".parse().unwrap(), 8).is_err(),
            "global cap"
        );
    }
}
