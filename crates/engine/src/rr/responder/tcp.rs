//! The TCP responder: the session's data connections (one per client, each
//! cookie-bound by the handshake) are dealt to `workers` threads, each pinned to a
//! CPU, by the CPU that receives them (`steer`; round-robin when the workers are
//! placed by `--agent-cpu` or outnumber the CPUs); each
//! waits on its own epoll instance, which returns only the connections with a
//! request waiting, reads whole requests and writes whole blocks. The work per block
//! does not depend on how many connections a worker holds.
//!
//! The connections are edge-triggered, as in `bench/tcp_rr_ref.c`: a level-triggered
//! epoll polls every connection it returned a second time at the next wait, only to
//! drop it (one more `tcp_poll` of a socket per block, at 1024+ connections mostly
//! out of the cache). A connection is read until a read comes back short (drained:
//! the next bytes are a new edge), into the worker's room for two requests, so the
//! usual single request is one read, into a buffer that stays in the cache; only the
//! bytes of a request not yet whole are kept with their connection.

use std::io::Write;
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use nix::errno::Errno;
use nix::poll::PollTimeout;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use nix::sys::socket::{recv, MsgFlags};

use super::steer::Steer;
use super::{fan_out, Block, Serving, Tally};
use crate::rr::wire::{flip, response_header};

pub(super) struct Conn {
    sock: TcpStream,
    /// The bytes of a request not yet whole (at most a request's length).
    held: Vec<u8>,
    /// How many bytes `held` holds.
    got: usize,
    /// Requests answered on this connection.
    served: u64,
}

/// Readiness events taken per epoll_wait.
const EVENTS: usize = 256;
/// Event data of a worker's steering wakeup.
const WAKE: u64 = u64::MAX;

/// `allowed`: the CPUs steering may pin workers to (the agent's processor set,
/// `serve --cpus`, or every online CPU).
pub(in crate::rr) fn serve(
    conns: Vec<TcpStream>,
    workers: u32,
    shared: &Serving,
    deadline: Instant,
    allowed: &[u32],
) -> Tally {
    let block = Block::new(shared.block);
    let n = (workers as usize).clamp(1, conns.len().max(1));
    // Steered to the CPUs that receive them unless `--agent-cpu` placed the workers.
    let steer = if shared.pin.cpus().is_none() {
        Steer::new(n, allowed)
    } else {
        None
    };
    let mut groups: Vec<Vec<Conn>> = (0..n).map(|_| Vec::new()).collect();
    for (i, sock) in conns.into_iter().enumerate() {
        let _ = sock.set_nodelay(true);
        let _ = sock.set_write_timeout(Some(Duration::from_secs(10)));
        crate::rr::no_time_wait(&socket2::SockRef::from(&sock));
        let k = steer
            .as_ref()
            .and_then(|s| s.worker_for(&sock))
            .unwrap_or(i % n);
        if let Some(g) = groups.get_mut(k) {
            g.push(Conn {
                sock,
                held: vec![0u8; HEADER_LEN + shared.request as usize],
                got: 0,
                served: 0,
            });
        }
    }
    let (block, steer) = (&block, steer.as_ref());
    let work: Vec<(usize, Vec<Conn>)> = groups.into_iter().enumerate().collect();
    let own_cpu = |(k, _): &(usize, Vec<Conn>)| steer.and_then(|s| s.cpu(*k));
    fan_out(&shared.pin, work, own_cpu, |(k, g)| {
        worker(k, g, shared, deadline, block, steer)
    })
}

