//! Messages of `stream --udp` (paced UDP datagram streams). Each connection index is
//! one UDP socket pair: the client registers its source port per index in the
//! request, the agent answers with its own port per index and a session token. Every
//! datagram carries the token, the index, a sequence number and its send time
//! (`dgram::Kind::StreamData`). When a sender is done it tells the receiving end, over
//! control, how many datagrams it sent on each index (`UdpSent`): the receiver drains
//! until it has them all or a deadline passes, so sent = received + lost is exact.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::stream::{Direction, StreamLimit};
use super::AgentPathInfo;
use crate::host::{HostSnapshot, IfaceCounters, IfaceInfo, SnmpCounters};
use crate::placement::Placement;

/// The smallest datagram: the 40-byte header.
pub const MIN_UDP_BLOCK: u32 = 40;
/// The largest UDP payload over IPv4 (65535 - 20 - 8).
pub const MAX_UDP_BLOCK: u32 = 65_507;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UdpStreamRequest {
    /// Sockets per direction.
    pub streams: u32,
    pub direction: Direction,
    /// UDP payload bytes of every datagram (header included).
    pub block: u32,
    pub limit: StreamLimit,
    /// Offered rate per direction in bit/s of UDP payload, split evenly over the
    /// streams; the sender paces to it. 0: as fast as the agent's --max-rate allows.
    pub rate_bps: u64,
    /// SO_RCVBUF/SO_SNDBUF to request on the data sockets.
    pub window: Option<u32>,
    /// Live interval length in ms; 0 for none (both ends still sample per second).
    pub interval_ms: u64,
    /// The client's source port of each index (`connections()` of them).
    pub ports: Vec<u16>,
    /// `--agent-cpu`: pin the agent's data threads to these CPUs; the agent refuses
    /// CPUs outside its `serve --cpus` (protocol 6).
    pub cpus: Option<Vec<u32>>,
    /// `--udp-io`: the most both ends may use to move datagrams (protocol 8).
    pub io: UdpIo,
}

/// `--udp-io`: the most a UDP stream's ends may use to move datagrams. Each socket
/// uses the best of it that its kernel and path allow ([`IoMode`], [`IoFallback`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UdpIo {
    /// One send or receive call per datagram.
    Plain,
    /// Many datagrams per call (sendmmsg, recvmmsg).
    Batch,
    /// Batches, and UDP GSO on senders whose datagrams fit the path MTU, UDP_GRO on
    /// receivers, where the kernel offers them.
    #[default]
    Gso,
}

/// How one socket moved its datagrams.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// A send or recv call per datagram.
    Plain,
    /// sendmmsg or recvmmsg, one datagram per message.
    Batch,
    /// Senders: sendmmsg of GSO messages, each cut into datagrams by the kernel.
    Gso,
    /// Receivers: recvmmsg with UDP_GRO, a receive may hold several datagrams.
    Gro,
}

/// A socket option a socket needed and the kernel refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IoOption {
    UdpSegment,
    UdpGro,
    IpMtu,
}

/// Why a socket used less than `--udp-io` allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum IoFallback {
    /// Datagrams of `block` bytes with their IP and UDP headers exceed the path MTU:
    /// sent whole, for the kernel to fragment (GSO cannot cut them).
    AboveMtu { block: u32, mtu: u32 },
    /// The kernel refused the option (`errno`): it has no UDP GSO or GRO.
    Unsupported { option: IoOption, errno: i32 },
    /// The kernel refused a GSO send on this route (`errno`: EINVAL, the path MTU
    /// fell below a datagram; EIO, a route GSO cannot take): the rest went in batches.
    Refused { errno: i32 },
}

impl UdpStreamRequest {
    /// Sockets on each end: one per stream and direction.
    pub fn connections(&self) -> u32 {
        match self.direction {
            Direction::Bidir => self.streams * 2,
            _ => self.streams,
        }
    }

