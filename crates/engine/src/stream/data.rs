//! The hot loops: one OS thread per data connection, blocking socket, one
//! pre-allocated buffer, no allocation, lock or extra syscall per call (the clock is
//! read through the vDSO). Live byte counts go to an atomic the ticker samples.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::ConnReport;

use super::ticker::Tracked;

/// When a sender stops.
#[derive(Debug, Clone, Copy)]
pub struct SendPlan {
    pub deadline: Option<Instant>,
    pub bytes: Option<u64>,
    /// Start `data` again when it is exhausted (generated payload) or stop (a file).
    pub cycle: bool,
    /// Bytes per write() call.
    pub block: usize,
    /// Who receives, for messages: "the agent" or "the client".
    pub peer: &'static str,
    /// Send with `sendfile` from a memory file holding `data` ([`Source`]).
    pub zerocopy: bool,
}

/// Where a sender's blocks come from: its buffer, written with write(), or a memory
/// file holding the same bytes, sent with `sendfile` (zero-copy: the kernel takes the
/// file's pages instead of copying each block in from user memory, as `iperf3 -Z`).
/// The file is made once per connection, before the first block (nix's
/// `memfd_create`), and each block is the file's bytes at the buffer's offset, so
/// the two sources send the same bytes in the same calls.
enum Source {
    Copy,
    File(std::os::fd::OwnedFd),
}

impl Source {
    /// A memory file holding `data` when `zerocopy` asks for one and this host can
    /// make it; else plain writes (the report then says the sends were copies).
    fn new(data: &[u8], zerocopy: bool) -> Source {
        if !zerocopy || data.is_empty() {
            return Source::Copy;
        }
        let made = nix::sys::memfd::memfd_create(
            c"mtuperf-payload",
            nix::sys::memfd::MFdFlags::MFD_CLOEXEC,
        )
        .map_err(std::io::Error::from)
        .and_then(|fd| {
            let mut f = std::fs::File::from(fd);
            f.write_all(data)?;
            Ok(std::os::fd::OwnedFd::from(f))
        });
        made.map_or(Source::Copy, Source::File)
    }

    /// Sends `chunk`, the bytes of `data` from `off`.
    #[inline]
    fn send(&self, sock: &TcpStream, chunk: &[u8], off: usize) -> std::io::Result<usize> {
        match self {
            Source::Copy => (&*sock).write(chunk),
            Source::File(fd) => {
                let mut at = i64::try_from(off).unwrap_or(i64::MAX);
                nix::sys::sendfile::sendfile(sock, fd, Some(&mut at), chunk.len())
                    .map_err(std::io::Error::from)
            }
        }
    }
}

fn ns(t0: Instant, t: Instant) -> u64 {
    t.saturating_duration_since(t0).as_nanos() as u64
}

fn finish(sock: &TcpStream, mut r: ConnReport, t0: Instant) -> ConnReport {
    r.end_ns = ns(t0, Instant::now());
    r.tcp_info = mtuperf_sys::sockopt::tcp_info(sock).ok();
    let s2 = socket2::SockRef::from(sock);
    r.sndbuf = s2.send_buffer_size().unwrap_or(0) as u32;
    r.rcvbuf = s2.recv_buffer_size().unwrap_or(0) as u32;
    r
}