fn worker(
    k: usize,
    conns: Vec<Conn>,
    shared: &Serving,
    deadline: Instant,
    block: &Block,
    steer: Option<&Steer<Conn>>,
) -> Tally {
    let mut desk = Desk::new(shared, block);
    let Ok(ep) = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC) else {
        return desk.t;
    };
    let total = conns.len();
    // Slots keep their index (the event data) while they live; a connection that
    // died or moved to another worker leaves a free slot for one that moves in.
    let mut slots: Vec<Option<Conn>> = Vec::with_capacity(total);
    let mut free: Vec<usize> = Vec::with_capacity(total);
    let mut arrived: Vec<Conn> = Vec::new();
    let mut alive = 0usize;
    if let Some(s) = steer {
        if let Some(w) = s.waker(k) {
            let _ = ep.add(w, EpollEvent::new(EpollFlags::EPOLLIN, WAKE));
        }
    }
    for c in conns {
        alive += usize::from(admit(&ep, c, &mut slots, &mut free));
    }
    let mut events = vec![EpollEvent::empty(); EVENTS];
    // With steering a worker may be left without connections for a while: it waits
    // for some to move in until the end.
    while !shared.stop.load(Ordering::Relaxed)
        && Instant::now() < deadline
        && (alive > 0 || steer.is_some())
    {
        let n = match ep.wait(&mut events, PollTimeout::from(50u8)) {
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        };
        for ev in events.get(..n).unwrap_or_default() {
            if ev.data() == WAKE {
                if let Some(s) = steer {
                    s.take(k, &mut arrived);
                    for c in arrived.drain(..) {
                        alive += usize::from(admit(&ep, c, &mut slots, &mut free));
                    }
                }
                continue;
            }
            let i = ev.data() as usize;
            let Some(Some(c)) = slots.get_mut(i) else {
                continue;
            };
            // Where the request just read came from, before the answer (`steer`).
            let mut to = None;
            let recheck = |sock: &TcpStream| {
                to = steer.and_then(|s| s.worker_for(sock)).filter(|&w| w != k);
            };
            let ok = serve_one(c, &mut desk, recheck);
            // A finished connection is dropped, not moved.
            let to = to.filter(|_| ok);
            if ok && to.is_none() {
                continue;
            }
            let _ = ep.delete(&c.sock);
            alive -= 1;
            free.push(i);
            let gone = slots.get_mut(i).and_then(Option::take);
            if let (Some(s), Some(w), Some(c)) = (steer, to, gone) {
                s.send(w, c);
            }
        }
    }
    desk.t
}

/// Registers `c` with the worker's epoll in a free slot; false if epoll refused it
/// (the connection is then dropped: its client sees it closed).
fn admit(ep: &Epoll, c: Conn, slots: &mut Vec<Option<Conn>>, free: &mut Vec<usize>) -> bool {
    let i = free.pop().unwrap_or(slots.len());
    if ep
        .add(
            &c.sock,
            EpollEvent::new(EpollFlags::EPOLLIN | EpollFlags::EPOLLET, i as u64),
        )
        .is_err()
    {
        if i < slots.len() {
            free.push(i);
        }
        return false;
    }
    if let Some(slot) = slots.get_mut(i) {
        *slot = Some(c);
    } else {
        slots.push(Some(c));
    }
    true
}

/// What a worker serves with: its tallies, its read and answer buffers, the block's
/// checksum and the stall hook's state.
struct Desk<'a> {
    shared: &'a Serving,
    t: Tally,
    /// Room for two requests: one request alone is a short read.
    rx: Vec<u8>,
    tx: Vec<u8>,
    sum: u32,
    stalled: bool,
}

