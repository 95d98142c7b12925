//! The client's hot loop: one thread multiplexes many clients over one connected UDP
//! socket (answers routed by the client id in the datagram header) or one TCP
//! connection per client, polled with ppoll. The load shape (closed or open loop) is
//! data: it only decides when each client's next request is due and where its
//! latency is measured from. Buffers are allocated once per thread.
//!
//! Closed-loop UDP skips ppoll: the thread blocks in recv() itself (timeout
//! `RECV_TICK`, so lost requests are still found), then drains with MSG_DONTWAIT.
//! That is two syscalls per block (send, recv), as sockperf's ping-pong, where
//! ppoll + recv would make three.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mtuperf_proto::dgram::{checksum, Header, Kind, HEADER_LEN};
use nix::poll::{PollFd, PollFlags};
use nix::sys::time::TimeSpec;

use super::hist::{new_histogram, record};
use super::wire::{fnv_update, request_header, FNV_INIT};
use super::RrCounts;

/// When requests are due.
#[derive(Debug, Clone, Copy)]
pub enum Shape {
    /// Each client sends its next request as soon as its block arrived.
    Closed,
    /// Requests are due every `spacing_ns` across all clients (client g first at
    /// g × spacing, then every `clients × spacing`); latency counts from the due time.
    Open { spacing_ns: u64, clients: u32 },
}

pub enum Transport {
    /// Connected, non-blocking.
    Udp(UdpSocket),
    /// One per client, non-blocking.
    Tcp(Vec<TcpStream>),
}

/// Live counters read by the interval ticker.
#[derive(Debug, Default)]
pub struct Live {
    pub blocks: AtomicU64,
    pub lost: AtomicU64,
    pub lat_sum_ns: AtomicU64,
    pub lat_max_ns: AtomicU64,
}

pub struct Plan<'a> {
    pub base: u32,
    pub clients: u32,
    pub transport: Transport,
    pub shape: Shape,
    pub block: u32,
    pub request: u32,
    pub token: u64,
    pub timeout_ns: u64,
    pub verify: bool,
    pub t0: Instant,
    pub end_ns: u64,
    pub stop: &'a AtomicBool,
    pub live: &'a Live,
}

pub struct Outcome {
    pub counts: RrCounts,
    pub hist: Histogram<u64>,
    /// Requests still unanswered when the drain after the end ran out.
    pub unanswered: u64,
    pub error: Option<String>,
}

const BEHIND_NS: u64 = 1_000_000;

#[derive(Clone, Copy)]
struct Slot {
    seq: u64,
    waiting: bool,
    due_ns: u64,
    intended_ns: u64,
    deadline_ns: u64,
    /// Bit d: block of request `seq - d` received.
    done: u64,
    highest_rx: u64,
    free_since_ns: u64,
    // TCP message being read.
    hdr: [u8; HEADER_LEN],
    hdr_got: usize,
    body_left: u64,
    fnv: u32,
    dead: bool,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            seq: 0,
            waiting: false,
            due_ns: 0,
            intended_ns: 0,
            deadline_ns: 0,
            done: 0,
            highest_rx: 0,
            free_since_ns: 0,
            hdr: [0; HEADER_LEN],
            hdr_got: 0,
            body_left: 0,
            fnv: 0,
            dead: false,
        }
    }
}

struct Run<'a> {
    p: &'a Plan<'a>,
    slots: Vec<Slot>,
    counts: RrCounts,
    hist: Histogram<u64>,
    sendbuf: Vec<u8>,
    recvbuf: Vec<u8>,
    error: Option<String>,
    /// Slots waiting for a block (a thread stops draining its socket at 0).
    waiting: usize,
}

/// Longest a closed-loop UDP thread blocks in recv() before checking its timeouts.
const RECV_TICK: Duration = Duration::from_millis(5);