/// Writes `data` in `block`-sized writes (cycling when `data` is exhausted and
/// `cycle` is set) until the plan or `stop` ends it, then half-closes.
pub fn send_loop(
    sock: &TcpStream,
    index: u32,
    data: &[u8],
    plan: SendPlan,
    stop: &AtomicBool,
    track: &Tracked,
    t0: Instant,
) -> ConnReport {
    let live = &*track.bytes;
    let mut r = ConnReport {
        index,
        sending: true,
        ..ConnReport::default()
    };
    let limit = plan.bytes.unwrap_or(u64::MAX);
    let mut source = Source::new(data, plan.zerocopy);
    let mut off = 0usize;
    let mut now = Instant::now();
    while !sent_enough(&plan, r.bytes, limit, stop, now) {
        let Some(chunk) = next_chunk(data, &mut off, &plan, limit - r.bytes) else {
            break;
        };
        let before = now;
        let mut res = source.send(sock, chunk, off);
        if r.calls == 0 && matches!(source, Source::File(_)) && unsupported(&res) {
            // A kernel or socket that cannot splice file pages: write instead.
            source = Source::Copy;
            res = source.send(sock, chunk, off);
        }
        now = Instant::now();
        match res {
            Ok(0) => break,
            Ok(n) => {
                account_write(&mut r, n, before, now, t0, live);
                off += n;
                if off >= data.len() && plan.cycle {
                    off = 0;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                r.error = Some(write_failure(&e, sock, track, plan.peer, r.last_byte_ns));
                break;
            }
        }
    }
    let _ = sock.shutdown(Shutdown::Write);
    r.zerocopy = matches!(source, Source::File(_));
    finish(sock, r, t0)
}

/// A first `sendfile` that failed because this kernel or socket does not do it.
#[cold]
fn unsupported(res: &std::io::Result<usize>) -> bool {
    use nix::errno::Errno;
    res.as_ref().is_err_and(|e| {
        [Errno::EINVAL, Errno::ENOSYS, Errno::EOPNOTSUPP]
            .iter()
            .any(|&n| e.raw_os_error() == Some(n as i32))
    })
}

/// Whether a sender is done before its next write: `limit` bytes sent, `stop` set or
/// the plan's deadline passed (`now`, the end of the last write: no clock read here).
#[inline]
fn sent_enough(plan: &SendPlan, sent: u64, limit: u64, stop: &AtomicBool, now: Instant) -> bool {
    sent >= limit || stop.load(Ordering::Relaxed) || plan.deadline.is_some_and(|d| now >= d)
}

/// The next write's slice of `data` from `*off`: at most a block and `left` bytes,
/// starting again at 0 when `data` is exhausted and the plan cycles (None: a file
/// sent whole, or nothing to send). A borrow of the caller's buffer, never a copy.
#[inline]
fn next_chunk<'d>(data: &'d [u8], off: &mut usize, plan: &SendPlan, left: u64) -> Option<&'d [u8]> {
    if *off >= data.len() {
        if !plan.cycle || data.is_empty() {
            return None;
        }
        *off = 0;
    }
    let want = (plan.block.min(data.len() - *off) as u64).min(left) as usize;
    data.get(*off..*off + want)
}

/// Books one write of `n` bytes that ran from `before` to `now`.
#[inline]
fn account_write(
    r: &mut ConnReport,
    n: usize,
    before: Instant,
    now: Instant,
    t0: Instant,
    live: &AtomicU64,
) {
    if r.first_byte_ns.is_none() {
        r.first_byte_ns = Some(ns(t0, before));
    }
    r.last_byte_ns = Some(ns(t0, now));
    r.calls += 1;
    r.bytes += n as u64;
    r.in_call_ns += ns(before, now);
    live.fetch_add(n as u64, Ordering::Relaxed);
}

/// Why a write failed, for the report: cut after the test's end, a peer that took
/// nothing for the write timeout, or the error itself. Once per connection.
#[cold]
fn write_failure(
    e: &std::io::Error,
    sock: &TcpStream,
    track: &Tracked,
    peer: &str,
    last_byte_ns: Option<u64>,
) -> String {
    if track.cut.load(Ordering::Acquire) {
        format!(
            "write cut after the test's end: {peer} took no data since {}",
            at(last_byte_ns)
        )
    } else if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
        format!(
            "{peer} took no data for {} s after {}",
            write_timeout_s(sock),
            at(last_byte_ns)
        )
    } else {
        format!("write failed after {}: {e}", at(last_byte_ns))
    }
}

/// "4.0 s" (since Go) for a last-progress instant, "the start" for none.
pub fn at(ns: Option<u64>) -> String {
    ns.map_or_else(
        || "the start".to_string(),
        |n| format!("{:.1} s", n as f64 / 1e9),
    )
}

fn write_timeout_s(sock: &TcpStream) -> u64 {
    sock.write_timeout()
        .ok()
        .flatten()
        .map_or(0, |d| d.as_secs())
}

