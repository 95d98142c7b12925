//! The agent's TCP server: the session's data connections (one per client, each
//! cookie-bound by the handshake) are dealt round-robin to `workers` threads; each
//! polls its connections, reads whole requests and writes whole blocks.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{checksum, Header, Kind, HEADER_LEN};
use nix::poll::{PollFd, PollFlags, PollTimeout};

use super::serving::{Serving, Tally};
use super::wire::{flip, response_header};
use crate::payload::incompressible;

struct Conn {
    sock: TcpStream,
    buf: Vec<u8>,
    got: usize,
    dead: bool,
}

pub(super) fn serve(
    conns: Vec<TcpStream>,
    workers: u32,
    shared: &Serving,
    deadline: Instant,
) -> Tally {
    let payload = incompressible(shared.block as usize, 0x6d74_7570_6572_7272);
    let sum = checksum(&payload);
    let n = (workers as usize).clamp(1, conns.len().max(1));
    let mut groups: Vec<Vec<Conn>> = (0..n).map(|_| Vec::new()).collect();
    for (i, sock) in conns.into_iter().enumerate() {
        let _ = sock.set_nodelay(true);
        let _ = sock.set_write_timeout(Some(Duration::from_secs(10)));
        if let Some(g) = groups.get_mut(i % n) {
            g.push(Conn {
                sock,
                buf: vec![0u8; HEADER_LEN + shared.request as usize],
                got: 0,
                dead: false,
            });
        }
    }
    let payload = &payload;
    thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|g| s.spawn(move || worker(g, shared, deadline, payload, sum)))
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
    mut conns: Vec<Conn>,
    shared: &Serving,
    deadline: Instant,
    payload: &[u8],
    sum: u32,
) -> Tally {
    let mut t = Tally::default();
    let mut tx = vec![0u8; HEADER_LEN + payload.len()];
    if let Some(body) = tx.get_mut(HEADER_LEN..) {
        body.copy_from_slice(payload);
    }
    let mut stalled = false;
    let socks: Vec<TcpStream> = conns
        .iter()
        .filter_map(|c| c.sock.try_clone().ok())
        .collect();
    let mut pfds: Vec<PollFd<'_>> = socks
        .iter()
        .map(|s| PollFd::new(s.as_fd(), PollFlags::POLLIN))
        .collect();
    while !shared.stop.load(Ordering::Relaxed)
        && Instant::now() < deadline
        && conns.iter().any(|c| !c.dead)
    {
        match nix::poll::poll(&mut pfds, PollTimeout::from(50u8)) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(_) => break,
        }
        for (pfd, c) in pfds.iter_mut().zip(conns.iter_mut()) {
            if c.dead || pfd.revents().is_none_or(|f| f.is_empty()) {
                continue;
            }
            let got = c.got;
            match c.sock.read(c.buf.get_mut(got..).unwrap_or_default()) {
                Ok(0) | Err(_) => {
                    c.dead = true;
                    pfd.set_events(PollFlags::empty());
                    continue;
                }
                Ok(k) => c.got += k,
            }
            if c.got < c.buf.len() {
                continue;
            }
            c.got = 0;
            let req = Header::read(&c.buf).ok().filter(|h| {
                h.kind == Kind::RrRequest && h.token == shared.token && h.len == shared.request
            });
            let Some(req) = req else {
                t.rejected += 1;
                c.dead = true;
                let _ = c.sock.shutdown(std::net::Shutdown::Both);
                continue;
            };
            t.requests += 1;
            shared.maybe_stall(&mut stalled);
            response_header(&mut tx, &req, sum, shared.block);
            let corrupt = shared.next_response_corrupt();
            if corrupt {
                flip(&mut tx);
            }
            if c.sock.write_all(&tx).is_ok() {
                t.responses += 1;
                t.bytes_sent += tx.len() as u64;
            } else {
                c.dead = true;
            }
            if corrupt {
                flip(&mut tx);
            }
        }
    }
    t
}
