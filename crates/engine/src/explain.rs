//! Why a test moved nothing, or stalled. After an rr step that got no block back, or
//! an rr or stream run that stalled or never got the agent's report, the same agent is
//! checked again on a fresh session: the path check (a few seconds), whose findings
//! are held against the packets the test needed and what each end counted. The
//! outcome is typed ([`Cause`]); `report` words it.
//!
//! The order of the rules: a path that cannot carry the test's packets explains
//! everything after it (the agent's report is lost on the same path); then answers
//! that came but late; then what the agent's own account says (it never got the
//! requests, or its answers never arrived); then an agent that is alive but went
//! silent on this test's session.

use mtuperf_proto::failed::Failed;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::client::Session;
use crate::config::PathConfig;
use std::net::IpAddr;

use crate::diagnosis::Diagnosis as Fault;
use crate::path::{self, PathResult};

/// One direction of the path, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Way {
    ToAgent,
    FromAgent,
}

/// The packets a test sends, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PacketKind {
    /// rr over UDP: one datagram per block, `block` bytes after the 40-byte header.
    UdpBlock { block: u32 },
    /// rr over UDP: one datagram per request.
    UdpRequest { request: u32 },
    /// `stream --udp`: datagrams of `datagram` bytes (mtuperf's header included).
    UdpDatagram {
        /// The datagram's bytes (mtuperf's header included).
        datagram: u32,
    },
    /// TCP segments, data or control: the MSS follows the smaller interface MTU.
    TcpSegment,
}

/// The largest IP packet of one kind a test sends one way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Packet {
    pub way: Way,
    /// IP bytes on the wire: a datagram larger than its sender's interface MTU is cut
    /// into fragments of at most that MTU before it leaves.
    pub bytes: u32,
    pub kind: PacketKind,
}

/// What kind of test failed, for the packets it needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    RrUdp {
        block: u32,
        request: u32,
    },
    RrTcp,
    Stream,
    /// `stream --udp` of `datagram`-byte datagrams, sent toward the agent, from it,
    /// or both.
    UdpStream {
        /// The datagram's bytes (mtuperf's header included).
        datagram: u32,
        to_agent: bool,
        from_agent: bool,
    },
}

/// mtuperf's datagram header, UDP's and IPv4's (IPv6: 20 more).
const UDP_OVERHEAD: u32 = mtuperf_proto::dgram::HEADER_LEN as u32 + 8 + 20;

impl Test {
    /// The packets the test sends, data first, when this end's interface carries
    /// `local_mtu` and the agent's `peer_mtu`. Every test also needs its TCP control
    /// connection both ways (the agent's report is several kB).
    pub fn packets(self, local_mtu: u32, peer_mtu: u32, v6: bool) -> Vec<Packet> {
        let extra = if v6 { 20 } else { 0 };
        let tcp = local_mtu.min(peer_mtu);
        let seg = |way| Packet {
            way,
            bytes: tcp,
            kind: PacketKind::TcpSegment,
        };
        let mut out = Vec::new();
        if let Test::RrUdp { block, request } = self {
            out.push(Packet {
                way: Way::FromAgent,
                bytes: (block + UDP_OVERHEAD + extra).min(peer_mtu),
                kind: PacketKind::UdpBlock { block },
            });
            out.push(Packet {
                way: Way::ToAgent,
                bytes: (request + UDP_OVERHEAD + extra).min(local_mtu),
                kind: PacketKind::UdpRequest { request },
            });
        }
        if let Test::UdpStream {
            datagram,
            to_agent,
            from_agent,
        } = self
        {
            let ways = [
                (to_agent, Way::ToAgent, local_mtu),
                (from_agent, Way::FromAgent, peer_mtu),
            ];
            for (_, way, mtu) in ways.into_iter().filter(|w| w.0) {
                out.push(Packet {
                    way,
                    bytes: (datagram + 8 + 20 + extra).min(mtu),
                    kind: PacketKind::UdpDatagram { datagram },
                });
            }
        }
        out.extend([seg(Way::ToAgent), seg(Way::FromAgent)]);
        out
    }

    /// Whether the test sends data toward the agent (a reverse UDP stream does not:
    /// the agent receiving nothing then says nothing).
    fn sends_to_agent(self) -> bool {
        match self {
            Test::UdpStream { to_agent, .. } => to_agent,
            Test::RrUdp { .. } | Test::RrTcp | Test::Stream => true,
        }
    }
}