/// How a receiver reads and when it gives up.
#[derive(Debug, Clone, Copy)]
pub struct RecvPlan {
    /// Receive coalescing: the longest wait after a read that drained the socket.
    pub coalesce: Duration,
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
    let mut now = Instant::now();
    loop {
        let before = now;
        let res = (&*sock).read(buf);
        now = Instant::now();
        r.in_call_ns += ns(before, now);
        match res {
            Ok(0) => {
                if track.cut.load(Ordering::Acquire) {
                    r.error = Some(read_cut(plan.peer, r.last_byte_ns));
                }
                break;
            }
            Ok(n) => {
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
    use std::sync::Arc;

    use super::*;

    const US: u64 = 1_000;

    /// (offset before, block, cycle, bytes left, the slice written).
    type Case<'a> = (usize, usize, bool, u64, Option<&'a [u8]>);

    fn plan(block: usize, cycle: bool) -> SendPlan {
        SendPlan {
            deadline: None,
            bytes: None,
            cycle,
            block,
            peer: "the agent",
            zerocopy: false,
        }
    }

    #[test]
    fn a_sender_writes_blocks_of_its_buffer_in_place_and_cycles_only_when_asked() {
        let data: Vec<u8> = (0..10).collect();
        let mut off = 0;
        // (offset before, block, cycle, bytes left) -> the slice written
        let cases: [Case<'_>; 6] = [
            (0, 4, true, u64::MAX, Some(&data[0..4])),
            (8, 4, true, u64::MAX, Some(&data[8..10])),
            (10, 4, true, u64::MAX, Some(&data[0..4])),
            (10, 4, false, u64::MAX, None),
            (2, 4, true, 3, Some(&data[2..5])),
            (0, 64, false, u64::MAX, Some(&data[..])),
        ];
        for (at, block, cycle, left, want) in cases {
            off = at;
            let got = next_chunk(&data, &mut off, &plan(block, cycle), left);
            assert_eq!(
                got, want,
                "at {at}, block {block}, cycle {cycle}, left {left}"
            );
            // A slice of the caller's buffer, not a copy.
            if let Some(g) = got {
                assert!(std::ptr::eq(g.as_ptr(), data[off..].as_ptr()));
            }
        }
        assert_eq!(next_chunk(&[], &mut off, &plan(4, true), 8), None);
    }

    /// Sends `total` bytes of `data` (cycled, in `block`s) over loopback with `plan`,
    /// reads them all on the other end; returns the sender's report and the bytes read.
    fn send_over_loopback(
        data: &[u8],
        block: usize,
        total: u64,
        zerocopy: bool,
    ) -> (ConnReport, Vec<u8>) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut rx, _) = l.accept().unwrap();
        rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let track = Tracked {
            sending: true,
            bytes: Arc::new(AtomicU64::new(0)),
            sock: Arc::new(tx.try_clone().unwrap()),
            finished: Arc::new(AtomicBool::new(false)),
            cut: Arc::new(AtomicBool::new(false)),
        };
        let p = SendPlan {
            bytes: Some(total),
            zerocopy,
            ..plan(block, true)
        };
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            let reader = s.spawn(move || {
                let mut got = Vec::new();
                rx.read_to_end(&mut got).unwrap();
                got
            });
            let r = send_loop(&tx, 0, data, p, &stop, &track, Instant::now());
            (r, reader.join().unwrap())
        })
    }

    #[test]
    fn a_zero_copy_sender_delivers_the_same_bytes_as_writes_and_says_how_it_sent() {
        // A payload that is not a whole number of blocks, a total that ends mid-block:
        // the file's offsets must follow the buffer's exactly, cycles included.
        let data: Vec<u8> = (0..70_001u32).map(|i| (i * 7 + i / 251) as u8).collect();
        let total = 1_000_003u64;
        let want: Vec<u8> = data.iter().copied().cycle().take(total as usize).collect();
        for zerocopy in [true, false] {
            let (r, got) = send_over_loopback(&data, 16_384, total, zerocopy);
            assert_eq!(r.error, None);
            assert_eq!(
                (r.bytes, got.len() as u64),
                (total, total),
                "zerocopy {zerocopy}"
            );
            assert!(got == want, "zerocopy {zerocopy}: the bytes differ");
            // Loopback TCP takes file pages: the report says which call was used.
            assert_eq!(r.zerocopy, zerocopy);
            assert!(r.calls >= total.div_ceil(16_384), "{r:?}");
        }
    }

    #[test]
    fn a_sender_stops_at_its_bytes_its_stop_or_its_deadline() {
        let now = Instant::now();
        let stop = AtomicBool::new(false);
        let mut p = plan(4, true);
        assert!(!sent_enough(&p, 10, 11, &stop, now));
        assert!(sent_enough(&p, 11, 11, &stop, now));
        p.deadline = Some(now);
        assert!(sent_enough(&p, 0, 11, &stop, now));
        p.deadline = None;
        stop.store(true, Ordering::Relaxed);
        assert!(sent_enough(&p, 0, 11, &stop, now));
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
