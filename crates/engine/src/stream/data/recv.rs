//! A receiver's loop: `block`-sized read() calls until the sender's end of stream,
//! with receive coalescing or receive polling after a read that drained the socket.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::ConnReport;

use super::poll::Poller;
use super::{at, finish, ns};
use crate::stream::ticker::Tracked;

/// How a receiver reads and when it gives up.
#[derive(Debug, Clone, Copy)]
pub struct RecvPlan {
    /// Receive coalescing: the longest wait after a read that drained the socket.
    pub coalesce: Duration,
    /// Receive polling: how long to keep reading a drained socket without blocking
    /// before blocking until data comes (zero: off; excludes coalescing).
    pub poll: Duration,
    /// Give up on a sender that sends nothing for this long.
    pub idle: Duration,
    /// Hard end (the agent's maximum duration).
    pub deadline: Instant,
    /// Who sends, for messages: "the agent" or "the client".
    pub peer: &'static str,
}

/// Books one read of `n` bytes that ended at `now`.
#[inline]
fn account_read(r: &mut ConnReport, n: usize, now: Instant, t0: Instant, live: &AtomicU64) {
    if r.first_byte_ns.is_none() {
        r.first_byte_ns = Some(ns(t0, now));
        // Bytes of the first read arrived before the first-byte instant; they are
        // kept apart so first→last goodput counts only bytes that arrived inside
        // the interval.
        r.first_read_bytes = n as u64;
    }
    r.last_byte_ns = Some(ns(t0, now));
    r.calls += 1;
    r.bytes += n as u64;
    live.fetch_add(n as u64, Ordering::Relaxed);
}

/// A coalescing sleep that overran its request by more than this (and twice the
/// request) was a stopped process, not a wait.
const STALLED_SLEEP_NS: u64 = 50_000_000;

/// Waits shorter than this are not worth a sleep.
const MIN_WAIT_NS: u64 = 2_000;

/// No waits in the first 100 ms after the first byte: the rate seen so far and the
/// receive buffer (autotuning grows it) have not settled, and a wait then can stall
/// the sender; a short `--bytes` transfer lost up to a fifth of its goodput to them.
const WARMUP_NS: u64 = 100_000_000;

/// How long a receiver whose read drained the socket asks to sleep before reading
/// again: `max_ns`, but never so long that the pause it really gets (the request
/// plus `late_ns`, how late its sleeps have been ending) exceeds the time a quarter
/// of the receive buffer (`rcvbuf`, as SO_RCVBUF reports it) takes to fill at the
/// rate seen so far (`bytes` in `elapsed_ns`): a sender is never stopped by a full
/// window while we sleep, even on a busy host where wakeups come late. No wait in
/// the first 100 ms after the first byte, nor when it would be shorter than 2 µs.
pub fn coalesce_wait_ns(
    max_ns: u64,
    rcvbuf: u32,
    bytes: u64,
    elapsed_ns: u64,
    late_ns: u64,
) -> u64 {
    if max_ns == 0 || bytes == 0 || elapsed_ns < WARMUP_NS {
        return 0;
    }
    let quarter_fill = u128::from(rcvbuf) * u128::from(elapsed_ns) / (4 * u128::from(bytes));
    let budget = u64::try_from(quarter_fill)
        .unwrap_or(u64::MAX)
        .saturating_sub(late_ns);
    let wait = budget.min(max_ns);
    if wait < MIN_WAIT_NS {
        0
    } else {
        wait
    }
}