impl<'a> Desk<'a> {
    fn new(shared: &'a Serving, block: &Block) -> Desk<'a> {
        Desk {
            shared,
            t: Tally::default(),
            rx: vec![0u8; 2 * (HEADER_LEN + shared.request as usize)],
            tx: block.response_buffer(),
            sum: block.sum,
            stalled: false,
        }
    }
}

/// Reads what `c` has until a read comes back short (edge-triggered: the socket is
/// drained) and answers every whole request, calling `recheck` on the connection
/// just after reading one whose steering check is due (`steer::recheck_due`). False
/// when the connection is finished (closed, failed, or sent something that is not a
/// request).
fn serve_one(c: &mut Conn, d: &mut Desk<'_>, mut recheck: impl FnMut(&TcpStream)) -> bool {
    let msg = c.held.len();
    loop {
        // The part of a request kept from the last read first, then what is new.
        let held = c.got;
        if let (Some(dst), Some(src)) = (d.rx.get_mut(..held), c.held.get(..held)) {
            dst.copy_from_slice(src);
        }
        let room = d.rx.len() - held;
        let into = d.rx.get_mut(held..).unwrap_or_default();
        let n = match recv(c.sock.as_raw_fd(), into, MsgFlags::MSG_DONTWAIT) {
            Ok(0) => return false,
            Ok(n) => n,
            Err(Errno::EAGAIN) => return true,
            Err(Errno::EINTR) => continue,
            Err(_) => return false,
        };
        let end = held + n;
        let mut at = 0;
        while end - at >= msg {
            let req = d.rx.get(at..at + msg).and_then(|b| Header::read(b).ok());
            let shared = d.shared;
            let req = req.filter(|h| {
                h.kind == Kind::RrRequest && h.token == shared.token && h.len == shared.request
            });
            let Some(req) = req else {
                d.t.rejected += 1;
                let _ = c.sock.shutdown(std::net::Shutdown::Both);
                return false;
            };
            if super::steer::recheck_due(c.served) {
                recheck(&c.sock);
            }
            if !answer(c, &req, d) {
                return false;
            }
            at += msg;
        }
        c.got = end - at;
        if let (Some(dst), Some(src)) = (c.held.get_mut(..c.got), d.rx.get(at..end)) {
            dst.copy_from_slice(src);
        }
        if n < room {
            return true;
        }
    }
}

/// Answers request `req` on `c` with the block (and the test hooks).
fn answer(c: &mut Conn, req: &Header, d: &mut Desk<'_>) -> bool {
    let shared = d.shared;
    d.t.requests += 1;
    shared.maybe_stall(&mut d.stalled);
    response_header(&mut d.tx, req, d.sum, shared.block);
    let corrupt = shared.next_response_corrupt();
    if corrupt {
        flip(&mut d.tx);
    }
    let ok = c.sock.write_all(&d.tx).is_ok();
    if ok {
        c.served += 1;
        d.t.responses += 1;
        d.t.bytes_sent += d.tx.len() as u64;
    }
    if corrupt {
        flip(&mut d.tx);
    }
    ok
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::time::{Duration, Instant};

    use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
    use mtuperf_proto::msg::rr::RrHooks;

    use super::super::Serving;
    use crate::rr::wire::request_header;

    const TOKEN: u64 = 0x1234_5678_9abc_def0;
    const REQUEST: u32 = 128;
    const BLOCK: u32 = 8192;

    /// A connected pair: (the client's end, the agent's end).
    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (a, _) = l.accept().unwrap();
        (c, a)
    }

    fn request(seq: u64) -> Vec<u8> {
        let mut b = vec![0u8; HEADER_LEN + REQUEST as usize];
        request_header(&mut b, 7, TOKEN, seq, 0, REQUEST);
        b
    }

