//! Messages of `mesh`: discovery (what a node's interfaces are, with addresses) and
//! third-party tests (the orchestrator asks agent A to test toward agent B).
//!
//! A third-party test is run by A as a keyed client of B, exactly as the CLI would:
//! A refuses unless it holds a key itself, and sends test traffic only once B has
//! completed the keyed handshake with it.

use std::net::{IpAddr, SocketAddr};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::host::{HostIdentity, HostSnapshot, IfaceCounters, IfaceInfo, SnmpCounters};
use crate::interrupt::{self, Interrupt};
use crate::msg::doctor::HostFacts;
use crate::msg::rr::{RrCounts, RrProto, RrReverse, RrServed};

/// Asks the agent what its interfaces are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoverRequest {}

/// One address configured on an interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IfaceAddr {
    pub iface: String,
    pub addr: IpAddr,
    pub prefix: u8,
}

/// The agent's answer to a discovery: every up non-loopback interface's facts (MTU,
/// offloads, bond members, VLAN parent, rp_filter) and the host's sysctls as `doctor`
/// reads them, plus every address with its prefix length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Discovery {
    /// The node's interface and sysctl facts as `doctor` reads them.
    pub facts: HostFacts,
    pub addrs: Vec<IfaceAddr>,
    /// Interfaces that exist but are not up (protocol 11): an interconnect NIC that
    /// is down is named as such, not as missing.
    pub down: Vec<String>,
}

/// Asks the agent for its kernel counters (protocol 11): `/proc/net/snmp` and the
/// counters of each named interface, read at once. The mesh reads every node at the
/// start and the end of its tests.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CountersRequest {
    /// The interfaces to read (at most [`MAX_COUNTER_IFACES`]).
    pub ifaces: Vec<String>,
}

/// Most interfaces one counters request may name.
pub const MAX_COUNTER_IFACES: usize = 64;

/// One interface's counters, or none when it could not be read (gone, renamed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicCounters {
    pub iface: String,
    pub counters: Option<IfaceCounters>,
}

/// The agent's kernel counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeCounters {
    /// IP, UDP and TCP counters (None: /proc/net/snmp could not be read).
    pub snmp: Option<SnmpCounters>,
    pub nics: Vec<NicCounters>,
}

/// Most addresses one discovery reply lists (a bound on what the orchestrator keeps).
pub const MAX_DISCOVERED_ADDRS: usize = 1024;

/// What a third-party test measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ThirdPartyTest {
    /// A `path` test: forward and reverse size searches.
    Path,
    /// The mesh's block test (protocol 11): the Cache Fusion pattern by default (UDP,
    /// one 8 KiB block answering a 128-byte request, one in flight), as `rr` runs it.
    Rr { rr: RrLoad },
    /// A `stream` test (TCP, one stream, A sends) of `duration_ms`.
    Stream { duration_ms: u64 },
    /// A full `rr` load (`rr --from`): A runs the requester with these parameters
    /// and returns everything it measured (protocol 6).
    RrLoad { rr: RrLoad },
}

/// The parameters of a third-party rr load: what `rr` takes, for this agent's share
/// of the clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrLoad {
    pub proto: RrProto,
    pub block: u32,
    pub request: u32,
    /// This agent's clients.
    pub clients: u32,
    /// Serving threads asked of the peer for this agent's session (0: its default).
    pub workers: u32,
    /// This agent's requester threads (0: one per core).
    pub threads: u32,
    pub duration_ms: u64,
    /// Open loop: this agent's requests per second (None: closed loop).
    pub rate: Option<u64>,
    /// UDP: a request unanswered this long is counted lost.
    pub timeout_ms: u64,
    pub verify: bool,
}

/// Most latency buckets a third-party rr result may carry: a histogram of 1 ns to
/// 100 s at 3 significant digits has fewer than 28,000.
pub const MAX_LATENCY_BUCKETS: usize = 32_768;
/// Most error lines a third-party rr result may carry.
pub const MAX_LOAD_ERRORS: usize = 16;

impl ThirdPartyTest {
    pub fn name(self) -> &'static str {
        match self {
            ThirdPartyTest::Path => "path",
            ThirdPartyTest::Rr { .. } => "rr",
            ThirdPartyTest::Stream { .. } => "stream",
            ThirdPartyTest::RrLoad { .. } => "rr load",
        }
    }
}

/// Run `test` from this agent's address `from` toward the agent at `to`. An
/// unspecified `from` (0.0.0.0 or ::) lets this host's routes choose (protocol 6).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThirdPartyRequest {
    pub test: ThirdPartyTest,
    /// One of this agent's own addresses (the network the test is on).
    pub from: IpAddr,
    /// The peer agent's control address on the same network.
    pub to: SocketAddr,
    /// Clamp the session's TCP MSS to this (TCP_MAXSEG before connect): the pair's
    /// path was measured short of its network's MTU, and larger segments of the
    /// control connection (the agent's report) would vanish with the blocks.
    pub mss: Option<u32>,
}

