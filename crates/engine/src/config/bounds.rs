//! The bounds of what a test may ask for, in one place: the CLI's value parsers
//! name them in their errors, the agent refuses beyond them. (An agent's own,
//! configurable limits are `mtuperf_proto::msg::Limits`; its defaults sit there.)

use std::time::Duration;

use mtuperf_proto::dgram::HEADER_LEN;
pub use mtuperf_proto::msg::{MAX_RX_COALESCE_US, MAX_RX_POLL_US, MIN_INTERVAL_MS};

/// Largest UDP payload over IPv4 (65535 - 20 IP - 8 UDP).
pub const UDP_MAX_PAYLOAD: u32 = 65_507;
/// Largest rr block over UDP: the datagram also carries mtuperf's 40-byte header.
pub const MAX_UDP_BLOCK: u32 = UDP_MAX_PAYLOAD - HEADER_LEN as u32;

/// Bytes per write()/read() (stream) or per block (rr, tcp): 1 B to 16 MiB.
pub const MAX_BLOCK: u64 = 16 << 20;
/// An rr block: at most 1 MiB (udp: [`MAX_UDP_BLOCK`]).
pub const MAX_RR_BLOCK: u64 = 1 << 20;
/// An rr request's size after the header: 0 to one UDP datagram's payload.
pub const MAX_REQUEST: u32 = MAX_UDP_BLOCK;
/// Socket buffers to request (`--window`): 1 KiB to 1 GiB.
pub const MIN_WINDOW: u64 = 1024;
pub const MAX_WINDOW: u64 = 1 << 30;
/// `--bytes`: 1 B to 1 PiB.
pub const MAX_TOTAL: u64 = 1 << 50;
/// One test's length: 100 ms to 24 h.
pub const MIN_TIME: Duration = Duration::from_millis(100);
pub const MAX_TIME: Duration = Duration::from_hours(24);
/// Live intervals: 10 ms to 1 h.
pub const MIN_INTERVAL: Duration = Duration::from_millis(MIN_INTERVAL_MS);
pub const MAX_INTERVAL: Duration = Duration::from_hours(1);
/// Parallel TCP connections per direction (`--streams`).
pub const MAX_STREAMS: u32 = 128;
/// rr's concurrent clients and agent workers.
pub const MAX_CLIENTS: u32 = 4096;
pub const MAX_WORKERS: u32 = 4096;
/// rr's client threads.
pub const MAX_THREADS: u32 = 256;
/// rr's open-loop rate, requests per second across all clients.
pub const MAX_RATE: u64 = 100_000_000;
/// rr's loss timeout: 1 ms to 60 s.
pub const MIN_RR_TIMEOUT: Duration = Duration::from_millis(1);
pub const MAX_RR_TIMEOUT: Duration = Duration::from_mins(1);
/// Most UDP source ports an rr client may register.
pub const MAX_UDP_PORTS: usize = 256;
/// `path --expect`: the smallest datagram every IPv4 host must take, to IPv4's
/// largest packet.
pub const MIN_EXPECT_MTU: u32 = 576;
pub const MAX_EXPECT_MTU: u32 = 65_535;