/// What the path check found, in short.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PathCheck {
    /// Largest IP packets that crossed each way (exact sizes).
    pub to_agent: u32,
    pub from_agent: u32,
    /// Those read as interface MTUs (within the link-layer slack).
    pub to_agent_mtu: u32,
    pub from_agent_mtu: u32,
    /// The interfaces' MTUs: this end's, and the agent's when it reported it.
    pub local_mtu: u32,
    pub peer_mtu: Option<u32>,
    /// This end's address on the path and the agent's (the faults name them).
    pub local_addr: IpAddr,
    /// The agent's address.
    pub agent_addr: IpAddr,
    /// What keeps the path from carrying its expected MTU, class and location: the
    /// diagnosis `path` names.
    pub faults: Vec<Fault>,
    /// Both ways carry the expected MTU (the larger of the interfaces').
    pub ok: bool,
    pub v6: bool,
}

impl PathCheck {
    pub fn of(p: &PathResult) -> PathCheck {
        PathCheck {
            to_agent: p.forward.largest_ok,
            from_agent: p.reverse.largest_ok,
            to_agent_mtu: p.forward_mtu,
            from_agent_mtu: p.reverse_mtu,
            local_mtu: p.local.mtu,
            peer_mtu: p.agent_path.iface.as_ref().map(|i| i.mtu),
            local_addr: p.local_addr,
            agent_addr: p.agent_addr,
            faults: p.faults.clone(),
            ok: p.ok,
            v6: p.v6,
        }
    }

    fn carries(&self, way: Way) -> (u32, u32) {
        match way {
            Way::ToAgent => (self.to_agent, self.to_agent_mtu),
            Way::FromAgent => (self.from_agent, self.from_agent_mtu),
        }
    }
}

/// The likely cause, from the run's evidence and the path check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Cause {
    /// The path carries at most `carries` (an MTU) `way`, less than the test's
    /// `packet`: those packets cannot pass.
    PathMtu {
        /// The MTU the path carries that way.
        carries: u32,
        /// The test's packet it does not carry.
        packet: Packet,
    },
    /// Blocks came back, every one after its request had timed out.
    AnsweredLate { late: u64, timeout_ns: u64 },
    /// The agent received none of the requests although the path check's probes
    /// passed: something in front of the test's data port drops them (a filter).
    RequestsDropped,
    /// The agent answered `answered` requests and none arrived: dropped on the way
    /// back (a filter, or this host's NIC or socket buffers).
    AnswersDropped { answered: u64 },
    /// The agent accepts a new session and the path carries the test's packets, but
    /// its report of this test never came: it stopped serving it (stopped, hung or
    /// overloaded).
    AgentSilent,
    /// The agent does not answer a new session: its process is gone, stopped or hung,
    /// or its host is down.
    AgentGone { error: Failed },
    /// The path carries the test's packets and the agent answered: nothing this
    /// check sees explains the stall (another load on the path or a host).
    Unexplained,
    /// The path check could not run (a refusal typed).
    Unchecked { error: Failed },
}

/// A cause and the path check it rests on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Diagnosis {
    pub cause: Cause,
    /// None when the path check could not run.
    pub path: Option<PathCheck>,
}

/// What the agent said it did (None in [`Evidence`] when its report never came).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    /// rr: requests received; stream: bytes read.
    pub received: u64,
    /// rr: blocks sent; stream: bytes written.
    pub answered: u64,
}

/// What the failed run showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence {
    pub test: Test,
    /// What came back in time to this end (rr: blocks; stream: bytes moved).
    pub received: u64,
    /// rr: blocks that came after their request had timed out.
    pub late: u64,
    pub timeout_ns: u64,
    pub agent: Option<Account>,
}

/// The cause the evidence and the path check point at (`path`: the check, or why it
/// could not run).
pub fn decide(e: &Evidence, path: Result<&PathCheck, &Failed>) -> Cause {
    let p = match path {
        Ok(p) => p,
        Err(error) => {
            return Cause::Unchecked {
                error: error.clone(),
            }
        }
    };
    let peer = p.peer_mtu.unwrap_or(p.local_mtu);
    for packet in e.test.packets(p.local_mtu, peer, p.v6) {
        let (largest, mtu) = p.carries(packet.way);
        if packet.bytes > largest {
            return Cause::PathMtu {
                carries: mtu,
                packet,
            };
        }
    }
    if e.received == 0 && e.late > 0 {
        return Cause::AnsweredLate {
            late: e.late,
            timeout_ns: e.timeout_ns,
        };
    }
    match e.agent {
        None => Cause::AgentSilent,
        Some(a) if a.received == 0 && e.test.sends_to_agent() => Cause::RequestsDropped,
        Some(a) if e.received == 0 && a.answered > 0 => Cause::AnswersDropped {
            answered: a.answered,
        },
        Some(_) => Cause::Unexplained,
    }
}

/// How long the new session waits to connect and for each reply: an agent that does
/// not answer by then is not answering (a live one answers in milliseconds).
pub const RECONNECT_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