/// How one direction's size search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// Reached the sending interface's MTU.
    Top,
    /// A router or the peer answered frag-needed / packet too big.
    Icmp,
    /// The sending host refused larger sends.
    Local,
    /// Larger probes vanished with no error.
    Silent,
}

/// One direction of a third-party path test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DirSummary {
    /// Largest IP packet that passed (confirmed).
    pub largest_ok: u32,
    /// `largest_ok` read as an interface MTU (link-layer slack).
    pub mtu: u32,
    pub stop: StopKind,
    /// Who answered frag-needed, for `Icmp`.
    pub icmp_from: Option<String>,
    pub probes: u32,
    pub lost: u32,
    /// The largest round trip a probe's wait was derived from, µs (the control
    /// connection's before the first answer, then the slowest probe answer), and
    /// that wait: `max(4 × rtt + 2 ms, 20 ms)`, at most 1 s (`engine::path::wait`),
    /// so a lost probe cost at most `wait_us`.
    pub rtt_us: Option<u64>,
    /// The longest a probe waited for its answer, µs: max(4 x RTT + 2 ms, 20 ms), at most 1
    /// s.
    pub wait_us: Option<u64>,
}

/// What a third-party path test found (forward: from A to B; reverse: B to A).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PathSummary {
    pub forward: DirSummary,
    pub reverse: DirSummary,
    /// A's interface MTU toward B, and B's toward A (as B reported it).
    pub local_mtu: u32,
    pub peer_mtu: Option<u32>,
    pub same_segment: bool,
    /// When a direction fell short: the first router A's packets toward B reach (A's
    /// gateway, or the router answering a TTL-1 probe), if any.
    pub first_router: Option<String>,
    /// When the forward direction fell short silently: the last hop that still
    /// answered its larger packets (TTL-limited probes); TTL 0: they vanish on A's
    /// first link.
    pub vanish_after: Option<HopSummary>,
    pub elapsed_ms: u64,
}

/// A hop of a path, by its TTL distance from the sender.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HopSummary {
    pub ttl: u32,
    pub addr: Option<String>,
}

/// What a third-party block test measured on A (the requester) over A's measured
/// phase (`wall_ns`): A asked, B served. Latencies are None (null) when no block was
/// answered, never 0. Loss is counted per request at the request's timeout (the
/// mesh's: 500 ms, when RAC declares a block lost), so `counts.lost` are the lost
/// blocks, those still unanswered at the end included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RrSummary {
    pub proto: RrProto,
    pub block: u32,
    pub request: u32,
    /// Open loop: the requests per second asked (None: one in flight, closed loop).
    pub rate: Option<u64>,
    pub timeout_ms: u64,
    /// The requester's counts, as rr reports them (lost: unanswered within `timeout_ms`,
    /// those still unanswered at the end included).
    pub counts: RrCounts,
    /// Requests cut off unanswered by a stop before they had waited the timeout.
    pub unanswered: u64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    pub max_ns: Option<u64>,
    pub wall_ns: u64,
    /// Blocks B said it served A's session.
    pub served: u64,
    /// IP fragments B's host created over A's session (its FragCreates delta; None
    /// when B could not read its counters): per block served, the fragments one
    /// block costs on this path.
    pub fragments: Option<u64>,
    /// Why the test ended early (a stall, the peer gone), each cause typed (empty:
    /// it did not; at most [`interrupt::MAX_CAUSES`]).
    pub interrupted_by: Vec<Interrupt>,
}

/// What a third-party stream test measured on B (the receiver): application bytes
/// received from A over B's measured phase (`wall_ns`), one TCP stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamSummary {
    pub bytes: u64,
    pub wall_ns: u64,
    /// Why the test ended early (a stall, the peer gone), each cause typed (empty:
    /// it did not; at most [`interrupt::MAX_CAUSES`]).
    pub interrupted_by: Vec<Interrupt>,
}

/// Everything a third-party rr load measured on A (the requester), with what the
/// peer B said it served A's session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RrLoadSummary {
    /// A's host.
    pub host: HostIdentity,
    /// B's host, as B told A.
    pub peer_host: HostIdentity,
    /// A's requester: counts, unanswered, the first errors (at most
    /// [`MAX_LOAD_ERRORS`]), latency with every non-empty bucket (at most
    /// [`MAX_LATENCY_BUCKETS`]), threads, their CPU, and A's measured phase (`wall_ns`,
    /// Go → its last requester thread finished).
    pub requester: RrReverse,
    /// Serving threads B granted A's session.
    pub workers: u32,
    /// B's account of A's session (its counts are B's, summed over its workers).
    pub served: RrServed,
    /// Why A's run ended early, each cause typed (empty: it did not; at most
    /// [`interrupt::MAX_CAUSES`]).
    pub interrupted_by: Vec<Interrupt>,
    /// A's interface toward B, and A's host before and after its run (system-wide
    /// CPU, interface and IP counters), for A's own figures.
    pub iface: Option<IfaceInfo>,
    pub before: HostSnapshot,
    pub after: HostSnapshot,
}

