//! The TCP responder: the session's data connections (one per client, each
//! cookie-bound by the handshake) are dealt round-robin to `workers` threads; each
//! waits on its own epoll instance, which returns only the connections with a
//! request waiting, reads whole requests and writes whole blocks. The work per block
//! does not depend on how many connections a worker holds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};

use super::{fan_out, Block, Serving, Tally};
use crate::rr::wire::{flip, response_header};

struct Conn {
    sock: TcpStream,
    buf: Vec<u8>,
    got: usize,
    dead: bool,
}

/// Readiness events taken per epoll_wait.
const EVENTS: usize = 256;

pub(in crate::rr) fn serve(
    conns: Vec<TcpStream>,
    workers: u32,
    shared: &Serving,
    deadline: Instant,
) -> Tally {
    let block = Block::new(shared.block);
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
    let block = &block;
    fan_out(&shared.pin, groups, |g| worker(g, shared, deadline, block))
}

fn worker(mut conns: Vec<Conn>, shared: &Serving, deadline: Instant, block: &Block) -> Tally {
    let mut t = Tally::default();
    let mut tx = block.response_buffer();
    let mut stalled = false;
    let Ok(ep) = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC) else {
        return t;
    };
    let mut alive = 0usize;
    for (i, c) in conns.iter_mut().enumerate() {
        if ep
            .add(&c.sock, EpollEvent::new(EpollFlags::EPOLLIN, i as u64))
            .is_ok()
        {
            alive += 1;
        } else {
            c.dead = true;
        }
    }
    let mut events = vec![EpollEvent::empty(); EVENTS];
    while !shared.stop.load(Ordering::Relaxed) && Instant::now() < deadline && alive > 0 {
        let n = match ep.wait(&mut events, PollTimeout::from(50u8)) {
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        };
        for ev in events.get(..n).unwrap_or_default() {
            let Some(c) = conns.get_mut(ev.data() as usize) else {
                continue;
            };
            if c.dead {
                continue;
            }
            if !serve_one(c, shared, &mut t, &mut tx, block.sum, &mut stalled) {
                c.dead = true;
                alive -= 1;
                let _ = ep.delete(&c.sock);
            }
        }
    }
    t
}

/// Reads what `c` has; answers when a whole request is in. False when the
/// connection is finished (closed, failed, or sent something that is not a request).
fn serve_one(
    c: &mut Conn,
    shared: &Serving,
    t: &mut Tally,
    tx: &mut [u8],
    sum: u32,
    stalled: &mut bool,
) -> bool {
    let got = c.got;
    match c.sock.read(c.buf.get_mut(got..).unwrap_or_default()) {
        Ok(0) | Err(_) => return false,
        Ok(k) => c.got += k,
    }
    if c.got < c.buf.len() {
        return true;
    }
    c.got = 0;
    let req = Header::read(&c.buf).ok().filter(|h| {
        h.kind == Kind::RrRequest && h.token == shared.token && h.len == shared.request
    });
    let Some(req) = req else {
        t.rejected += 1;
        let _ = c.sock.shutdown(std::net::Shutdown::Both);
        return false;
    };
    t.requests += 1;
    shared.maybe_stall(stalled);
    response_header(tx, &req, sum, shared.block);
    let corrupt = shared.next_response_corrupt();
    if corrupt {
        flip(tx);
    }
    let ok = c.sock.write_all(tx).is_ok();
    if ok {
        t.responses += 1;
        t.bytes_sent += tx.len() as u64;
    }
    if corrupt {
        flip(tx);
    }
    ok
}
