//! What the UDP responder answers: a datagram from the control connection's address
//! and one of the client's registered ports (a bitmap: constant time whatever their
//! number), of a request's exact length, carrying the session token and a well-formed
//! request header.

use std::net::{IpAddr, SocketAddr};

use mtuperf_proto::dgram::{Header, Kind};

use super::{same_ip, Serving};

/// The set of registered source ports, one bit per port.
struct Ports([u64; 1024]);

impl Ports {
    fn of(ports: &[u16]) -> Box<Ports> {
        let mut set = Box::new(Ports([0; 1024]));
        for &p in ports {
            if let Some(w) = set.0.get_mut(usize::from(p) / 64) {
                *w |= 1 << (p % 64);
            }
        }
        set
    }

    fn contains(&self, p: u16) -> bool {
        self.0
            .get(usize::from(p) / 64)
            .is_some_and(|w| w & (1 << (p % 64)) != 0)
    }
}

/// What every worker checks a datagram against.
pub(super) struct Allowed<'a> {
    pub shared: &'a Serving,
    peer: IpAddr,
    ports: Box<Ports>,
    pub expect_len: usize,
}

impl Allowed<'_> {
    pub fn new<'a>(
        shared: &'a Serving,
        peer: IpAddr,
        ports: &[u16],
        expect_len: usize,
    ) -> Allowed<'a> {
        Allowed {
            shared,
            peer,
            ports: Ports::of(ports),
            expect_len,
        }
    }
}

pub(super) fn accept(rx: &[u8], n: usize, from: SocketAddr, a: &Allowed<'_>) -> Option<Header> {
    if !same_ip(from.ip(), a.peer) || !a.ports.contains(from.port()) || n != a.expect_len {
        return None;
    }
    let h = Header::read(rx.get(..n)?).ok()?;
    let s = a.shared;
    (h.kind == Kind::RrRequest && h.token == s.token && h.len == s.request).then_some(h)
}

#[cfg(test)]
mod tests {
    use super::Ports;

    #[test]
    fn port_set_holds_exactly_the_registered_ports() {
        let set = Ports::of(&[1, 63, 64, 40_000, 65_535]);
        for p in [1, 63, 64, 40_000, 65_535] {
            assert!(set.contains(p), "{p}");
        }
        for p in [0, 2, 62, 65, 39_999, 65_534] {
            assert!(!set.contains(p), "{p}");
        }
    }
}
