//! A requester thread's hot loop: one thread multiplexes its share of the clients
//! over a few connected UDP sockets (client i sends from socket i mod n; answers are
//! routed by the client id in the datagram header) or one TCP connection per client.
//! The load shape (closed or open loop) only decides when each client's next request
//! is due and where its latency is measured from. Buffers are allocated once per
//! thread; what is due and what times out sits in queues (`slots::Schedule`), so the
//! work per block does not grow with the number of clients.
//!
//! Waiting: closed-loop UDP on one socket blocks in recv() itself (timeout
//! `RECV_TICK`, so lost requests are still found), then drains with MSG_DONTWAIT: two
//! syscalls per block (send, recv), as sockperf's ping-pong. Otherwise the thread
//! waits in epoll_wait, which returns only the sockets that have data; open loop
//! waits for sub-2 ms due times in ppoll on the epoll descriptor (epoll_wait counts
//! only whole milliseconds).

use std::io::{ErrorKind, Write};
use std::net::{TcpStream, UdpSocket};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mtuperf_proto::host::ThreadsCpu;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use nix::sys::time::TimeSpec;

use super::slots::{Schedule, Slot};
use crate::rr::hist::new_histogram;
use crate::rr::wire::request_header;
use crate::rr::RrCounts;

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
    /// Connected, non-blocking; client i of the thread sends from socket i mod n.
    Udp(Vec<UdpSocket>),
    /// One per client, non-blocking.
    Tcp(Vec<TcpStream>),
}

/// Live counters read by the interval ticker. Each requester thread has its own, on
/// cache lines of its own (the threads' `Live`s sit side by side in one Vec: without
/// the alignment, every block would move a line shared with another thread's counters
/// between their CPUs).
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Live {
    pub blocks: AtomicU64,
    /// Blocks that came after their request was counted lost (answered late).
    pub late: AtomicU64,
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
    /// This thread's CPU over its life (None if getrusage failed).
    pub cpu: Option<ThreadsCpu>,
}

const BEHIND_NS: u64 = 1_000_000;
/// Longest a closed-loop UDP thread blocks in recv() before checking its timeouts.
pub(super) const RECV_TICK: Duration = Duration::from_millis(5);
/// Longest any wait, so the stop flag is seen promptly.
const MAX_WAIT_NS: u64 = 10_000_000;
/// Readiness events taken per epoll_wait.
const EVENTS: usize = 256;

pub(super) fn now_ns(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

pub(super) struct Run<'a> {
    pub p: &'a Plan<'a>,
    pub slots: Vec<Slot>,
    pub sched: Schedule,
    pub counts: RrCounts,
    pub hist: Histogram<u64>,
    pub sendbuf: Vec<u8>,
    pub recvbuf: Vec<u8>,
    pub error: Option<String>,
    /// Slots waiting for a block (dead ones included).
    pub waiting: usize,
    /// Slots that died while waiting (never answered now).
    pub dead_waiting: usize,
    /// TCP: connections still alive.
    pub alive: usize,
    /// TCP: the thread's epoll instance (a dead connection is taken out of it).
    pub ep: Option<Epoll>,
    /// Closed loop: when the last block arrived (ns since t0), the next turn's `now`:
    /// its clients are sent at once, so the clock read that ended the block's latency
    /// serves the schedule too, and each round trip reads the clock twice.
    pub arrived_ns: Option<u64>,
}

