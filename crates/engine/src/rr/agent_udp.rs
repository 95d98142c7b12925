//! The agent's UDP responder: `workers` threads share one socket (blocking
//! `recv_from` with a short timeout to notice the end). A datagram is answered only
//! when it comes from the control connection's address and one of the client's
//! registered ports AND carries the session token and a well-formed request header;
//! the answer goes back to that source and nowhere else. Everything else is counted
//! as rejected and dropped.
//!
//! One shared socket rather than one SO_REUSEPORT socket per worker: the kernel
//! spreads REUSEPORT traffic by 4-tuple, and the client sends from only a few sockets
//! (one per client thread), so REUSEPORT would leave most workers idle.

use std::io::ErrorKind;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Instant;

use mtuperf_proto::dgram::{checksum, Header, Kind, HEADER_LEN};

use super::serving::{Serving, Tally};
use super::wire::{flip, response_header};
use crate::payload::incompressible;

pub(super) fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    let canon = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 @ IpAddr::V4(_) => v4,
    };
    canon(a) == canon(b)
}

/// Serves until `shared.stop` or `deadline`; returns the summed tallies.
pub(super) fn serve(
    sock: &UdpSocket,
    workers: u32,
    shared: &Serving,
    peer: IpAddr,
    ports: &[u16],
    deadline: Instant,
) -> Tally {
    let payload = incompressible(shared.block as usize, 0x6d74_7570_6572_7272);
    let sum = checksum(&payload);
    let payload = &payload;
    thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| s.spawn(move || worker(sock, shared, peer, ports, deadline, payload, sum)))
            .collect();
        let mut total = Tally::default();
        for h in handles {
            if let Ok(t) = h.join() {
                total.add(&t);
            }
        }
        total
    })
}

fn worker(
    sock: &UdpSocket,
    shared: &Serving,
    peer: IpAddr,
    ports: &[u16],
    deadline: Instant,
    payload: &[u8],
    sum: u32,
) -> Tally {
    let mut t = Tally::default();
    let mut rx = vec![0u8; 65_536];
    let mut tx = vec![0u8; HEADER_LEN + payload.len()];
    if let Some(body) = tx.get_mut(HEADER_LEN..) {
        body.copy_from_slice(payload);
    }
    let mut stalled = false;
    let expect_len = HEADER_LEN + shared.request as usize;
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
        let valid = accept(&rx, n, from, shared, peer, ports, expect_len);
        let Some(req) = valid else {
            t.rejected += 1;
            continue;
        };
        t.requests += 1;
        shared.maybe_stall(&mut stalled);
        response_header(&mut tx, &req, sum, shared.block);
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

fn accept(
    rx: &[u8],
    n: usize,
    from: SocketAddr,
    shared: &Serving,
    peer: IpAddr,
    ports: &[u16],
    expect_len: usize,
) -> Option<Header> {
    if !same_ip(from.ip(), peer) || !ports.contains(&from.port()) || n != expect_len {
        return None;
    }
    let h = Header::read(rx.get(..n)?).ok()?;
    (h.kind == Kind::RrRequest && h.token == shared.token && h.len == shared.request).then_some(h)
}
