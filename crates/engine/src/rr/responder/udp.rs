//! The UDP responder: `workers` threads share one socket (blocking `recv_from` with a
//! short timeout to notice the end). A datagram is answered only when it comes from
//! the control connection's address and one of the client's registered ports AND
//! carries the session token and a well-formed request header; the answer goes back
//! to that source and nowhere else. Everything else is counted as rejected and
//! dropped. Per datagram the work is one recv, one send and constant-time checks
//! (the registered ports are a bitmap), whatever the number of clients.
//!
//! One shared socket rather than one SO_REUSEPORT socket per worker: the kernel
//! spreads REUSEPORT traffic by 4-tuple, and the client sends from only a few sockets
//! (one per client thread), so REUSEPORT would leave most workers idle.

use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::Instant;

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};

use super::{fan_out, same_ip, Block, Serving, Tally};
use crate::rr::wire::{flip, response_header};

/// What one queued request costs the responder socket's receive buffer: the kernel
/// charges an skb's truesize, not the datagram's length, and a small datagram
/// received over veth or a NIC is charged about 1–2 KiB. Budget 2 KiB.
const REQUEST_TRUESIZE: u64 = 2048;
/// The floor every responder socket gets (as the requester's sockets).
const RCVBUF_FLOOR: u64 = 4 << 20;
/// The most a responder asks for: 4096 clients' requests with room to spare.
const RCVBUF_CEILING: u64 = 64 << 20;

/// Sizes the responder socket's receive buffer so every request in flight fits: in
/// a closed loop each of `clients` has one outstanding, and the workers may all be
/// busy while they arrive. Beyond `net.core.rmem_max` only SO_RCVBUFFORCE (root,
/// CAP_NET_ADMIN) can grant it. Returns a warning when the socket got less than the
/// clients need: their requests would then be dropped as RcvbufErrors, and the loss
/// would be the socket's, not the path's.
pub(in crate::rr) fn hold_requests(sock: &UdpSocket, clients: u32) -> Option<String> {
    let want = (u64::from(clients) * REQUEST_TRUESIZE).clamp(RCVBUF_FLOOR, RCVBUF_CEILING);
    // The kernel reports (and charges against) twice what was asked.
    let granted = || mtuperf_sys::sockopt::rcvbuf(sock).map_or(0, u64::from) / 2;
    if granted() >= want {
        return None;
    }
    let asked = u32::try_from(want).unwrap_or(u32::MAX);
    let _ = mtuperf_sys::sockopt::set_rcvbuf_force(sock, asked);
    let got = granted();
    (got < want).then(|| {
        format!(
            "UDP responder receive buffer {} KiB for {clients} clients' requests, which need {} KiB: requests may be dropped by the socket (RcvbufErrors); raise net.core.rmem_max or run the agent with CAP_NET_ADMIN",
            got / 1024,
            want / 1024
        )
    })
}

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
struct Allowed<'a> {
    shared: &'a Serving,
    peer: IpAddr,
    ports: Box<Ports>,
    expect_len: usize,
}

/// Serves until `shared.stop` or `deadline`; returns the summed tallies.
pub(in crate::rr) fn serve(
    sock: &UdpSocket,
    workers: u32,
    shared: &Serving,
    peer: IpAddr,
    ports: &[u16],
    deadline: Instant,
) -> Tally {
    let block = Block::new(shared.block);
    let allowed = Allowed {
        shared,
        peer,
        ports: Ports::of(ports),
        expect_len: HEADER_LEN + shared.request as usize,
    };
    let (allowed, block) = (&allowed, &block);
    fan_out(&shared.pin, (0..workers.max(1)).collect(), |_| {
        worker(sock, allowed, deadline, block)
    })
}

fn worker(sock: &UdpSocket, a: &Allowed<'_>, deadline: Instant, block: &Block) -> Tally {
    let shared = a.shared;
    let mut t = Tally::default();
    let mut rx = vec![0u8; 65_536];
    let mut tx = block.response_buffer();
    let mut stalled = false;
    while !shared.stop.load(Ordering::Relaxed) && Instant::now() < deadline {
        let (n, from) = match sock.recv_from(&mut rx) {
            Ok(x) => x,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                continue
            }
            Err(_) => continue,
        };
        let Some(req) = accept(&rx, n, from, a) else {
            t.rejected += 1;
            continue;
        };
        t.requests += 1;
        shared.maybe_stall(&mut stalled);
        response_header(&mut tx, &req, block.sum, shared.block);
        let corrupt = shared.next_response_corrupt();
        if corrupt {
            flip(&mut tx);
        }
        if let Ok(sent) = sock.send_to(&tx, from) {
            t.responses += 1;
            t.bytes_sent += sent as u64;
        }
        if corrupt {
            flip(&mut tx);
        }
    }
    t
}

fn accept(rx: &[u8], n: usize, from: SocketAddr, a: &Allowed<'_>) -> Option<Header> {
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
    fn a_responder_socket_holds_4096_clients_requests() {
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let warning = super::hold_requests(&sock, 4096);
        let got = u64::from(mtuperf_sys::sockopt::rcvbuf(&sock).unwrap()) / 2;
        let need = 4096 * super::REQUEST_TRUESIZE;
        // With CAP_NET_ADMIN (root: the test suite's and CI's setting) SO_RCVBUFFORCE grants it;
        // otherwise the shortfall must be said, never silent.
        if has_net_admin() {
            assert!(got >= need, "got {got} B, need {need} B; {warning:?}");
            assert_eq!(warning, None);
        } else if got < need {
            let w = warning.expect("a short buffer is reported");
            assert!(w.contains("4096 clients") && w.contains("rmem_max"), "{w}");
        }
    }

    /// CAP_NET_ADMIN in the effective set, which SO_RCVBUFFORCE needs.
    fn has_net_admin() -> bool {
        use mtuperf_lab::env::{parse_cap_eff, CAP_NET_ADMIN};
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| parse_cap_eff(&s))
            .is_some_and(|caps| caps & (1 << CAP_NET_ADMIN) != 0)
    }

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