pub fn run(p: &Plan<'_>) -> Outcome {
    let born = Instant::now();
    let first = |i: u32| match p.shape {
        Shape::Open { spacing_ns, .. } => u64::from(p.base + i) * spacing_ns,
        Shape::Closed => 0,
    };
    let open = matches!(p.shape, Shape::Open { .. });
    let mut r = Run {
        p,
        slots: vec![Slot::default(); p.clients as usize],
        sched: Schedule::new(p.clients, open.then_some(&first as &dyn Fn(u32) -> u64)),
        counts: RrCounts::default(),
        hist: new_histogram(),
        sendbuf: vec![0u8; mtuperf_proto::dgram::HEADER_LEN + p.request as usize],
        recvbuf: vec![0u8; 65_536],
        error: None,
        waiting: 0,
        dead_waiting: 0,
        alive: p.clients as usize,
        ep: None,
        arrived_ns: None,
    };
    for (i, s) in r.slots.iter_mut().enumerate() {
        s.due_ns = first(i as u32);
    }
    if let Err(e) = match &p.transport {
        Transport::Udp(sock) => r.run_udp(sock),
        Transport::Tcp(conns) => r.run_tcp(conns),
    } {
        r.error.get_or_insert(e);
    }
    let unanswered = r.close_accounts();
    let cpu = crate::cpu_res::own_thread(born);
    Outcome {
        counts: r.counts,
        hist: r.hist,
        unanswered,
        error: r.error,
        cpu,
    }
}

