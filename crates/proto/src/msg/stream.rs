//! Messages of the `stream` test (bulk TCP throughput).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::AgentPathInfo;
use crate::host::{HostSnapshot, IfaceInfo, TcpInfo};
use crate::placement::Placement;

/// Who sends the bulk data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The client sends, the agent receives (the default, like perl-sockets' client.pl).
    Forward,
    /// The agent sends, the client receives.
    Reverse,
    /// Both at once, on separate connections.
    Bidir,
}

/// When senders stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum StreamLimit {
    Time {
        ms: u64,
    },
    /// Total bytes per direction, split evenly over the streams.
    Bytes {
        total: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamRequest {
    pub streams: u32,
    pub direction: Direction,
    /// Bytes per write() and read() call.
    pub block: u32,
    pub limit: StreamLimit,
    /// SO_SNDBUF/SO_RCVBUF to request on the data sockets.
    pub window: Option<u32>,
    /// TCP_MAXSEG to request on the data sockets.
    pub mss: Option<u32>,
    /// Live interval length in ms; 0 for none (the agent still reports per second).
    pub interval_ms: u64,
    /// Warm-up excluded from the summary (still reported): an interval boundary is
    /// sampled exactly here on both ends.
    pub omit_ms: u64,
    /// Receive coalescing in µs (0: read again at once). A receiver whose read found
    /// the socket drained waits up to this long before its next read, so it reads
    /// whole blocks and wakes and acknowledges once per batch rather than once per
    /// arriving packet: the user-space analogue of a NIC's rx-usecs. Never waits
    /// while data is queued. At most [`MAX_RX_COALESCE_US`].
    pub rx_coalesce_us: u32,
    /// Receive polling in µs (0: off). A receiver whose read found the socket drained
    /// reads again at once without blocking, for up to this long, before it blocks
    /// until data comes: the user-space analogue of the kernel's busy polling
    /// (SO_BUSY_POLL). Inside its reads the receiver holds its socket, so packets that
    /// arrive meanwhile are processed on its own CPU rather than the one that took
    /// them in, and it is never woken per packet; its CPU time then includes the
    /// polling. Excludes coalescing (both non-zero is refused). At most
    /// [`MAX_RX_POLL_US`] (protocol 21).
    pub rx_poll_us: u32,
    /// Senders send with `sendfile` from a memory file holding the payload (as
    /// `iperf3 -Z`): the sending host does not copy each block from user memory. The
    /// receivers read as always (protocol 20).
    pub zerocopy: bool,
    /// `--agent-cpu`: pin the agent's data threads to these CPUs (each thread may run
    /// on any of them); the agent refuses CPUs outside its `serve --cpus` (protocol 6).
    pub cpus: Option<Vec<u32>>,
}

/// The longest receive coalescing an agent accepts (10 ms).
pub const MAX_RX_COALESCE_US: u32 = 10_000;

/// The longest receive polling an agent accepts (10 ms).
pub const MAX_RX_POLL_US: u32 = 10_000;

/// The shortest live interval an agent accepts (10 ms), as `--interval` allows.
pub const MIN_INTERVAL_MS: u64 = 10;

/// The most interval samples one end keeps for its final report. A longer run keeps
/// its samples at a coarser grain (adjacent pairs merged each time the limit is
/// reached; live samples still go out at the asked interval), so the final report
/// stays far below the 4 MiB frame limit: 10 000 samples are about 1 MiB of JSON.
pub const MAX_INTERVALS: usize = 10_000;

/// The receive coalescing used when the user does not choose one, for blocks below
/// [`RX_COALESCE_BELOW_BLOCK`].
pub const DEFAULT_RX_COALESCE_US: u32 = 200;

/// Blocks from this size up are read without coalescing unless the user asks for it.
/// Below it, a receiver that reads again at once is woken once per arriving packet
/// or two, and the waits it saves are worth 1.3-1.6x the goodput on a veth pair at
/// MTU 9000 (offloads on or off). From 64 KiB a drained read already brings several
/// packets, and a receiver asleep in a wait leaves the whole receive path to the CPU
/// that takes the packets in (on a veth pair, the sender's), where a receiver inside
/// `read()` takes those that arrive meanwhile off its socket's backlog on its own CPU:
/// the same waits cost 12-16% with offloads off and nothing with them on
/// (BENCHMARKS.md §17). The rule depends on the block only, so the 1500 and 9000 runs
/// of one test read alike.
pub const RX_COALESCE_BELOW_BLOCK: u32 = 64 * 1024;

/// The receive coalescing (µs) a stream of `block`-byte reads gets when the user does
/// not choose one: [`DEFAULT_RX_COALESCE_US`] below [`RX_COALESCE_BELOW_BLOCK`], off
/// from it.
pub fn default_rx_coalesce_us(block: u32) -> u32 {
    if block < RX_COALESCE_BELOW_BLOCK {
        DEFAULT_RX_COALESCE_US
    } else {
        0
    }
}

impl StreamRequest {
    /// Number of data connections: one per stream and direction.
    pub fn connections(&self) -> u32 {
        match self.direction {
            Direction::Bidir => self.streams * 2,
            _ => self.streams,
        }
    }

    /// Whether connection `index` carries data from client to agent.
    pub fn client_sends_on(&self, index: u32) -> bool {
        match self.direction {
            Direction::Forward => true,
            Direction::Reverse => false,
            Direction::Bidir => index < self.streams,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamReady {
    pub path: AgentPathInfo,
    /// Connections the client must now open with `Role::Data`.
    pub connections: u32,
}

/// One end's account of one data connection. Times are ns since that end's `Go`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnReport {
    pub index: u32,
    /// True when this end wrote on this connection, false when it read.
    pub sending: bool,
    pub bytes: u64,
    /// write() (or, with `zerocopy`, sendfile()) or read() calls that moved at least
    /// one byte.
    pub calls: u64,
    /// Time spent inside those calls (perl-sockets' "network elapsed").
    pub in_call_ns: u64,
    /// Start of the first call that moved data; end of the last one.
    pub first_byte_ns: Option<u64>,
    pub last_byte_ns: Option<u64>,
    /// Receivers: bytes of the first read that returned data. They arrived before
    /// `first_byte_ns`, so first→last goodput excludes them.
    pub first_read_bytes: u64,
    /// Receivers: times a read found the socket drained and the receiver waited
    /// before reading again: receive coalescing's sleeps, or, when polling, the
    /// blocks until data came after polling in vain for the whole poll time.
    pub waits: u64,
    /// Receivers: total time spent in those waits, ns (outside read(), so not in
    /// `in_call_ns`).
    pub wait_ns: u64,
    /// When the loop on this connection ended (EOF seen or last write done).
    pub end_ns: u64,
    pub sndbuf: u32,
    pub rcvbuf: u32,
    pub tcp_info: Option<TcpInfo>,
    /// A transport error that ended this connection early, if any.
    pub error: Option<String>,
    /// Senders: true when this connection was sent with `sendfile` (zero-copy, as the
    /// request asked); false for a receiver, a copying sender, or a zero-copy request
    /// this host could not serve (it then wrote, and `calls` count write() calls).
    pub zerocopy: bool,
    /// Polling receivers: reads that found the socket empty (not in `calls`). 0
    /// without polling.
    pub empty_reads: u64,
    /// Polling receivers: the time spent inside those reads, ns (part of
    /// `in_call_ns`, as a blocking read's time waiting for data would be).
    pub empty_ns: u64,
}

/// One interval of one end, summed over its connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntervalSample {
    pub start_ns: u64,
    pub end_ns: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// TCP retransmits of the sending connections during the interval.
    pub retransmits: u32,
    /// The sending connections' tcpi_busy_time, tcpi_rwnd_limited and
    /// tcpi_sndbuf_limited accrued during the interval, in µs summed over the
    /// connections (`None`: the kernel does not report them, or no connection sends).
    pub busy_us: Option<u64>,
    pub rwnd_limited_us: Option<u64>,
    pub sndbuf_limited_us: Option<u64>,
}

/// One end's whole report of a stream test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndReport {
    pub conns: Vec<ConnReport>,
    pub before: HostSnapshot,
    pub after: HostSnapshot,
    /// The interface carrying the traffic on this end.
    pub iface: Option<IfaceInfo>,
    pub intervals: Vec<IntervalSample>,
    pub wall_ns: u64,
    pub interrupted: bool,
    /// The agent's end: where its data threads and receive softirqs ran (protocol 6;
    /// the client's end is `StreamResult::client_placement`).
    pub placement: Option<Placement>,
}
