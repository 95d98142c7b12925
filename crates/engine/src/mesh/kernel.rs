//! Per-node kernel evidence over a mesh run: every node's agent is asked for its
//! IP/UDP/TCP counters and its interconnect NICs' counters before the first test and
//! after the last (in parallel, each read bounded), and the deltas become findings
//! when they show trouble a RAC interconnect suffers from: IP reassembly failures and
//! timeouts, UDP receive-buffer and input errors, NIC errors and drops.

use std::time::{Duration, Instant};

use mtuperf_proto::failed::Failed;
use mtuperf_proto::msg::mesh::{CountersRequest, NodeCounters, MAX_COUNTER_IFACES};
use mtuperf_proto::msg::ClientMsg;

pub use super::doc::{NicDelta, NodeKernel};
use super::finding::{Finding, KernelCounter, MeshFinding};
use super::model::{MeshNetwork, MeshNode};
use super::schedule::{run_bounded, MAX_THREADS};
use crate::client::{ConnectOptions, Session};

/// Longest one node's counters read may take (connect, handshake, answer).
pub const READ_WAIT: Duration = Duration::from_secs(5);

/// NIC drops are a finding above this share of the frames the NIC moved (Linux
/// counts a few benign drops, e.g. frames of protocols nothing listens to).
pub const DROPS_PER_MILLE: u64 = 1;

/// Each node's interconnect interfaces: its members' interfaces on `networks`.
pub fn ifaces(nodes: usize, networks: &[MeshNetwork]) -> Vec<Vec<String>> {
    let mut out = vec![Vec::new(); nodes];
    for m in networks.iter().flat_map(|n| &n.members) {
        if let Some(v) = out.get_mut(m.node) {
            if !v.contains(&m.iface) && v.len() < MAX_COUNTER_IFACES {
                v.push(m.iface.clone());
            }
        }
    }
    out
}

/// One reading of every node in `which` (the others: None), in parallel.
pub fn read(
    nodes: &[MeshNode],
    ifaces: &[Vec<String>],
    which: &dyn Fn(usize) -> bool,
    connect: &ConnectOptions,
) -> Vec<Option<(Result<NodeCounters, Failed>, Instant)>> {
    let opts = ConnectOptions {
        connect_timeout: connect.connect_timeout.min(READ_WAIT),
        reply_timeout: connect.reply_timeout.min(READ_WAIT),
        ..connect.clone()
    };
    let jobs: Vec<usize> = (0..nodes.len()).filter(|&n| which(n)).collect();
    let done = |_: usize, _: &(Result<NodeCounters, Failed>, Instant)| {};
    let got = run_bounded(
        &jobs,
        |&n| (n, n),
        1,
        jobs.len().clamp(1, MAX_THREADS),
        &|| false,
        |&n| {
            let req = CountersRequest {
                ifaces: ifaces.get(n).cloned().unwrap_or_default(),
            };
            let agent = nodes.get(n).map_or("", |x| x.agent.as_str());
            let r = Session::connect(agent, &opts).and_then(|s| {
                let c = s.ask::<NodeCounters>(&ClientMsg::Counters(req), "kernel counters");
                s.close();
                c
            });
            (r.map_err(|e| e.failed()), Instant::now())
        },
        &done,
    );
    let mut out: Vec<Option<_>> = vec![None; nodes.len()];
    for (n, r) in jobs.into_iter().zip(got) {
        if let Some(slot) = out.get_mut(n) {
            *slot = r;
        }
    }
    out
}

/// The deltas of every node read twice.
pub fn deltas(
    before: &[Option<(Result<NodeCounters, Failed>, Instant)>],
    after: &[Option<(Result<NodeCounters, Failed>, Instant)>],
) -> Vec<NodeKernel> {
    let mut out = Vec::new();
    for (node, (b, a)) in before.iter().zip(after).enumerate() {
        let (Some((b, tb)), Some((a, ta))) = (b, a) else {
            continue;
        };
        let span_ms = ta.saturating_duration_since(*tb).as_millis() as u64;
        let (b, a) = match (b, a) {
            (Ok(b), Ok(a)) => (b, a),
            (Err(e), _) | (_, Err(e)) => {
                out.push(NodeKernel {
                    node,
                    snmp: None,
                    nics: Vec::new(),
                    span_ms,
                    error: Some(e.clone()),
                });
                continue;
            }
        };
        let snmp = match (b.snmp, a.snmp) {
            (Some(b), Some(a)) => Some(a.delta(&b)),
            _ => None,
        };
        let nics = a
            .nics
            .iter()
            .filter_map(|x| {
                let then = b.nics.iter().find(|y| y.iface == x.iface)?.counters?;
                Some(NicDelta {
                    iface: x.iface.clone(),
                    delta: x.counters?.delta(&then),
                })
            })
            .collect();
        out.push(NodeKernel {
            node,
            snmp,
            nics,
            span_ms,
            error: None,
        });
    }
    out
}

fn counter_finding(node: usize, counter: KernelCounter, delta: u64) -> MeshFinding {
    MeshFinding::new(
        None,
        Some(node),
        Finding::Kernel {
            counter,
            delta,
            iface: None,
            of: None,
        },
    )
}

