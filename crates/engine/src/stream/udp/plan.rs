//! What the data threads of one end share: the plan of the run, each index's live
//! counters (atomics written by their one thread and read by the ticker), and the
//! report every socket starts from.

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Instant;

use mtuperf_proto::msg::udp::UdpConnReport;

use super::sockets::ConnIo;

/// Not yet known: the sender's count of an index.
pub const UNKNOWN: u64 = u64::MAX;

/// One index's live counters.
#[derive(Debug, Default)]
pub struct Live {
    pub sent: AtomicU64,
    pub sent_bytes: AtomicU64,
    pub received: AtomicU64,
    pub received_bytes: AtomicU64,
    pub duplicated: AtomicU64,
    pub reordered: AtomicU64,
    pub next_seq: AtomicU64,
    pub jitter_ns: AtomicU64,
    /// The sender's final count, set from the control connection ([`UNKNOWN`] until).
    pub expected: AtomicU64,
}

impl Live {
    pub fn new() -> Live {
        Live {
            expected: AtomicU64::new(UNKNOWN),
            ..Live::default()
        }
    }
}

/// What the threads of one end share.
pub struct Plan {
    pub token: u64,
    pub block: u32,
    /// Per sending index, bit/s (0: unpaced).
    pub rate_bps: u64,
    /// Datagrams per sending index (a --bytes run), or none.
    pub count: Option<u64>,
    pub t0: Instant,
    /// Senders stop here.
    pub end: Instant,
    /// Nothing runs past this.
    pub hard_end: Instant,
    /// Ctrl-C, the peer's Stop, or the peer gone: senders stop now.
    pub halt: AtomicBool,
    /// The peer is gone: receivers stop now too.
    pub abort: AtomicBool,
    /// Pins this end's data threads (`--cpu`, `--agent-cpu`) and registers them
    /// for placement sampling.
    pub pin: std::sync::Arc<crate::placement::Pinning>,
}

pub fn ns_since(t0: Instant) -> u64 {
    t0.elapsed().as_nanos() as u64
}

pub fn report(index: u32, sock: &UdpSocket, sending: bool, io: &ConnIo) -> UdpConnReport {
    let r = socket2::SockRef::from(sock);
    UdpConnReport {
        index,
        sending,
        sndbuf: r.send_buffer_size().map_or(0, |v| v as u32),
        rcvbuf: r.recv_buffer_size().map_or(0, |v| v as u32),
        io: Some(io.mode),
        batch: 1,
        segments: io.segments,
        fallback: io.fallback,
        ..UdpConnReport::default()
    }
}