fn now_ns(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

pub fn run(p: &Plan<'_>) -> Outcome {
    let mut slots = vec![Slot::default(); p.clients as usize];
    for (i, s) in slots.iter_mut().enumerate() {
        s.due_ns = match p.shape {
            Shape::Closed => 0,
            Shape::Open { spacing_ns, .. } => (u64::from(p.base) + i as u64) * spacing_ns,
        };
    }
    let mut r = Run {
        p,
        slots,
        counts: RrCounts::default(),
        hist: new_histogram(),
        sendbuf: vec![0u8; HEADER_LEN + p.request as usize],
        recvbuf: vec![0u8; 65_536],
        error: None,
        waiting: 0,
    };
    let fds: Vec<std::os::fd::BorrowedFd<'_>> = match &p.transport {
        Transport::Udp(s) => vec![s.as_fd()],
        Transport::Tcp(v) => v.iter().map(AsFd::as_fd).collect(),
    };
    let mut pfds: Vec<PollFd<'_>> = fds
        .iter()
        .map(|fd| PollFd::new(*fd, PollFlags::POLLIN))
        .collect();
    let drain_ns = p.timeout_ns.max(1_000_000_000);
    // This thread owns its UDP socket, so switching it to blocking mode is local.
    let blocking_udp = match (&p.transport, p.shape) {
        (Transport::Udp(s), Shape::Closed) => {
            s.set_nonblocking(false).is_ok() && s.set_read_timeout(Some(RECV_TICK)).is_ok()
        }
        _ => false,
    };
    loop {
        let now = now_ns(p.t0);
        let stopping = p.stop.load(Ordering::Relaxed);
        let ending = now >= p.end_ns || stopping;
        let next = if ending {
            if stopping
                || now >= p.end_ns + drain_ns
                || !r.slots.iter().any(|s| s.waiting && !s.dead)
            {
                break;
            }
            p.end_ns + drain_ns
        } else {
            r.send_due(now)
        };
        if let (true, Transport::Udp(sock)) = (blocking_udp, &p.transport) {
            if r.waiting > 0 {
                r.recv_udp(sock, true);
            }
            continue;
        }
        let wait = next.saturating_sub(now_ns(p.t0)).min(10_000_000);
        let ts = TimeSpec::from_duration(Duration::from_nanos(wait));
        match nix::poll::ppoll(&mut pfds, Some(ts), None) {
            Ok(0) | Err(nix::errno::Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => {
                r.error = Some(format!("poll: {e}"));
                break;
            }
        }
        for (i, pfd) in pfds.iter().enumerate() {
            let ready = pfd.revents().is_some_and(|f| !f.is_empty());
            if ready {
                match &p.transport {
                    Transport::Udp(s) => r.recv_udp(s, false),
                    Transport::Tcp(v) => {
                        if let Some(s) = v.get(i) {
                            r.recv_tcp(i, s);
                        }
                    }
                }
            }
        }
        if matches!(p.transport, Transport::Tcp(_)) && r.slots.iter().all(|s| s.dead) {
            break;
        }
    }
    let unanswered = r.slots.iter().filter(|s| s.waiting).count() as u64;
    Outcome {
        counts: r.counts,
        hist: r.hist,
        unanswered,
        error: r.error,
    }
}

impl Run<'_> {
    /// Sends every due request and re-sends timed-out ones; returns the next instant
    /// (ns since t0) something is due.
    fn send_due(&mut self, now: u64) -> u64 {
        let mut next = u64::MAX;
        for i in 0..self.slots.len() {
            let Some(s) = self.slots.get(i).copied() else {
                continue;
            };
            if s.dead {
                continue;
            }
            if s.waiting {
                if now >= s.deadline_ns {
                    self.counts.lost += 1;
                    self.p.live.lost.fetch_add(1, Ordering::Relaxed);
                    self.send(i, now, s.intended_ns, false);
                }
            } else if now >= s.due_ns {
                let intended = match self.p.shape {
                    Shape::Closed => now,
                    Shape::Open { .. } => s.due_ns,
                };
                let ready = s.due_ns.max(s.free_since_ns);
                let lag = now.saturating_sub(ready);
                if matches!(self.p.shape, Shape::Open { .. }) && lag > BEHIND_NS {
                    self.counts.behind_sends += 1;
                    self.counts.behind_sum_ns += lag;
                    self.counts.behind_max_ns = self.counts.behind_max_ns.max(lag);
                }
                self.send(i, now, intended, true);
            }
            if let Some(s) = self.slots.get(i) {
                next = next.min(if s.waiting { s.deadline_ns } else { s.due_ns });
            }
        }
        next
    }

    fn send(&mut self, i: usize, now: u64, intended: u64, fresh: bool) {
        let udp = matches!(self.p.transport, Transport::Udp(_));
        let Some(s) = self.slots.get_mut(i) else {
            return;
        };
        s.seq += 1;
        s.done <<= 1;
        if !s.waiting {
            self.waiting += 1;
        }
        s.waiting = true;
        s.intended_ns = intended;
        s.deadline_ns = if udp {
            now + self.p.timeout_ns
        } else {
            u64::MAX
        };
        if let (
            Shape::Open {
                spacing_ns,
                clients,
            },
            true,
        ) = (self.p.shape, fresh)
        {
            s.due_ns += spacing_ns * u64::from(clients);
        }
        let seq = s.seq;
        let client = self.p.base + i as u32;
        request_header(
            &mut self.sendbuf,
            client,
            self.p.token,
            seq,
            now,
            self.p.request,
        );
        self.counts.requests_sent += 1;
        let res = match &self.p.transport {
            Transport::Udp(sock) => sock.send(&self.sendbuf).map(|_| ()),
            Transport::Tcp(v) => v.get(i).map_or(Ok(()), |c| write_all_nb(c, &self.sendbuf)),
        };
        // UDP: a refused or dropped send is a lost request, found by its timeout.
        if let (Err(e), false) = (res, udp) {
            if let Some(s) = self.slots.get_mut(i) {
                s.dead = true;
            }
            self.error.get_or_insert(format!("sending a request: {e}"));
        }
    }

    /// Reads every answer waiting on the socket. With `block_first` the first read
    /// blocks (up to the socket's read timeout) and the rest do not.
    fn recv_udp(&mut self, sock: &UdpSocket, block_first: bool) {
        let mut block = block_first;
        loop {
            let got = if block {
                sock.recv(&mut self.recvbuf)
            } else {
                nix::sys::socket::recv(
                    sock.as_raw_fd(),
                    &mut self.recvbuf,
                    nix::sys::socket::MsgFlags::MSG_DONTWAIT,
                )
                .map_err(std::io::Error::from)
            };
            block = false;
            let n = match got {
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return,
                Err(_) => continue,
            };
            let Some(dgram) = self.recvbuf.get(..n) else {
                return;
            };
            let ok = Header::read(dgram).ok().filter(|h| {
                h.kind == Kind::RrResponse
                    && h.token == self.p.token
                    && h.len == self.p.block
                    && n == HEADER_LEN + self.p.block as usize
                    && h.client >= self.p.base
                    && h.client < self.p.base + self.p.clients
            });
            let Some(h) = ok else {
                self.counts.invalid += 1;
                continue;
            };
            let corrupt = self.p.verify && dgram.get(HEADER_LEN..).map_or(0, checksum) != h.aux;
            if let Some(s) = self.slots.get_mut((h.client - self.p.base) as usize) {
                if answer(self.p, s, &mut self.counts, &mut self.hist, h.seq, corrupt) {
                    self.waiting -= 1;
                    // Nothing else is due on this socket: skip the read that would
                    // only say so (one syscall less per block at low load).
                    if self.waiting == 0 {
                        return;
                    }
                }
            }
        }
    }

    fn recv_tcp(&mut self, i: usize, mut sock: &TcpStream) {
        let Run {
            p,
            slots,
            counts,
            hist,
            recvbuf,
            error,
            waiting,
            ..
        } = self;
        let Some(s) = slots.get_mut(i) else { return };
        loop {
            let res = if s.hdr_got < HEADER_LEN {
                sock.read(s.hdr.get_mut(s.hdr_got..).unwrap_or_default())
            } else {
                let want = usize::try_from(s.body_left)
                    .unwrap_or(usize::MAX)
                    .min(recvbuf.len());
                sock.read(recvbuf.get_mut(..want).unwrap_or_default())
            };
            let n = match res {
                Ok(0) => {
                    s.dead = true;
                    error.get_or_insert("the agent closed a data connection".into());
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    s.dead = true;
                    error.get_or_insert(format!("reading a block: {e}"));
                    return;
                }
            };
            if s.hdr_got < HEADER_LEN {
                s.hdr_got += n;
                if s.hdr_got == HEADER_LEN {
                    s.body_left = u64::from(p.block);
                    s.fnv = FNV_INIT;
                }
            } else {
                if p.verify {
                    s.fnv = fnv_update(s.fnv, recvbuf.get(..n).unwrap_or_default());
                }
                s.body_left -= n as u64;
            }
            if s.hdr_got == HEADER_LEN && s.body_left == 0 {
                s.hdr_got = 0;
                match Header::read(&s.hdr) {
                    Ok(h)
                        if h.kind == Kind::RrResponse && h.token == p.token && h.len == p.block =>
                    {
                        let corrupt = p.verify && s.fnv != h.aux;
                        if answer(p, s, counts, hist, h.seq, corrupt) {
                            *waiting -= 1;
                        }
                        // One request in flight per connection: nothing more to read.
                        return;
                    }
                    _ => {
                        counts.invalid += 1;
                        s.dead = true;
                        error.get_or_insert("malformed block header on a TCP connection".into());
                        return;
                    }
                }
            }
        }
    }
}