    /// Requests that arrive together (a client that did not wait for its answer) are
    /// all answered, in order, and one split across reads is put together: what any
    /// change to the worker's readiness handling must keep (edge-triggered epoll, tried
    /// in BENCHMARKS §4, reports new bytes only once).
    #[test]
    fn requests_sent_together_are_all_answered_in_order() {
        let (mut client, agent) = pair();
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let serving = Serving::new(TOKEN, BLOCK, REQUEST, RrHooks::default());
        let deadline = Instant::now() + Duration::from_secs(10);
        let tally = std::thread::scope(|s| {
            let srv = s.spawn(|| super::serve(vec![agent], 1, &serving, deadline, &[0]));
            // Three requests in one write, then one request split in two writes.
            let three: Vec<u8> = (1..=3).flat_map(request).collect();
            client.write_all(&three).unwrap();
            let mut answer = vec![0u8; HEADER_LEN + BLOCK as usize];
            for seq in 1..=3 {
                client.read_exact(&mut answer).unwrap();
                let h = Header::read(&answer).unwrap();
                assert_eq!((h.kind, h.seq, h.len), (Kind::RrResponse, seq, BLOCK));
            }
            let fourth = request(4);
            let (a, b) = fourth.split_at(10);
            client.write_all(a).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            client.write_all(b).unwrap();
            client.read_exact(&mut answer).unwrap();
            assert_eq!(Header::read(&answer).unwrap().seq, 4);
            drop(client);
            srv.join().unwrap()
        });
        assert_eq!((tally.requests, tally.responses, tally.rejected), (4, 4, 0));
        assert_eq!(tally.bytes_sent, 4 * (HEADER_LEN as u64 + u64::from(BLOCK)));
    }

    /// Pins the calling thread to `cpu`.
    fn pin(cpu: u32) {
        mtuperf_sys::affinity::pin_current_thread(&[cpu]).unwrap();
    }

    /// Steering: a connection made from one CPU (its handshake hands it to the worker
    /// there) but driven from another moves to the worker on the CPU its requests come
    /// from within its first requests, and is answered from there. Reading its
    /// incoming CPU just after the answer would see the client's quick ACK of that
    /// answer, sent from the worker's own CPU, and keep it where it was for 256
    /// requests (at 1024 clients, longer than a run).
    #[test]
    fn a_connection_moves_to_the_worker_on_the_cpu_of_its_requests() {
        let online = mtuperf_sys::affinity::online_cpus();
        let [a, b, ..] = online[..] else {
            eprintln!("skipped: steering needs two online CPUs");
            return;
        };
        // Two connections (steering needs two workers), both made from CPU a.
        let ((client, agent), (_idle, agent2)) = std::thread::scope(|s| {
            s.spawn(|| {
                pin(a);
                (pair(), pair())
            })
            .join()
            .unwrap()
        });
        let serving = Serving::new(TOKEN, BLOCK, REQUEST, RrHooks::default());
        let deadline = Instant::now() + Duration::from_secs(10);
        let (answered_from, tally) = std::thread::scope(|s| {
            let srv = s.spawn(|| super::serve(vec![agent, agent2], 2, &serving, deadline, &[a, b]));
            let answered_from = s
                .spawn(move || {
                    pin(b);
                    let mut client = client;
                    client
                        .set_read_timeout(Some(Duration::from_secs(5)))
                        .unwrap();
                    let mut answer = vec![0u8; HEADER_LEN + BLOCK as usize];
                    // As in a run, whose connections are all set up before the first
                    // request: a first request sent long after the handshake (more
                    // than the delayed-ACK timeout) leaves this end in quick-ACK mode.
                    std::thread::sleep(Duration::from_millis(100));
                    for seq in 1..=8 {
                        client.write_all(&request(seq)).unwrap();
                        // Read late: no ACK of this end's own (sent from CPU b when
                        // it reads) reaches the worker before it checks.
                        std::thread::sleep(Duration::from_millis(5));
                        client.read_exact(&mut answer).unwrap();
                    }
                    // Loopback runs the receiving TCP in the sender's softirq: the
                    // last answer's incoming CPU is the CPU of the worker that sent it.
                    mtuperf_sys::sockopt::incoming_cpu(&client).unwrap()
                })
                .join()
                .unwrap();
            serving
                .stop
                .store(true, std::sync::atomic::Ordering::Relaxed);
            (answered_from, srv.join().unwrap())
        });
        assert_eq!(tally.responses, 8);
        assert_eq!(
            answered_from, b,
            "answered from CPU {answered_from}, requests from CPU {b}"
        );
    }
}
