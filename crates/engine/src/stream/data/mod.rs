//! The hot loops: one OS thread per data connection, blocking socket, one
//! pre-allocated buffer, no allocation, lock or extra syscall per call (the clock is
//! read through the vDSO). Live byte counts go to an atomic the ticker samples.
//! `send` holds the senders (write() or sendfile), `recv` the receivers and their
//! receive coalescing, `poll` receive polling; both ends book their calls into a
//! `ConnReport` the same way.

use std::net::TcpStream;
use std::time::Instant;

use mtuperf_proto::msg::ConnReport;

mod poll;
mod recv;
mod send;

pub use recv::{coalesce_wait_ns, recv_loop, RecvPlan};
pub use send::{send_loop, SendPlan};

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

/// "4.0 s" (since Go) for a last-progress instant, "the start" for none.
pub fn at(ns: Option<u64>) -> String {
    ns.map_or_else(
        || "the start".to_string(),
        |n| format!("{:.1} s", n as f64 / 1e9),
    )
}
