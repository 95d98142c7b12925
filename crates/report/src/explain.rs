//! Words for the likely cause of a test that moved nothing or stalled
//! (`mtuperf_engine::explain`): one line, the cause with its numbers and where to look.

use std::net::IpAddr;

use mtuperf_engine::explain::{Cause, Diagnosis, PacketKind, PathCheck, Way};
use mtuperf_proto::text::escape_control as esc;

use crate::diagnosis::{self, Names, Scope};
use crate::fmt::latency_ns;

fn way(w: Way) -> &'static str {
    match w {
        Way::ToAgent => "client → agent",
        Way::FromAgent => "agent → client",
    }
}

/// "8 KiB blocks (8260-byte datagrams)", "9000-byte TCP segments (…)".
fn packets(k: PacketKind, bytes: u32) -> String {
    let size = |b: u32| {
        if b >= 1024 && b.is_multiple_of(1024) {
            format!("{} KiB", b / 1024)
        } else {
            format!("{b} B")
        }
    };
    match k {
        PacketKind::UdpBlock { block } => {
            format!("{} blocks ({bytes}-byte datagrams)", size(block))
        }
        PacketKind::UdpRequest { request } => {
            format!("{} requests ({bytes}-byte datagrams)", size(request))
        }
        PacketKind::UdpDatagram { datagram } => {
            format!("{} datagrams ({bytes}-byte IP packets)", size(datagram))
        }
        PacketKind::TcpSegment => {
            format!("{bytes}-byte TCP segments (the test's data and the agent's report)")
        }
    }
}

/// Where the path check located the limit, as a clause ("" when it found nothing):
/// the shared diagnosis's words, this end and the agent named as the run knows them.
fn location(p: &PathCheck) -> String {
    let name = |a: IpAddr| {
        if a == p.local_addr {
            "this host".to_string()
        } else if a == p.agent_addr {
            "the agent's host".to_string()
        } else {
            a.to_string()
        }
    };
    let names = Names {
        node: &name,
        on: String::new(),
    };
    p.faults
        .iter()
        .map(|d| diagnosis::say(d, &names, Scope::Pair).summary)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The interface MTU the sender of `w` has.
fn sender_mtu(p: &PathCheck, w: Way) -> u32 {
    match w {
        Way::ToAgent => p.local_mtu,
        Way::FromAgent => p.peer_mtu.unwrap_or(p.local_mtu),
    }
}

/// "likely cause: the path carries 1500 of 9000 agent → client: 8 KiB blocks (8260-byte
/// datagrams) cannot pass; both NICs say 9000/9000, so a switch port … (see `mtuperf
/// path 198.18.6.2:7878`)". `target` is the agent as the run addressed it.
pub fn line(d: &Diagnosis, target: &str) -> String {
    let check = format!("see `mtuperf path {}`", esc(target));
    let why = match &d.cause {
        Cause::PathMtu { carries, packet } => {
            let of = d
                .path
                .as_ref()
                .map_or_else(String::new, |p| format!(" of {}", sender_mtu(p, packet.way)));
            let loc = d
                .path
                .as_ref()
                .map(location)
                .filter(|l| !l.is_empty())
                .map_or_else(String::new, |l| format!("; {l}"));
            format!(
                "the path carries {carries}{of} {}: {} cannot pass{loc} ({check})",
                way(packet.way),
                packets(packet.kind, packet.bytes),
            )
        }
        Cause::AnsweredLate { late, timeout_ns } => format!(
            "the agent answered, but every block came after its request's timeout of {} ({late} late): the load is past what it serves within the timeout; run fewer --clients or a longer --timeout",
            latency_ns(*timeout_ns as f64)
        ),
        Cause::RequestsDropped => format!(
            "the agent received none of the test's requests although the path check's probes passed: a filter (firewall rule) in front of the test's data port drops them ({check})"
        ),
        Cause::AnswersDropped { answered } => format!(
            "the agent answered {answered} requests and none of the answers arrived although the path check's probes passed both ways: a filter on the way back, or this host's receive buffers (RcvbufErrors)"
        ),
        Cause::AgentSilent => "the agent accepts a new session and the path carries the test's packets, but it never reported this test: it stopped serving it (stopped, hung or overloaded)".into(),
        Cause::AgentGone { error } => format!(
            "the agent does not answer a new session ({}): its process is gone, stopped or hung, or its host is down",
            esc(&crate::refusal::failed(error))
        ),
        Cause::Unexplained => "the path carries the test's packets both ways and the agent answered: nothing the path check sees explains it (another load on the path or on either host?)".into(),
        Cause::Unchecked { error } => {
            return format!(
                "cause not checked: the path check failed ({})",
                esc(&crate::refusal::failed(error))
            )
        }
    };
    format!("likely cause: {why}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_engine::explain::Packet;

    #[test]
    fn a_switch_port_at_1500_names_the_blocks_that_cannot_pass() {
        let (here, there): (IpAddr, IpAddr) = ([198, 18, 6, 1].into(), [198, 18, 6, 2].into());
        let d = Diagnosis {
            cause: Cause::PathMtu {
                carries: 1500,
                packet: Packet {
                    way: Way::FromAgent,
                    bytes: 8260,
                    kind: PacketKind::UdpBlock { block: 8192 },
                },
            },
            path: Some(PathCheck {
                to_agent: 1500,
                from_agent: 1504,
                to_agent_mtu: 1500,
                from_agent_mtu: 1500,
                local_mtu: 9000,
                peer_mtu: Some(9000),
                local_addr: here,
                agent_addr: there,
                faults: vec![mtuperf_engine::diagnosis::Diagnosis {
                    fault: mtuperf_engine::diagnosis::Fault::SwitchPort { nic_mtu: 9000 },
                    at: mtuperf_engine::diagnosis::Location::segment(here, there),
                    mtu: 1500,
                    expect: 9000,
                }],
                ok: false,
                v6: false,
            }),
        };
        let l = line(&d, "198.18.6.2:7878");
        assert!(
            l.starts_with(
                "likely cause: the path carries 1500 of 9000 agent → client: 8 KiB blocks (8260-byte datagrams) cannot pass; both directions between this host and the agent's host stop above 1500, silently, while both NICs say 9000: an L2 device between them"
            ),
            "{l}"
        );
        assert!(l.ends_with("(see `mtuperf path 198.18.6.2:7878`)"), "{l}");
        // A UDP stream of 8 KiB datagrams over the same path.
        let udp = Diagnosis {
            cause: Cause::PathMtu {
                carries: 1500,
                packet: Packet {
                    way: Way::ToAgent,
                    bytes: 8220,
                    kind: PacketKind::UdpDatagram { datagram: 8192 },
                },
            },
            ..d
        };
        let l = line(&udp, "198.18.6.2:7878");
        assert!(
            l.starts_with(
                "likely cause: the path carries 1500 of 9000 client → agent: 8 KiB datagrams (8220-byte IP packets) cannot pass; both directions between"
            ),
            "{l}"
        );
    }

    #[test]
    fn peer_text_is_escaped() {
        let d = Diagnosis {
            cause: Cause::AgentGone {
                error: mtuperf_proto::failed::Failed::error("refused\u{1b}[2J"),
            },
            path: None,
        };
        assert!(!line(&d, "x").contains('\u{1b}'));
    }
}