/// The findings of the deltas: reassembly failures and timeouts, UDP receive-buffer
/// errors (and other input errors beyond them), NIC errors, and NIC drops above
/// [`DROPS_PER_MILLE`] of the NIC's frames. `net_of(node, iface)`: the network of a
/// node's interconnect NIC; `faulty(node, net)`: a fault of the paths through that
/// node on that network is already found (the path test's own oversized probes are
/// dropped at its NIC then: those drops are the fault's, not news).
pub fn findings(
    kernel: &[NodeKernel],
    net_of: &dyn Fn(usize, &str) -> Option<usize>,
    faulty: &dyn Fn(usize, usize) -> bool,
) -> Vec<MeshFinding> {
    let mut out = Vec::new();
    for k in kernel {
        if let Some(s) = &k.snmp {
            for (counter, delta) in [
                (KernelCounter::ReasmFails, s.ip_reasm_fails),
                (KernelCounter::ReasmTimeout, s.ip_reasm_timeout),
                (KernelCounter::UdpRcvbufErrors, s.udp_rcvbuf_errors),
            ] {
                if delta > 0 {
                    out.push(counter_finding(k.node, counter, delta));
                }
            }
            if s.udp_in_errors > s.udp_rcvbuf_errors {
                out.push(counter_finding(
                    k.node,
                    KernelCounter::UdpInErrors,
                    s.udp_in_errors,
                ));
            }
        }
        for nic in &k.nics {
            let d = &nic.delta;
            let frames = d.rx_packets + d.tx_packets;
            let drops = d.rx_dropped + d.tx_dropped;
            let errors = d.rx_errors + d.tx_errors;
            let mut push = |counter, delta, of| {
                let mut f = counter_finding(k.node, counter, delta);
                f.net = net_of(k.node, &nic.iface);
                f.what = Finding::Kernel {
                    counter,
                    delta,
                    iface: Some(nic.iface.clone()),
                    of,
                };
                out.push(f);
            };
            if errors > 0 {
                push(KernelCounter::NicErrors, errors, None);
            }
            let explained = net_of(k.node, &nic.iface).is_some_and(|n| faulty(k.node, n));
            if drops * 1000 > frames * DROPS_PER_MILLE && !explained {
                push(KernelCounter::NicDrops, drops, Some(frames));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use mtuperf_proto::host::{IfaceCounters, SnmpCounters};
    use mtuperf_proto::msg::mesh::NicCounters;

    use super::*;

    type Read = (Result<NodeCounters, Failed>, Instant);

    fn at(snmp: SnmpCounters, rx: u64, dropped: u64) -> Read {
        (
            Ok(NodeCounters {
                snmp: Some(snmp),
                nics: vec![NicCounters {
                    iface: "net1".into(),
                    counters: Some(IfaceCounters {
                        rx_packets: rx,
                        rx_dropped: dropped,
                        ..IfaceCounters::default()
                    }),
                }],
            }),
            Instant::now(),
        )
    }

    #[test]
    fn counters_that_grow_become_findings_naming_the_node() {
        let quiet = SnmpCounters::default();
        let grown = SnmpCounters {
            ip_reasm_fails: 1204,
            ip_reasm_timeout: 3,
            udp_in_errors: 10,
            udp_rcvbuf_errors: 10,
            ip_frag_creates: 600,
            ..SnmpCounters::default()
        };
        // Node 0 quiet (drops under 0.1% of 100000 frames), node 1 grown and its NIC
        // dropping 2% of its frames, node 2 unread at the end.
        let before = vec![
            Some(at(quiet, 0, 0)),
            Some(at(quiet, 0, 0)),
            Some(at(quiet, 0, 0)),
        ];
        let after = vec![
            Some(at(quiet, 100_000, 50)),
            Some(at(grown, 1000, 20)),
            None,
        ];
        let k = deltas(&before, &after);
        assert_eq!(k.len(), 2);
        assert_eq!(k[1].snmp.unwrap().ip_frag_creates, 600);
        let f = findings(&k, &|_, _| Some(0), &|_, _| false);
        let got: Vec<(Option<usize>, Option<usize>, &Finding)> =
            f.iter().map(|x| (x.node, x.net, &x.what)).collect();
        let plain = |counter, delta| Finding::Kernel {
            counter,
            delta,
            iface: None,
            of: None,
        };
        assert_eq!(
            got,
            vec![
                (Some(1), None, &plain(KernelCounter::ReasmFails, 1204)),
                (Some(1), None, &plain(KernelCounter::ReasmTimeout, 3)),
                (Some(1), None, &plain(KernelCounter::UdpRcvbufErrors, 10)),
                (
                    Some(1),
                    Some(0),
                    &Finding::Kernel {
                        counter: KernelCounter::NicDrops,
                        delta: 20,
                        iface: Some("net1".into()),
                        of: Some(1000)
                    }
                ),
            ]
        );
    }

    #[test]
    fn a_failed_read_is_kept_as_the_node_error() {
        let busy = Failed::Refused {
            refusal: mtuperf_proto::msg::Refusal::UnknownSession,
        };
        let before = vec![Some((Err(busy.clone()), Instant::now()))];
        let after = vec![Some(at(SnmpCounters::default(), 0, 0))];
        let k = deltas(&before, &after);
        assert_eq!(k[0].error, Some(busy));
        assert!(findings(&k, &|_, _| None, &|_, _| false).is_empty());
        // Drops on a NIC whose paths a fault explains are the fault's.
        let before = vec![Some(at(SnmpCounters::default(), 0, 0))];
        let after = vec![Some(at(SnmpCounters::default(), 1000, 20))];
        let k = deltas(&before, &after);
        assert_eq!(findings(&k, &|_, _| Some(0), &|_, _| false).len(), 1);
        assert!(findings(&k, &|_, _| Some(0), &|_, _| true).is_empty());
    }
}
