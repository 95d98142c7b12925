//! Receive polling: a receiver that reads a drained socket again at once instead of
//! blocking, for a while, before it blocks until data comes.
//!
//! Why a receiver would: on a blocking read the receiver sleeps with its socket
//! released, so every packet that arrives is processed (and wakes it) on the CPU
//! that took it in; across a veth pair or loopback that is the sender's CPU, the one
//! that bounds the transfer. A receiver that keeps reading holds its socket for most
//! of the time, so the packets that arrive meanwhile wait on the socket's backlog and
//! are processed on the receiver's own CPU when the read returns, and nothing has to
//! wake it. The price is the receiver's CPU, which then includes the empty reads:
//! what the kernel's busy polling (SO_BUSY_POLL) does below the socket on NICs with
//! NAPI, done above it, so it works on every link.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::ConnReport;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use super::ns;

/// A receiver's polling state (off when its poll time is zero).
pub(super) struct Poller {
    /// How long to keep reading a drained socket before blocking, ns (0: off).
    budget_ns: u64,
    /// When the current run of empty reads began.
    since: Option<Instant>,
    /// How long a block waits for data before the sender counts as silent.
    idle: Duration,
}

impl Poller {
    /// Polling for `poll` per drained socket (zero: off, and the socket stays
    /// blocking); a block gives up after `idle`.
    pub(super) fn new(sock: &TcpStream, poll: Duration, idle: Duration) -> Poller {
        let budget_ns = poll.as_nanos() as u64;
        // A socket that cannot be made non-blocking keeps blocking reads: no empty
        // read ever comes back, so the loop is the plain blocking one.
        let on = budget_ns > 0 && sock.set_nonblocking(true).is_ok();
        Poller {
            budget_ns: if on { budget_ns } else { 0 },
            since: None,
            idle,
        }
    }

    /// True when this receiver polls.
    #[inline]
    pub(super) fn on(&self) -> bool {
        self.budget_ns > 0
    }

    /// A read returned data: the next empty read starts a new run.
    #[inline]
    pub(super) fn got(&mut self) {
        self.since = None;
    }

    /// A read at `now` found the socket empty. Within the poll time: go on at once.
    /// Past it: block until the socket is readable (data, the end, or an error for
    /// the next read to see), booked in `r` as a wait; a sender silent for `idle`
    /// is a timeout. Returns the instant the receiver goes on from.
    pub(super) fn empty(
        &mut self,
        sock: &TcpStream,
        r: &mut ConnReport,
        now: Instant,
    ) -> std::io::Result<Instant> {
        let since = *self.since.get_or_insert(now);
        if ns(since, now) < self.budget_ns {
            return Ok(now);
        }
        self.since = None;
        let mut fds = [PollFd::new(sock.as_fd(), PollFlags::POLLIN)];
        let ms = u16::try_from(self.idle.as_millis()).unwrap_or(u16::MAX);
        let got = poll(&mut fds, PollTimeout::from(ms));
        let woke = Instant::now();
        r.waits += 1;
        r.wait_ns += ns(now, woke);
        match got {
            Ok(0) => Err(ErrorKind::TimedOut.into()),
            Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(woke),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn off_leaves_the_socket_blocking() {
        let (_a, b) = pair();
        let p = Poller::new(&b, Duration::ZERO, Duration::from_secs(1));
        assert!(!p.on());
        b.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let e = (&b).read(&mut [0u8; 8]).unwrap_err();
        // A blocking read waited for its timeout (EAGAIN after it, not at once).
        assert!(matches!(
            e.kind(),
            ErrorKind::WouldBlock | ErrorKind::TimedOut
        ));
    }

    #[test]
    fn empty_reads_go_on_within_the_poll_time_then_block_until_data() {
        let (mut a, b) = pair();
        let mut p = Poller::new(&b, Duration::from_millis(5), Duration::from_secs(5));
        assert!(p.on());
        let mut r = ConnReport::default();
        let t = Instant::now();
        // Empty, inside the poll time: no wait.
        assert_eq!(
            (&b).read(&mut [0u8; 8]).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
        assert_eq!(p.empty(&b, &mut r, t).unwrap(), t);
        assert_eq!(r.waits, 0);
        // Past it: blocks until the peer writes, and books one wait of that length.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            a.write_all(b"x").unwrap();
            a
        });
        let later = t + Duration::from_millis(6);
        let woke = p.empty(&b, &mut r, later).unwrap();
        let _a = writer.join().unwrap();
        assert_eq!(r.waits, 1);
        assert!(
            woke.duration_since(later) >= Duration::from_millis(40),
            "{r:?}"
        );
        assert_eq!(r.wait_ns, ns(later, woke));
        assert_eq!((&b).read(&mut [0u8; 8]).unwrap(), 1);
    }

    #[test]
    fn a_silent_sender_ends_a_block_after_the_idle_time() {
        let (_a, b) = pair();
        let mut p = Poller::new(&b, Duration::from_micros(1), Duration::from_millis(30));
        let mut r = ConnReport::default();
        let t = Instant::now();
        let _ = p.empty(&b, &mut r, t);
        let started = Instant::now();
        let e = p
            .empty(&b, &mut r, t + Duration::from_micros(2))
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        assert!(started.elapsed() >= Duration::from_millis(25));
        assert!(started.elapsed() < Duration::from_secs(2));
    }
}
