//! A sender's loop: `block`-sized write() calls from its buffer, or sendfile calls
//! from a memory file holding the same bytes (`--zerocopy`).

use std::io::{ErrorKind, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use mtuperf_proto::msg::ConnReport;

use super::{at, finish, ns};
use crate::stream::ticker::Tracked;

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

    /// A connection's first send: from a memory file this kernel or socket cannot
    /// splice pages from, it writes instead, for this call and all later ones (the
    /// report then says the sends were copies).
    #[cold]
    fn send_first(&mut self, sock: &TcpStream, chunk: &[u8], off: usize) -> std::io::Result<usize> {
        let res = self.send(sock, chunk, off);
        if matches!(self, Source::File(_)) && unsupported(&res) {
            *self = Source::Copy;
            return self.send(sock, chunk, off);
        }
        res
    }

    /// Sends `chunk`, the bytes of `data` from `off`.
    #[inline]
    fn send(&self, sock: &TcpStream, chunk: &[u8], off: usize) -> std::io::Result<usize> {
        match self {
            Source::Copy => mtuperf_sys::sock::send(sock, chunk),
            Source::File(fd) => {
                let mut at = i64::try_from(off).unwrap_or(i64::MAX);
                nix::sys::sendfile::sendfile(sock, fd, Some(&mut at), chunk.len())
                    .map_err(std::io::Error::from)
            }
        }
    }
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
        let res = if r.calls == 0 {
            source.send_first(sock, chunk, off)
        } else {
            source.send(sock, chunk, off)
        };
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

/// A first `sendfile` that failed because this kernel, socket or source does not do
/// it: no such call (ENOSYS), a socket or source that cannot splice pages (EINVAL,
/// EOPNOTSUPP), a source that cannot be read at an offset (ESPIPE).
#[cold]
fn unsupported(res: &std::io::Result<usize>) -> bool {
    use nix::errno::Errno;
    res.as_ref().is_err_and(|e| {
        [
            Errno::EINVAL,
            Errno::ENOSYS,
            Errno::EOPNOTSUPP,
            Errno::ESPIPE,
        ]
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
fn write_timeout_s(sock: &TcpStream) -> u64 {
    sock.write_timeout()
        .ok()
        .flatten()
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::time::Duration;

    use super::*;

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
        let track = Tracked::of(&tx, true);
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

    /// A "memory file" the kernel cannot send pages from (here a socket, which
    /// sendfile cannot read at an offset: ESPIPE): the first send writes instead, the
    /// bytes arrive, and the source stays a copying one.
    #[test]
    fn a_source_the_kernel_cannot_splice_from_falls_back_to_writes() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut rx, _) = l.accept().unwrap();
        let not_a_file = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut source = Source::File(std::os::fd::OwnedFd::from(not_a_file));
        let direct = source.send(&tx, b"abcd", 0);
        assert!(unsupported(&direct), "{direct:?}");
        assert_eq!(source.send_first(&tx, b"abcd", 0).unwrap(), 4);
        assert!(matches!(source, Source::Copy));
        let mut got = [0u8; 4];
        rx.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"abcd");
        // Any other failure is the error itself, not a fallback.
        assert!(!unsupported(&Err(std::io::Error::from(
            ErrorKind::TimedOut
        ))));
        assert!(!unsupported(&Ok(4)));
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
}