/// Reads into `buf` until EOF. Receivers never stop early on their own: the sender
/// decides the end, so bytes written == bytes read on every run that ends cleanly.
/// `plan.deadline` bounds a peer that keeps the connection open forever.
///
/// Receive coalescing (`plan.coalesce`, zero to disable): a read that returns less than
/// `buf` found the socket drained; the receiver then sleeps (see
/// [`coalesce_wait_ns`]) instead of blocking in the next read at once. A receiver
/// that always reads at once is woken, and acknowledges, once per arriving packet
/// whenever it is faster than its sender; on links whose ends share CPUs (veth,
/// loopback) the sender's CPU pays for those wakeups and ACKs, which halves the
/// throughput of 8K writes. Waits only ever happen with nothing queued, so a
/// receiver-bound transfer never waits; they are counted in the report.
///
/// Receive polling (`plan.poll`, zero to disable) goes the other way: the socket is
/// non-blocking, a read that finds it empty is tried again at once (counted as an
/// empty read, not a call), and only after `plan.poll` of empty reads does the
/// receiver block until data comes (a wait). See [`Poller`].
pub fn recv_loop(
    sock: &TcpStream,
    index: u32,
    buf: &mut [u8],
    plan: RecvPlan,
    track: &Tracked,
    t0: Instant,
) -> ConnReport {
    let _ = sock.set_read_timeout(Some(plan.idle));
    let live = &*track.bytes;
    let mut r = ConnReport {
        index,
        sending: false,
        ..ConnReport::default()
    };
    let mut coalescer = Coalescer::new(plan.coalesce);
    let mut poller = Poller::new(sock, plan.poll, plan.idle);
    let mut now = Instant::now();
    loop {
        let before = now;
        let res = mtuperf_sys::sock::recv(sock, buf);
        now = Instant::now();
        r.in_call_ns += ns(before, now);
        match res {
            Err(e) if e.kind() == ErrorKind::WouldBlock && poller.on() => {
                r.empty_reads += 1;
                r.empty_ns += ns(before, now);
                match poller.empty(sock, &mut r, now) {
                    Ok(after) => now = after,
                    Err(e) => {
                        r.error = Some(read_failure(&e, plan.peer, plan.idle, r.last_byte_ns));
                        break;
                    }
                }
            }
            Ok(0) => {
                if track.cut.load(Ordering::Acquire) {
                    r.error = Some(read_cut(plan.peer, r.last_byte_ns));
                }
                break;
            }
            Ok(n) => {
                poller.got();
                account_read(&mut r, n, now, t0, live);
                if now >= plan.deadline {
                    r.error = Some("stopped at the agent's maximum duration".into());
                    break;
                }
                if n < buf.len() {
                    now = coalescer.drained(sock, &mut r, now, t0);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                r.error = Some(read_failure(&e, plan.peer, plan.idle, r.last_byte_ns));
                break;
            }
        }
    }
    finish(sock, r, t0)
}

/// A receiver's coalescing state: the longest wait it may ask for (0: off), how late
/// its sleeps end, and SO_RCVBUF as last read. Lives on the receiving thread's stack.
struct Coalescer {
    max_wait_ns: u64,
    /// How late sleeps end, smoothed (1/8 per sleep, decaying by 1/8 per drained read
    /// without one): the wakeup latency of this host.
    late_ns: u64,
    /// SO_RCVBUF, re-read every 32 drained reads after the warm-up: autotuning moves
    /// it slowly, and a getsockopt on every drained read would be a syscall per block.
    rcvbuf: u32,
    drained: u64,
}

impl Coalescer {
    /// Coalescing of at most `coalesce` per wait; sets this thread's timer slack so
    /// that a wait ends close to what it asks.
    fn new(coalesce: Duration) -> Coalescer {
        let max_wait_ns = coalesce.as_nanos() as u64;
        if max_wait_ns > 0 {
            // The default 50 µs slack would stretch every wait well past what we ask.
            let _ = mtuperf_sys::thread::set_timer_slack((max_wait_ns / 10).max(1_000));
        }
        Coalescer {
            max_wait_ns,
            late_ns: 0,
            rcvbuf: 0,
            drained: 0,
        }
    }

    /// After a read at `now` that drained the socket: sleeps for the wait
    /// [`coalesce_wait_ns`] allows (counted in `r`), or not at all. Returns the
    /// instant the receiver goes on from.
    #[inline]
    fn drained(
        &mut self,
        sock: &TcpStream,
        r: &mut ConnReport,
        now: Instant,
        t0: Instant,
    ) -> Instant {
        if self.max_wait_ns == 0 {
            return now;
        }
        let since_first = r.first_byte_ns.map_or(0, |f| ns(t0, now).saturating_sub(f));
        if since_first >= WARMUP_NS {
            if self.drained.is_multiple_of(32) {
                self.rcvbuf = mtuperf_sys::sockopt::rcvbuf(sock).unwrap_or(0);
            }
            self.drained += 1;
        }
        let wait = coalesce_wait_ns(
            self.max_wait_ns,
            self.rcvbuf,
            r.bytes,
            since_first,
            self.late_ns,
        );
        if wait == 0 {
            // One late wakeup must not switch coalescing off for good.
            self.late_ns -= self.late_ns / 8;
            return now;
        }
        self.sleep(wait, r, now)
    }

    /// Sleeps `wait` ns from `now`, books it in `r` and learns how late it ended.
    fn sleep(&mut self, wait: u64, r: &mut ConnReport, now: Instant) -> Instant {
        std::thread::sleep(Duration::from_nanos(wait));
        let woke = Instant::now();
        let slept = ns(now, woke);
        r.waits += 1;
        if slept > 2 * wait + STALLED_SLEEP_NS {
            // The process was stopped, not waiting: count the wait asked for, and
            // keep the outlier out of the wakeup latency.
            r.wait_ns += wait;
        } else {
            self.late_ns = (self.late_ns * 7 + slept.saturating_sub(wait)) / 8;
            r.wait_ns += slept;
        }
        woke
    }
}

/// A read that found the end after the test's end was cut: once per connection.
#[cold]
fn read_cut(peer: &str, last_byte_ns: Option<u64>) -> String {
    format!(
        "read cut after the test's end: last data from {peer} at {}",
        at(last_byte_ns)
    )
}

/// Why a read failed, for the report: a sender silent for `idle`, or the error
/// itself. Once per connection.
#[cold]
fn read_failure(
    e: &std::io::Error,
    peer: &str,
    idle: Duration,
    last_byte_ns: Option<u64>,
) -> String {
    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
        format!(
            "no data from {peer} for {} s after {}",
            idle.as_secs(),
            at(last_byte_ns)
        )
    } else {
        format!("read failed after {}: {e}", at(last_byte_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;

    /// A polling receiver whose sender pauses with the connection open: every byte is
    /// read, the reads that found the socket empty are counted (not as calls, inside
    /// the read time), and the pause past the poll time is one or more waits. The
    /// sender pauses only once the first chunk was read, so an empty socket is met.
    #[test]
    fn a_polling_receiver_counts_its_empty_reads_and_blocks_through_a_pause() {
        use std::io::Write;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (rx, _) = l.accept().unwrap();
        let track = Tracked::of(&rx, false);
        let plan = RecvPlan {
            coalesce: Duration::ZERO,
            poll: Duration::from_micros(200),
            idle: Duration::from_secs(10),
            deadline: Instant::now() + Duration::from_mins(1),
            peer: "the client",
        };
        let live = track.bytes.clone();
        let r = std::thread::scope(|s| {
            let reader = s.spawn(|| {
                let mut buf = vec![0u8; 8192];
                recv_loop(&rx, 0, &mut buf, plan, &track, Instant::now())
            });
            tx.write_all(&[7u8; 5000]).unwrap();
            while live.load(Ordering::Relaxed) < 5000 {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(Duration::from_millis(500));
            tx.write_all(&[8u8; 3000]).unwrap();
            drop(tx);
            reader.join().unwrap()
        });
        assert_eq!((r.bytes, r.error.as_deref()), (8000, None), "{r:?}");
        assert!(r.empty_reads > 0, "{r:?}");
        assert!(
            r.calls >= 2 && r.empty_ns > 0 && r.empty_ns <= r.in_call_ns,
            "{r:?}"
        );
        // 500 ms of silence against a 200 µs poll: it blocked, and the blocks hold
        // most of the pause (outside the reads).
        assert!(r.waits >= 1 && r.wait_ns >= 100_000_000, "{r:?}");
    }

    #[test]
    fn a_failed_read_says_who_was_silent_and_since_when() {
        let timed_out = std::io::Error::from(ErrorKind::TimedOut);
        assert_eq!(
            read_failure(
                &timed_out,
                "the client",
                Duration::from_secs(10),
                Some(4_000_000_000)
            ),
            "no data from the client for 10 s after 4.0 s"
        );
        let reset = std::io::Error::from(ErrorKind::ConnectionReset);
        assert!(
            read_failure(&reset, "the client", Duration::from_secs(10), None)
                .starts_with("read failed after the start: ")
        );
        assert_eq!(
            read_cut("the agent", Some(1_500_000_000)),
            "read cut after the test's end: last data from the agent at 1.5 s"
        );
    }

    #[test]
    fn a_receiver_without_coalescing_never_waits() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let sock = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let mut c = Coalescer::new(Duration::ZERO);
        let mut r = ConnReport {
            bytes: 1 << 30,
            first_byte_ns: Some(0),
            ..ConnReport::default()
        };
        let now = Instant::now();
        let t0 = now.checked_sub(Duration::from_secs(1)).unwrap_or(now);
        assert_eq!(c.drained(&sock, &mut r, now, t0), now);
        assert_eq!((r.waits, c.drained), (0, 0));
    }

    #[test]
    fn no_wait_when_disabled_or_during_the_warm_up() {
        assert_eq!(coalesce_wait_ns(0, 4 << 20, 1 << 30, 1_000_000_000, 0), 0);
        assert_eq!(coalesce_wait_ns(30 * US, 4 << 20, 0, 0, 0), 0);
        assert_eq!(coalesce_wait_ns(30 * US, 4 << 20, 8192, 0, 0), 0);
        // 99 ms in: still warming up; 100 ms in: the full wait.
        assert_eq!(
            coalesce_wait_ns(30 * US, 4 << 20, 100 << 20, 99_999_999, 0),
            0
        );
        assert_eq!(
            coalesce_wait_ns(30 * US, 4 << 20, 100 << 20, 100_000_000, 0),
            30 * US
        );
    }

    #[test]
    fn a_large_buffer_gets_the_full_wait() {
        // 1 GB/s into a 4 MiB buffer: a quarter fills in ~1 ms, far above 30 µs.
        assert_eq!(
            coalesce_wait_ns(30 * US, 4 << 20, 1_000_000_000, 1_000_000_000, 0),
            30 * US
        );
    }

    #[test]
    fn a_small_buffer_caps_the_wait_at_a_quarter_fill() {
        // 2.5 GB/s into 128 KiB: a quarter (32 KiB) fills in 13.1 µs.
        let w = coalesce_wait_ns(30 * US, 128 << 10, 2_500_000_000, 1_000_000_000, 0);
        assert_eq!(w, 13_107);
        // Sleeps that end 10 µs late leave 3.1 µs of that budget to ask for.
        let w = coalesce_wait_ns(30 * US, 128 << 10, 2_500_000_000, 1_000_000_000, 10 * US);
        assert_eq!(w, 3_107);
        // ... and 12 µs late, less than the 2 µs floor: no sleep.
        let w = coalesce_wait_ns(30 * US, 128 << 10, 2_500_000_000, 1_000_000_000, 12 * US);
        assert_eq!(w, 0);
        // So fast that the cap is under 2 µs: do not sleep at all.
        assert_eq!(
            coalesce_wait_ns(30 * US, 8 << 10, 10_000_000_000, 1_000_000_000, 0),
            0
        );
    }
}