impl RrLoadSummary {
    /// Checks a decoded summary's sizes and that its histogram holds its count.
    pub fn check(&self) -> Result<(), String> {
        let r = &self.requester;
        let buckets = r.latency.buckets.len();
        if buckets > MAX_LATENCY_BUCKETS {
            return Err(format!(
                "{buckets} latency buckets, at most {MAX_LATENCY_BUCKETS} allowed"
            ));
        }
        if r.errors.len() > MAX_LOAD_ERRORS {
            return Err(format!(
                "{} error lines, at most {MAX_LOAD_ERRORS} allowed",
                r.errors.len()
            ));
        }
        interrupt::check(&self.interrupted_by)?;
        let held = r
            .latency
            .buckets
            .iter()
            .try_fold(0u64, |n, b| n.checked_add(b[1]));
        if held != Some(r.latency.count) {
            return Err(format!(
                "the latency buckets hold {held:?} values, the count says {}",
                r.latency.count
            ));
        }
        Ok(())
    }
}

/// The result of a third-party test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ThirdPartyResult {
    Path(PathSummary),
    Rr(RrSummary),
    Stream(StreamSummary),
    /// Protocol 6.
    RrLoad(Box<RrLoadSummary>),
}

impl ThirdPartyResult {
    /// Checks a decoded result's sizes: its interrupt causes, and an rr load's
    /// histogram and error lines ([`RrLoadSummary::check`]).
    pub fn check(&self) -> Result<(), String> {
        match self {
            ThirdPartyResult::Path(_) => Ok(()),
            ThirdPartyResult::Rr(s) => interrupt::check(&s.interrupted_by),
            ThirdPartyResult::Stream(s) => interrupt::check(&s.interrupted_by),
            ThirdPartyResult::RrLoad(s) => s.check(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msg::rr::Latency;

    fn summary() -> RrLoadSummary {
        RrLoadSummary {
            host: HostIdentity::default(),
            peer_host: HostIdentity::default(),
            requester: RrReverse {
                latency: Latency {
                    unit: "ns".into(),
                    count: 3,
                    buckets: vec![[1000, 2], [2000, 1]],
                    ..Latency::default()
                },
                threads: 1,
                ..RrReverse::default()
            },
            before: HostSnapshot::default(),
            after: HostSnapshot::default(),
            iface: None,
            workers: 1,
            served: RrServed::default(),
            interrupted_by: Vec::new(),
        }
    }

    #[test]
    fn a_load_summary_is_checked_for_size_and_count() {
        assert_eq!(summary().check(), Ok(()));
        let mut s = summary();
        s.requester.latency.count = 4;
        assert!(s.check().unwrap_err().contains("count says 4"));
        let mut s = summary();
        s.requester.latency.buckets = vec![[1, 0]; MAX_LATENCY_BUCKETS + 1];
        s.requester.latency.count = 0;
        assert!(s.check().unwrap_err().contains("latency buckets"));
        let mut s = summary();
        s.requester.latency.buckets = vec![[1, u64::MAX], [2, 1]];
        assert!(s.check().is_err(), "an overflowing sum is refused");
        let mut s = summary();
        s.requester.errors = vec![String::new(); MAX_LOAD_ERRORS + 1];
        assert!(s.check().unwrap_err().contains("error lines"));
    }

    /// A host's rr load cut by a stall and a signal, as `rr --from` would nest it.
    fn nested() -> Vec<Interrupt> {
        use crate::interrupt::{Span, Stalled};
        vec![
            Interrupt::Signal,
            Interrupt::FromHost {
                host: "10.0.0.2:7878".into(),
                causes: vec![
                    Interrupt::Stalled {
                        what: Stalled::Blocks,
                        spans: vec![Span {
                            from_ns: 2_000_000_000,
                            to_ns: 6_000_000_000,
                        }],
                    },
                    Interrupt::Requester {
                        error: "timed out".into(),
                    },
                ],
            },
        ]
    }

    #[test]
    fn a_summary_with_nested_causes_round_trips_through_frames() {
        let mut load = summary();
        load.interrupted_by = nested();
        let results = [
            ThirdPartyResult::RrLoad(Box::new(load)),
            ThirdPartyResult::Stream(StreamSummary {
                bytes: 1,
                wall_ns: 2,
                interrupted_by: nested(),
            }),
        ];
        for r in results {
            let frame = crate::codec::Codec::agent().encode(&r);
            let (back, used) = crate::codec::Codec::client()
                .decode::<ThirdPartyResult>(&frame)
                .unwrap()
                .unwrap();
            assert_eq!(used, frame.len());
            assert_eq!(back, r);
            assert_eq!(back.check(), Ok(()));
        }
        // The old text field is refused, not read as "not interrupted".
        let old = r#"{"kind":"stream","bytes":1,"wall_ns":2,"interrupted":"stalled"}"#;
        assert!(serde_json::from_str::<ThirdPartyResult>(old).is_err());
    }

    #[test]
    fn oversized_causes_are_refused_and_fitted_by_the_sender() {
        use crate::interrupt::{fit, MAX_CAUSES, MAX_CAUSE_TEXT, MAX_SPANS};
        let stream = |causes: Vec<Interrupt>| {
            ThirdPartyResult::Stream(StreamSummary {
                bytes: 0,
                wall_ns: 0,
                interrupted_by: causes,
            })
        };
        let many = vec![Interrupt::Signal; MAX_CAUSES + 1];
        let e = stream(many.clone()).check().unwrap_err();
        assert!(e.contains("interrupt causes, at most 32"), "{e}");
        assert_eq!(stream(fit(&many)).check(), Ok(()));
        assert_eq!(fit(&many).len(), MAX_CAUSES);
        // Nested causes count toward the limit.
        let host = |causes| Interrupt::FromHost {
            host: "h".into(),
            causes,
        };
        let mut load = summary();
        load.interrupted_by = vec![host(vec![Interrupt::AgentSide; MAX_CAUSES])];
        assert!(load.check().unwrap_err().contains("interrupt causes"));
        load.interrupted_by = fit(&load.interrupted_by);
        assert_eq!(load.check(), Ok(()));
        // A host's causes nest nothing further.
        let deep = vec![host(vec![host(Vec::new())])];
        assert!(stream(deep.clone())
            .check()
            .unwrap_err()
            .contains("nested deeper"));
        assert_eq!(fit(&deep), vec![host(Vec::new())]);
        // Long texts, cut at a character boundary by the sender.
        let long = vec![Interrupt::Requester {
            error: format!("a{}", "é".repeat(MAX_CAUSE_TEXT)),
        }];
        assert!(stream(long.clone())
            .check()
            .unwrap_err()
            .contains("text of"));
        let fitted = fit(&long);
        assert_eq!(stream(fitted.clone()).check(), Ok(()));
        assert!(
            matches!(fitted.first(), Some(Interrupt::Requester { error }) if error.len() == MAX_CAUSE_TEXT - 1),
            "{fitted:?}"
        );
        // Stall spans.
        let spans = vec![Interrupt::Stalled {
            what: crate::interrupt::Stalled::Bytes,
            spans: vec![
                crate::interrupt::Span {
                    from_ns: 0,
                    to_ns: 1
                };
                MAX_SPANS + 1
            ],
        }];
        assert!(stream(spans.clone())
            .check()
            .unwrap_err()
            .contains("stall spans"));
        assert_eq!(stream(fit(&spans)).check(), Ok(()));
        // A refusal kept in a cause (protocol 19), and a host's failure.
        let refused = |detail: String| Interrupt::AgentAnswer {
            error: crate::failed::Failed::Refused {
                refusal: crate::msg::Refusal::BadRequest { detail },
            },
        };
        let big = vec![
            refused("x".repeat(crate::msg::MAX_REFUSAL_TEXT + 1)),
            Interrupt::FromHostFailed {
                host: "h".into(),
                error: crate::failed::Failed::error("é".repeat(MAX_CAUSE_TEXT)),
            },
        ];
        assert!(stream(big.clone())
            .check()
            .unwrap_err()
            .contains("refusal's text"));
        let fitted = fit(&big);
        assert_eq!(stream(fitted.clone()).check(), Ok(()));
        assert_eq!(
            fitted.first(),
            Some(&refused("x".repeat(crate::msg::MAX_REFUSAL_TEXT)))
        );
        assert_eq!(stream(vec![refused("busy".into())]).check(), Ok(()));
    }

    #[test]
    fn an_rr_load_request_round_trips_and_rejects_unknown_fields() {
        let t = ThirdPartyTest::RrLoad {
            rr: RrLoad {
                proto: RrProto::Udp,
                block: 8192,
                request: 128,
                clients: 3,
                workers: 0,
                threads: 1,
                duration_ms: 1000,
                rate: Some(500),
                timeout_ms: 100,
                verify: false,
            },
        };
        let j = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<ThirdPartyTest>(&j).unwrap(), t);
        let bad = j.replace("\"verify\"", "\"extra\":1,\"verify\"");
        assert!(serde_json::from_str::<ThirdPartyTest>(&bad).is_err());
    }
}