/// The likely cause of a failed run (`explain`: a few seconds' path check on a
/// fresh session), when it failed, the caller wants it, and no signal ended it.
pub fn when_failed(
    session: &Session,
    failed: bool,
    wanted: bool,
    interrupt: &std::sync::atomic::AtomicBool,
    evidence: impl FnOnce() -> Evidence,
) -> Option<Diagnosis> {
    (failed && wanted && !interrupt.load(std::sync::atomic::Ordering::Relaxed))
        .then(|| diagnose(session, &evidence()))
}

/// Checks the path toward `session`'s agent again on a new session (the old one may
/// be stuck behind a lost report) and decides the cause.
pub fn diagnose(session: &Session, e: &Evidence) -> Diagnosis {
    let fresh = match session.reconnect(RECONNECT_WITHIN) {
        Ok(s) => s,
        Err(err) => {
            return Diagnosis {
                cause: Cause::AgentGone {
                    error: err.failed(),
                },
                path: None,
            }
        }
    };
    let checked = path::run(&fresh, &fresh.agent.to_string(), &PathConfig::default());
    fresh.close();
    match checked {
        Ok(r) => {
            let p = PathCheck::of(&r);
            Diagnosis {
                cause: decide(e, Ok(&p)),
                path: Some(p),
            }
        }
        Err(err) => Diagnosis {
            cause: decide(e, Err(&err.failed())),
            path: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path check: the largest sizes each way, both NICs' MTUs; its faults as the
    /// shared diagnosis reads them (sizes short of the sender's NIC vanished silently).
    fn check(to: u32, from: u32, local: u32, peer: u32) -> PathCheck {
        use crate::diagnosis::pair::{self, End, Pair, Way as Dir};
        use mtuperf_proto::msg::mesh::StopKind;
        let mtu = |x: u32| if x % 500 == 4 { x - 4 } else { x };
        let (here, there): (IpAddr, IpAddr) = ([198, 18, 6, 1].into(), [198, 18, 6, 2].into());
        let end = |addr, nic| End {
            addr,
            nic_mtu: Some(nic),
            iface: None,
            first_router: None,
        };
        let dir = |size: u32, sender: u32| Dir {
            mtu: mtu(size),
            stop: if mtu(size) < sender {
                StopKind::Silent
            } else {
                StopKind::Top
            },
            icmp_from: None,
            vanish_after: None,
        };
        let expect = local.max(peer);
        let faults = pair::decide(&Pair {
            a: end(here, local),
            b: end(there, peer),
            ab: Some(dir(to, local)),
            ba: Some(dir(from, peer)),
            expect,
        });
        PathCheck {
            to_agent: to,
            from_agent: from,
            to_agent_mtu: mtu(to),
            from_agent_mtu: mtu(from),
            local_mtu: local,
            peer_mtu: Some(peer),
            local_addr: here,
            agent_addr: there,
            ok: faults.is_empty(),
            faults,
            v6: false,
        }
    }

    const RR8K: Test = Test::RrUdp {
        block: 8192,
        request: 128,
    };

    const UDP8K: Test = Test::UdpStream {
        datagram: 8192,
        to_agent: true,
        from_agent: false,
    };

    fn ev(test: Test, received: u64, late: u64, agent: Option<(u64, u64)>) -> Evidence {
        Evidence {
            test,
            received,
            late,
            timeout_ns: 100_000_000,
            agent: agent.map(|(received, answered)| Account { received, answered }),
        }
    }

    fn mtu(way: Way, carries: u32, bytes: u32, kind: PacketKind) -> Cause {
        Cause::PathMtu {
            carries,
            packet: Packet { way, bytes, kind },
        }
    }

    #[test]
    fn each_cause_from_its_evidence() {
        let switchport = check(1500, 1504, 9000, 9000);
        let jumbo = check(9000, 9000, 9000, 9000);
        let std = check(1500, 1500, 1500, 1500);
        let mismatch = check(1500, 1500, 9000, 1500);
        let block = PacketKind::UdpBlock { block: 8192 };
        let unanswered = Failed::error("even 68-byte probes get no answer");
        let cases: Vec<(&str, Evidence, Result<&PathCheck, &Failed>, Cause)> = vec![
            (
                "NICs at 9000, a switch port at 1500, 8K UDP blocks: the blocks cannot pass",
                ev(RR8K, 0, 0, None),
                Ok(&switchport),
                mtu(Way::FromAgent, 1500, 8260, block),
            ),
            (
                "the same path under a TCP stream: its 9000-byte segments cannot pass",
                ev(Test::Stream, 0, 0, None),
                Ok(&switchport),
                mtu(Way::ToAgent, 1500, 9000, PacketKind::TcpSegment),
            ),
            (
                "NICs at 9000, a switch port at 1500, 8K UDP stream datagrams: they cannot pass",
                ev(UDP8K, 0, 0, None),
                Ok(&switchport),
                mtu(Way::ToAgent, 1500, 8220, PacketKind::UdpDatagram { datagram: 8192 }),
            ),
            (
                "the same, a reverse UDP stream: the agent's datagrams cannot pass",
                ev(
                    Test::UdpStream {
                        datagram: 8192,
                        to_agent: false,
                        from_agent: true,
                    },
                    0,
                    0,
                    None,
                ),
                Ok(&switchport),
                mtu(Way::FromAgent, 1500, 8220, PacketKind::UdpDatagram { datagram: 8192 }),
            ),
            (
                "a reverse UDP stream on a fine path, nothing came back: the agent's datagrams dropped, not 'requests'",
                ev(
                    Test::UdpStream {
                        datagram: 8192,
                        to_agent: false,
                        from_agent: true,
                    },
                    0,
                    0,
                    Some((0, 9_000)),
                ),
                Ok(&jumbo),
                Cause::AnswersDropped { answered: 9_000 },
            ),
            (
                "a UDP stream the agent got nothing of on a fine path: a filter",
                ev(UDP8K, 0, 0, Some((0, 0))),
                Ok(&jumbo),
                Cause::RequestsDropped,
            ),
            (
                "8K blocks on a 1500 path are fragmented by the agent: they pass",
                ev(RR8K, 0, 0, Some((40, 40))),
                Ok(&std),
                Cause::AnswersDropped { answered: 40 },
            ),
            (
                "a 9000 client toward a 1500 agent: small requests, blocks fragmented at 1500",
                ev(RR8K, 0, 0, Some((0, 0))),
                Ok(&mismatch),
                Cause::RequestsDropped,
            ),
            (
                "every block after its timeout: answered late",
                ev(RR8K, 0, 380_000, Some((400_000, 400_000))),
                Ok(&jumbo),
                Cause::AnsweredLate {
                    late: 380_000,
                    timeout_ns: 100_000_000,
                },
            ),
            (
                "the agent alive, the path fine, no report: the agent went silent",
                ev(RR8K, 120, 0, None),
                Ok(&jumbo),
                Cause::AgentSilent,
            ),
            (
                "blocks came, the agent reported, the path is fine: nothing explains it",
                ev(Test::RrTcp, 5_000, 0, Some((5_000, 5_000))),
                Ok(&jumbo),
                Cause::Unexplained,
            ),
            (
                "no path check",
                ev(Test::Stream, 0, 0, None),
                Err(&unanswered),
                Cause::Unchecked {
                    error: unanswered.clone(),
                },
            ),
        ];
        for (what, e, path, want) in cases {
            assert_eq!(decide(&e, path), want, "{what}");
        }
    }

    #[test]
    fn packets_are_cut_to_the_senders_mtu() {
        let p = RR8K.packets(9000, 1500, false);
        assert_eq!(p[0].bytes, 1500, "the agent at 1500 fragments the block");
        assert_eq!(p[1].bytes, 128 + 68, "a request is one small datagram");
        assert_eq!(
            (p[2].bytes, p[3].bytes),
            (1500, 1500),
            "TCP: the smaller MTU"
        );
        assert_eq!(RR8K.packets(9000, 9000, true)[0].bytes, 8192 + 88);
        assert_eq!(Test::Stream.packets(9000, 9000, false).len(), 2);
        let both = Test::UdpStream {
            datagram: 8192,
            to_agent: true,
            from_agent: true,
        };
        let p = both.packets(9000, 1500, false);
        assert_eq!(
            p.iter().map(|p| (p.way, p.bytes)).collect::<Vec<_>>(),
            [
                (Way::ToAgent, 8220),
                (Way::FromAgent, 1500),
                (Way::ToAgent, 1500),
                (Way::FromAgent, 1500)
            ],
            "one datagram each way it is sent, cut to its sender's MTU; then TCP"
        );
    }

    #[test]
    fn a_diagnosis_is_stored_typed() {
        let d = Diagnosis {
            cause: mtu(
                Way::FromAgent,
                1500,
                8260,
                PacketKind::UdpBlock { block: 8192 },
            ),
            path: Some(check(1500, 1504, 9000, 9000)),
        };
        let v = serde_json::to_value(&d).unwrap();
        assert_eq!(v["cause"]["cause"], "path_mtu");
        assert_eq!(v["cause"]["packet"]["way"], "from_agent");
        assert_eq!(v["cause"]["packet"]["kind"]["kind"], "udp_block");
        assert_eq!(serde_json::from_value::<Diagnosis>(v).unwrap(), d);
    }
}
