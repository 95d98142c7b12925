//! The hot loops: one OS thread per data connection, blocking socket, one
//! pre-allocated buffer, no allocation, lock or extra syscall per call (the clock is
//! read through the vDSO). Live byte counts go to an atomic the ticker samples.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::ConnReport;

/// When a sender stops.
#[derive(Debug, Clone, Copy)]
pub struct SendPlan {
    pub deadline: Option<Instant>,
    pub bytes: Option<u64>,
    /// Start `data` again when it is exhausted (generated payload) or stop (a file).
    pub cycle: bool,
    /// Bytes per write() call.
    pub block: usize,
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
    live: &AtomicU64,
    t0: Instant,
) -> ConnReport {
    let mut r = ConnReport {
        index,
        sending: true,
        ..ConnReport::default()
    };
    let cycle = plan.cycle;
    let limit = plan.bytes.unwrap_or(u64::MAX);
    let mut off = 0usize;
    let mut now = Instant::now();
    loop {
        if r.bytes >= limit
            || stop.load(Ordering::Relaxed)
            || plan.deadline.is_some_and(|d| now >= d)
        {
            break;
        }
        if off >= data.len() {
            if !cycle || data.is_empty() {
                break;
            }
            off = 0;
        }
        let want = plan.block.min(data.len() - off) as u64;
        let want = want.min(limit - r.bytes) as usize;
        let Some(chunk) = data.get(off..off + want) else {
            break;
        };
        let before = now;
        let res = (&*sock).write(chunk);
        now = Instant::now();
        match res {
            Ok(0) => break,
            Ok(n) => {
                if r.first_byte_ns.is_none() {
                    r.first_byte_ns = Some(ns(t0, before));
                }
                r.last_byte_ns = Some(ns(t0, now));
                r.calls += 1;
                r.bytes += n as u64;
                r.in_call_ns += ns(before, now);
                live.fetch_add(n as u64, Ordering::Relaxed);
                off += n;
                if off >= data.len() && cycle {
                    off = 0;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                r.error = Some("receiver stalled: no progress within the write timeout".into());
                break;
            }
            Err(e) => {
                r.error = Some(format!("write failed: {e}"));
                break;
            }
        }
    }
    let _ = sock.shutdown(Shutdown::Write);
    finish(sock, r, t0)
}

/// Reads into `buf` until EOF. Receivers never stop early on their own: the sender
/// decides the end, so bytes written == bytes read on every run that ends cleanly.
/// `deadline` bounds a peer that keeps the connection open forever.
pub fn recv_loop(
    sock: &TcpStream,
    index: u32,
    buf: &mut [u8],
    idle: Duration,
    deadline: Instant,
    live: &AtomicU64,
    t0: Instant,
) -> ConnReport {
    let mut r = ConnReport {
        index,
        sending: false,
        ..ConnReport::default()
    };
    let _ = sock.set_read_timeout(Some(idle));
    let mut now = Instant::now();
    loop {
        let before = now;
        let res = (&*sock).read(buf);
        now = Instant::now();
        r.in_call_ns += ns(before, now);
        match res {
            Ok(0) => break,
            Ok(n) => {
                if r.first_byte_ns.is_none() {
                    r.first_byte_ns = Some(ns(t0, now));
                    // Bytes of the first read arrived before the first-byte instant;
                    // they are kept apart so first→last goodput counts only bytes
                    // that arrived inside the interval.
                    r.first_read_bytes = n as u64;
                }
                r.last_byte_ns = Some(ns(t0, now));
                r.calls += 1;
                r.bytes += n as u64;
                live.fetch_add(n as u64, Ordering::Relaxed);
                if now >= deadline {
                    r.error = Some("stopped at the agent's maximum duration".into());
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                r.error = Some(format!("no data for {} s: sender vanished", idle.as_secs()));
                break;
            }
            Err(e) => {
                r.error = Some(format!("read failed: {e}"));
                break;
            }
        }
    }
    finish(sock, r, t0)
}