/// A block for request `seq` of slot `s` arrived; true when it completed the request
/// the slot was waiting for.
fn answer(
    p: &Plan<'_>,
    s: &mut Slot,
    counts: &mut RrCounts,
    hist: &mut Histogram<u64>,
    seq: u64,
    corrupt: bool,
) -> bool {
    let now = now_ns(p.t0);
    let udp = matches!(p.transport, Transport::Udp(_));
    if seq == 0 || seq > s.seq {
        counts.invalid += 1;
        return false;
    }
    if seq < s.highest_rx {
        counts.out_of_order += 1;
    }
    s.highest_rx = s.highest_rx.max(seq);
    let d = s.seq - seq;
    if d >= 64 {
        counts.late += 1;
        return false;
    }
    if s.done & (1 << d) != 0 {
        counts.duplicate += 1;
        return false;
    }
    s.done |= 1 << d;
    if corrupt {
        counts.corrupt += 1;
    }
    if d > 0 || !s.waiting {
        counts.late += 1;
        return false;
    }
    s.waiting = false;
    s.free_since_ns = now;
    if matches!(p.shape, Shape::Closed) {
        s.due_ns = now;
    }
    let lat = now.saturating_sub(s.intended_ns);
    if !udp && lat > p.timeout_ns {
        counts.late += 1;
    }
    record(hist, lat);
    counts.blocks += 1;
    p.live.blocks.fetch_add(1, Ordering::Relaxed);
    p.live.lat_sum_ns.fetch_add(lat, Ordering::Relaxed);
    p.live.lat_max_ns.fetch_max(lat, Ordering::Relaxed);
    true
}

/// Writes a small message on a non-blocking socket, waiting briefly if its buffer is full.
fn write_all_nb(mut sock: &TcpStream, mut buf: &[u8]) -> std::io::Result<()> {
    let give_up = Instant::now() + Duration::from_secs(10);
    while !buf.is_empty() {
        match sock.write(buf) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => buf = buf.get(n..).unwrap_or_default(),
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                if Instant::now() > give_up {
                    return Err(ErrorKind::TimedOut.into());
                }
                std::thread::sleep(Duration::from_micros(50));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
