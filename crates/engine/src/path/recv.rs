//! Receiving a probe's answer: the wait until a deadline that the ICMP echo, the
//! forward probe and the reverse probe share, and the reading of the error queue
//! that turns a "message too long" into the MTU it names.

use std::net::UdpSocket;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use mtuperf_sys::sockopt::{self, Origin};

use super::search::Outcome;

/// Receives on `sock` until `deadline`. `datagram` sees each datagram received,
/// `error` runs after a receive failed (other than the timeout); either ends the
/// wait with `Break(value)`. None when the deadline passed first.
pub fn until<T>(
    sock: &UdpSocket,
    deadline: Instant,
    buf: &mut [u8],
    mut datagram: impl FnMut(&[u8]) -> ControlFlow<T>,
    mut error: impl FnMut() -> ControlFlow<T>,
) -> Option<T> {
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let _ = sock.set_read_timeout(Some(left.max(Duration::from_micros(100))));
        let step = match sock.recv(buf) {
            Ok(n) => datagram(buf.get(..n).unwrap_or_default()),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return None
            }
            Err(_) => error(),
        };
        if let ControlFlow::Break(v) = step {
            return Some(v);
        }
    }
    None
}

/// Reads the error queue after a send or receive failed: the last "message too
/// long" it holds, with the MTU and who reported it (None: this host).
pub fn error_outcome(sock: &UdpSocket, v6: bool) -> Option<Outcome> {
    let mut out = None;
    while let Ok(Some(e)) = sockopt::recv_err(sock, v6) {
        if e.errno == libc::EMSGSIZE {
            out = Some(Outcome::TooBig {
                mtu: e.info,
                from: if e.origin == Origin::Local {
                    None
                } else {
                    e.offender
                },
            });
        }
    }
    out
}

/// `Break` with the error queue's outcome, if it holds one.
pub fn break_on_error(sock: &UdpSocket, v6: bool) -> ControlFlow<Outcome> {
    error_outcome(sock, v6).map_or(ControlFlow::Continue(()), ControlFlow::Break)
}