impl Run<'_> {
    /// The requests still waiting when the loop ended: lost when they waited at least
    /// the timeout (always, after the whole drain: an answer later than that counts
    /// as lost anyway), counted in `lost` and `lost_at_end`; the others were cut off
    /// by a stop before their timeout. Returns how many were cut off.
    fn close_accounts(&mut self) -> u64 {
        let now = now_ns(self.p.t0);
        let mut cut_off = 0;
        for s in self.slots.iter().filter(|s| s.waiting) {
            if now.saturating_sub(s.sent_ns) >= self.p.timeout_ns {
                self.counts.lost += 1;
                self.counts.lost_at_end += 1;
                self.p.live.lost.fetch_add(1, Ordering::Relaxed);
            } else {
                cut_off += 1;
            }
        }
        cut_off
    }

    fn run_udp(&mut self, socks: &[UdpSocket]) -> Result<(), String> {
        let open = matches!(self.p.shape, Shape::Open { .. });
        // One socket, closed loop: block in recv() itself (this thread owns the
        // socket, so switching it to blocking mode is local).
        if let ([sock], false) = (socks, open) {
            if sock.set_nonblocking(false).is_ok() && sock.set_read_timeout(Some(RECV_TICK)).is_ok()
            {
                while self.turn().is_some() {
                    if self.waiting > 0 {
                        self.recv_udp(sock, true);
                    }
                }
                return Ok(());
            }
        }
        self.watch(socks, EpollFlags::EPOLLIN)?;
        let mut events = vec![EpollEvent::empty(); EVENTS];
        while let Some(next) = self.turn() {
            for k in 0..self.wait(&mut events, next)? {
                let s = events.get(k).and_then(|ev| socks.get(ev.data() as usize));
                if let Some(s) = s {
                    self.recv_udp(s, false);
                }
            }
        }
        Ok(())
    }

    fn run_tcp(&mut self, conns: &[TcpStream]) -> Result<(), String> {
        // Edge-triggered (`recv_tcp` reads each until its message is whole or the
        // socket is drained), as in bench/tcp_rr_ref.c: a level-triggered epoll polls
        // every connection it returned a second time at the next wait, only to drop it.
        self.watch(conns, EpollFlags::EPOLLIN | EpollFlags::EPOLLET)?;
        let mut events = vec![EpollEvent::empty(); EVENTS];
        while let Some(next) = self.turn() {
            for k in 0..self.wait(&mut events, next)? {
                let i = events.get(k).map_or(usize::MAX, |ev| ev.data() as usize);
                if let Some(c) = conns.get(i) {
                    self.recv_tcp(i, c);
                }
            }
        }
        Ok(())
    }

    /// Registers `fds` (event data: their index) with a new epoll instance.
    fn watch<F: AsFd>(&mut self, fds: &[F], flags: EpollFlags) -> Result<(), String> {
        let ep = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(|e| format!("epoll: {e}"))?;
        for (i, f) in fds.iter().enumerate() {
            ep.add(f, EpollEvent::new(flags, i as u64))
                .map_err(|e| format!("epoll add: {e}"))?;
        }
        self.ep = Some(ep);
        Ok(())
    }

    /// Waits for readiness until `next` (ns since t0) at the latest; returns how many
    /// events are in `events`.
    fn wait(&self, events: &mut [EpollEvent], next: u64) -> Result<usize, String> {
        let Some(ep) = &self.ep else { return Ok(0) };
        let open = matches!(self.p.shape, Shape::Open { .. });
        let wait = next.saturating_sub(now_ns(self.p.t0)).min(MAX_WAIT_NS);
        let got = if open && wait > 0 && wait < 2_000_000 {
            // Sub-millisecond precision: wait on the epoll descriptor itself.
            let mut pfd = [PollFd::new(ep.0.as_fd(), PollFlags::POLLIN)];
            let ts = TimeSpec::from_duration(Duration::from_nanos(wait));
            match nix::poll::ppoll(&mut pfd, Some(ts), None) {
                Ok(0) => Ok(0),
                Ok(_) => ep.wait(events, PollTimeout::ZERO),
                Err(e) => Err(e),
            }
        } else {
            // Closed loop: round up (only a timeout or the end is due); open: down.
            let ms = if open {
                wait / 1_000_000
            } else {
                wait.div_ceil(1_000_000)
            };
            ep.wait(events, PollTimeout::from(ms as u16))
        };
        match got {
            Ok(n) => Ok(n),
            Err(nix::errno::Errno::EINTR) => Ok(0),
            Err(e) => Err(format!("waiting for answers: {e}")),
        }
    }

    /// One turn of the schedule: counts timeouts (and re-sends), sends what is due;
    /// returns the latest instant (ns since t0) to wake at, or None when the thread
    /// is done (end and drain passed, nothing left waiting, or stopped).
    fn turn(&mut self) -> Option<u64> {
        let p = self.p;
        let now = self.arrived_ns.take().unwrap_or_else(|| now_ns(p.t0));
        let stopping = p.stop.load(Ordering::Relaxed);
        if matches!(p.transport, Transport::Tcp(_)) && self.alive == 0 {
            return None;
        }
        if now >= p.end_ns || stopping {
            let drain_end = p.end_ns + p.timeout_ns.max(1_000_000_000);
            let left = self.waiting - self.dead_waiting;
            return (!stopping && now < drain_end && left > 0).then_some(drain_end);
        }
        while let Some((i, seq)) = self.sched.pop_expired(now) {
            let Some(s) = self.slots.get(i as usize).copied() else {
                continue;
            };
            if s.waiting && !s.dead && s.seq == seq {
                self.counts.lost += 1;
                p.live.lost.fetch_add(1, Ordering::Relaxed);
                self.send(i, now, s.intended_ns, false);
            }
        }
        while let Some(i) = self.sched.pop_due(now) {
            match self.slots.get_mut(i as usize) {
                Some(s) if s.waiting => s.overdue = true,
                Some(_) => self.sched.ready.push_back(i),
                None => {}
            }
        }
        while let Some(i) = self.sched.ready.pop_front() {
            self.send_fresh(i, now);
        }
        Some(self.sched.next_ns().min(p.end_ns))
    }

    fn send_fresh(&mut self, i: u32, now: u64) {
        let Some(s) = self.slots.get_mut(i as usize) else {
            return;
        };
        if s.dead {
            return;
        }
        s.overdue = false;
        let intended = match self.p.shape {
            Shape::Closed => now,
            Shape::Open { .. } => s.due_ns,
        };
        let lag = now.saturating_sub(s.due_ns.max(s.free_since_ns));
        if matches!(self.p.shape, Shape::Open { .. }) && lag > BEHIND_NS {
            self.counts.behind_sends += 1;
            self.counts.behind_sum_ns += lag;
            self.counts.behind_max_ns = self.counts.behind_max_ns.max(lag);
        }
        self.send(i, now, intended, true);
    }

    fn send(&mut self, i: u32, now: u64, intended: u64, fresh: bool) {
        let p = self.p;
        let udp = matches!(p.transport, Transport::Udp(_));
        let Some(s) = self.slots.get_mut(i as usize) else {
            return;
        };
        s.seq += 1;
        s.done <<= 1;
        if !s.waiting {
            self.waiting += 1;
        }
        s.waiting = true;
        s.intended_ns = intended;
        s.sent_ns = now;
        if let (
            Shape::Open {
                spacing_ns,
                clients,
            },
            true,
        ) = (p.shape, fresh)
        {
            s.due_ns += spacing_ns * u64::from(clients);
            self.sched.push_due(s.due_ns, i);
        }
        let seq = s.seq;
        if udp {
            self.sched.push_deadline(now + p.timeout_ns, i, seq);
        }
        request_header(&mut self.sendbuf, p.base + i, p.token, seq, now, p.request);
        if fresh && matches!(p.shape, Shape::Closed) {
            // A closed-loop block's latency starts here, at the send itself: the
            // schedule's work since `now` is this tool's, not the round trip's.
            s.intended_ns = now_ns(p.t0);
        }
        self.counts.requests_sent += 1;
        match &p.transport {
            // A refused or dropped datagram is a lost request, found by its timeout.
            Transport::Udp(socks) => {
                if let Some(sock) = socks.get(i as usize % socks.len().max(1)) {
                    let _ = mtuperf_sys::sock::send(sock, &self.sendbuf);
                }
            }
            Transport::Tcp(v) => {
                let res = v
                    .get(i as usize)
                    .map_or(Ok(()), |c| write_all_nb(c, &self.sendbuf));
                if let Err(e) = res {
                    self.kill(i as usize, format!("sending a request: {e}"));
                }
            }
        }
    }

    /// A TCP client's connection failed: it sends and waits no more.
    pub(super) fn kill(&mut self, i: usize, why: String) {
        let Some(s) = self.slots.get_mut(i) else {
            return;
        };
        if s.dead {
            return;
        }
        s.dead = true;
        self.alive -= 1;
        if s.waiting {
            self.dead_waiting += 1;
        }
        if let (Some(ep), Transport::Tcp(v)) = (&self.ep, &self.p.transport) {
            if let Some(c) = v.get(i) {
                let _ = ep.delete(c);
            }
        }
        self.error.get_or_insert(why);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A requester toward a UDP socket on loopback that never answers.
    fn silent_run(timeout_ns: u64, end_ns: u64, stop_after: Option<Duration>) -> Outcome {
        let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(sink.local_addr().unwrap()).unwrap();
        sock.set_nonblocking(true).unwrap();
        let (stop, live) = (AtomicBool::new(false), Live::default());
        let plan = Plan {
            base: 0,
            clients: 3,
            transport: Transport::Udp(vec![sock]),
            shape: Shape::Closed,
            block: 64,
            request: 16,
            token: 1,
            timeout_ns,
            verify: false,
            t0: Instant::now(),
            end_ns,
            stop: &stop,
            live: &live,
        };
        std::thread::scope(|s| {
            if let Some(after) = stop_after {
                let stop = &stop;
                s.spawn(move || {
                    std::thread::sleep(after);
                    stop.store(true, Ordering::Relaxed);
                });
            }
            run(&plan)
        })
    }

    #[test]
    fn a_path_that_answers_nothing_loses_every_request() {
        // 50 ms timeout, 200 ms run: each client re-sends after every timeout, and
        // the requests still waiting after the drain are lost too: 100%, not 90%.
        let o = silent_run(50_000_000, 200_000_000, None);
        let c = o.counts;
        assert!(c.requests_sent >= 6, "{c:?}");
        assert_eq!(c.blocks, 0);
        assert_eq!(c.lost, c.requests_sent, "{c:?}");
        assert_eq!(c.lost_at_end, 3, "{c:?}");
        assert_eq!(o.unanswered, 0);
        assert!(o.hist.is_empty());
    }

    #[test]
    fn a_stop_before_the_timeout_cuts_requests_off_unlost() {
        // A 10 s timeout: at the stop (100 ms in) no request has waited it out.
        let o = silent_run(
            10_000_000_000,
            5_000_000_000,
            Some(Duration::from_millis(100)),
        );
        let c = o.counts;
        assert_eq!((c.requests_sent, c.lost, c.lost_at_end), (3, 0, 0), "{c:?}");
        assert_eq!(o.unanswered, 3);
    }
}
