//! The mtuperf wire protocol.
//!
//! Everything two mtuperf processes say to each other is defined here, and nothing
//! here touches a socket: the agent and the client feed bytes in and take bytes out.
//!
//! * [`codec`]: length-prefixed frames with a size bound, optionally authenticated.
//! * [`msg`]: the typed control messages (handshake, test requests, results).
//! * [`auth`]: HMAC-SHA256 challenge-response and per-message tags.
//! * [`dgram`]: fixed binary headers of the UDP datagrams used by `rr` and `path`.
//! * [`host`]: plain data read from a host (CPU, interfaces, TCP_INFO) that crosses the wire.
//! * [`units`]: quantities with units, parsed once at the edge.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

pub mod auth;
pub mod codec;
pub mod dgram;
pub mod failed;
pub mod host;
pub mod interrupt;
pub mod msg;
pub mod placement;
pub mod refusal;
pub mod text;
pub mod units;

/// Version of the control protocol. Peers must agree exactly.
/// 2: stream requests carry `rx_coalesce_us`, receivers report their waits; a keyed
/// agent gives its details (`AgentInfo`) only after authentication.
/// 3: a data connection's tag covers its Hello's nonce (each accepted once), and a
/// busy refusal before authentication carries no counts.
/// 4: rr reports carry the CPU of the threads that carried the traffic (`cpu`).
/// 5: rr requests may ask the agent to pin its serving threads (`cpus`), and rr
/// reports carry where the agent's threads and receive softirqs ran (`placement`);
/// and UDP streams (`stream --udp`): `UdpStream`, `UdpSent`, their replies, and the
/// `StreamData` datagram kind;
/// and the mesh: discovery (`discover`) and third-party tests (`third_party`).
/// 6: third-party rr loads (`rr --from`): `ThirdPartyTest::RrLoad`, its full result
/// `ThirdPartyResult::RrLoad`, and an unspecified `from` address; stream and UDP
/// stream requests may ask the agent to pin its data threads (`cpus`), and their end
/// reports carry where those threads ran (`placement`).
/// 7: a busy refusal says what is full (`full`: sessions, connections or handshake
/// slots), and a test is refused up front when its data connections do not fit
/// (`Refusal::Limit` named `connections`).
/// 8: UDP stream requests carry `io` (`--udp-io`: plain, batch or gso), and each
/// socket's report how it moved its datagrams (`io`, `batch`, `segments`, `calls`,
/// `messages`, `drops`, `fallback`).
/// 9: an rr latency with no block answered is null, not 0 (`Latency`'s figures are
/// optional), and rr counts carry `lost_at_end` (requests still unanswered after the
/// drain, counted lost).
/// 10: a third-party path summary carries evidence, not a verdict: the first router
/// toward the peer (`first_router`) and the hop past which larger packets vanish
/// (`vanish_after`); its `verdict` and `verdict_text` are gone (the orchestrator
/// diagnoses).
/// 11: the mesh's block test (`ThirdPartyTest::Rr` carries the rr parameters, UDP 8 KiB
/// blocks by default, and its summary the counts, latency percentiles and the peer's
/// fragments), kernel counters (`counters`), and discovery lists interfaces that are
/// down (`down`).
/// 12: a third-party path summary's directions carry the slowest probe answer timed
/// (`rtt_us`) and the longest wait a probe was given (`wait_us`), each probe's wait
/// being bounded by the pair's round trip instead of a fixed 100 ms.
/// 13: a path session's `PathOpen` may name a second client port for reverse probes
/// (`reverse_port`), so that the forward and reverse searches run at once.
/// 14: every field of every message is written, null where it has no value (nothing
/// is left out), and nothing is read as a default where it is missing: the fields
/// earlier versions added with a default for older peers are required.
/// 15: a doctor reply carries the agent's host facts only (`findings` is gone: the
/// client applies the rules to the facts).
/// 16: an `--agent-cpu` list outside what the agent may pin to is refused as
/// `Refusal::AgentCpus` (the CPUs asked and allowed, and which limit), not as a
/// sentence in a bad-request refusal.
/// 17: third-party summaries carry why a test ended early as typed causes
/// (`interrupted_by`, checked for size; a host's nested in `Interrupt::FromHost`)
/// instead of words (`interrupted`), and a host's facts say why a file could not be
/// read as a typed `ReadError` (`unreadable`) instead of the reader's sentence.
/// 18: a request with fault-injection hooks to an agent not started with them is
/// refused as `Refusal::TestHooksOff`, not as a sentence in a bad-request refusal.
/// 19: a third-party test's peer agent's refusal is passed on typed
/// (`AgentMsg::PeerRefused`), not as words in an `Error`; a peer that did not
/// authenticate says why typed (`PeerNotAuthenticated`'s `why`: its refusal, no key,
/// another key); and interrupt causes keep an agent's refusal typed (`agent_answer`'s
/// and `from_host_failed`'s `error`, a `Failed`).
/// 20: a stream request may ask for zero-copy sends (`zerocopy`: `sendfile` from a
/// memory file), and each connection's report says whether it sent that way.
/// 21: a stream request may ask its receivers to poll (`rx_poll_us`), and each
/// receiving connection reports the reads that found nothing (`empty_reads`).
pub const PROTOCOL_VERSION: u16 = 21;
/// Default TCP port of the agent (control and TCP data connections).
pub const DEFAULT_PORT: u16 = 7878;