    /// Whether index `i` carries datagrams from client to agent.
    pub fn client_sends_on(&self, i: u32) -> bool {
        match self.direction {
            Direction::Forward => true,
            Direction::Reverse => false,
            Direction::Bidir => i < self.streams,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpStreamReady {
    pub path: AgentPathInfo,
    /// The agent's port of each index.
    pub ports: Vec<u16>,
    /// Carried by every datagram of this test, both ways.
    pub token: u64,
    /// The rate each direction is paced at (the request's, or the agent's
    /// --max-rate when the request asked for 0).
    pub rate_bps: u64,
}

/// A sender's final count: datagrams it sent on each index (0 on indexes it receives).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpSent {
    pub sent: Vec<u64>,
}

/// One end's account of one index. Times are ns since that end's `Go`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UdpConnReport {
    pub index: u32,
    pub sending: bool,
    /// Senders: datagrams and payload bytes handed to the kernel.
    pub sent: u64,
    pub sent_bytes: u64,
    /// Senders: send calls that failed (ENOBUFS, ECONNREFUSED, ...), not counted sent.
    pub send_errors: u64,
    /// Receivers: distinct sequence numbers received, their bytes, copies of a
    /// sequence already received, and arrivals below the highest sequence seen.
    pub received: u64,
    pub received_bytes: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Receivers: datagrams that were not this test's (wrong size, token or index).
    pub rejected: u64,
    /// Receivers: one past the highest sequence number seen.
    pub next_seq: u64,
    /// Receivers: RFC 3550 interarrival jitter at the end, ns.
    pub jitter_ns: u64,
    /// First and last datagram sent or received.
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    pub sndbuf: u32,
    pub rcvbuf: u32,
    /// Receivers: the sender's count came (`UdpSent`) and the drain ended with it.
    pub expected: Option<u64>,
    pub error: Option<String>,
    /// How this socket sent or received (null: it did not get to move any).
    pub io: Option<IoMode>,
    /// The most datagrams one call may move (1: plain).
    pub batch: u32,
    /// Senders with GSO: datagrams per message at most; receivers with GRO: the
    /// most one receive held (1 otherwise).
    pub segments: u32,
    /// System calls that moved data (send, sendmmsg, recv, recvmmsg).
    pub calls: u64,
    /// Messages as the kernel counts them: sends (Udp OutDatagrams counts a GSO
    /// send once) or receives, this test's or not (Udp InDatagrams counts a GRO
    /// receive once).
    pub messages: u64,
    /// Receivers: packets the socket's receive queue dropped (SO_MEMINFO; a GRO
    /// bundle counts once).
    pub drops: Option<u64>,
    /// Why this socket used less than `--udp-io` allowed.
    pub fallback: Option<IoFallback>,
}

/// One interval of one end, summed over its indexes, with the kernel counters of the
/// end's own network namespace over the same interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UdpInterval {
    pub start_ns: u64,
    pub end_ns: u64,
    pub sent: u64,
    pub sent_bytes: u64,
    pub received: u64,
    pub received_bytes: u64,
    /// Sequence numbers skipped over in the interval, less late arrivals that filled
    /// earlier gaps (negative when more gaps filled than opened).
    pub lost: i64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Largest RFC 3550 jitter of the receiving indexes at the interval's end, ns.
    pub jitter_ns: u64,
    pub snmp: Option<SnmpCounters>,
    pub iface: Option<IfaceCounters>,
}

/// One end's whole report of a UDP stream test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UdpEndReport {
    pub conns: Vec<UdpConnReport>,
    pub before: HostSnapshot,
    pub after: HostSnapshot,
    pub iface: Option<IfaceInfo>,
    pub intervals: Vec<UdpInterval>,
    pub wall_ns: u64,
    pub interrupted: bool,
    /// The agent's end: where its data threads and receive softirqs ran (protocol 6;
    /// the client's end is the result's `client_placement`).
    pub placement: Option<Placement>,
}
