//! Each node's kernel counters over the run in words: the table of their deltas,
//! and the findings they raise (reassembly failures, receive-buffer drops, NIC
//! errors), each with the node's own settings and the doctor line that checks it.

use std::fmt::Write as _;

use mtuperf_engine::mesh::KernelCounter;
use mtuperf_proto::host::SnmpCounters;
use mtuperf_proto::text::escape_control;

use super::{thousands, Document};
use crate::mesh::words::{Say, Words};

/// Each node's kernel counters over the run.
pub fn kernel(o: &mut String, d: &Document, say: &Say<'_>) {
    let r = &d.result;
    if r.kernel.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\nkernel counters over the run (deltas per node, whole host; NIC: the interconnect NICs):"
    );
    let head = [
        "node",
        "ReasmFails",
        "ReasmTimeout",
        "FragCreates",
        "RcvbufErrors",
        "UdpInErrors",
        "TcpRetrans",
        "NIC errors/drops",
    ];
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| (*s).to_string()).collect()];
    for k in &r.kernel {
        let mut row = vec![say.node(k.node)];
        match (&k.snmp, &k.error) {
            (Some(s), _) => {
                for v in [
                    s.ip_reasm_fails,
                    s.ip_reasm_timeout,
                    s.ip_frag_creates,
                    s.udp_rcvbuf_errors,
                    s.udp_in_errors,
                    s.tcp_retrans_segs,
                ] {
                    row.push(thousands(v));
                }
            }
            (None, Some(e)) => row.push(format!(
                "not read: {}",
                escape_control(&crate::refusal::failed(e))
            )),
            (None, None) => row.push("not read".into()),
        }
        if k.snmp.is_some() {
            let nics: Vec<String> = k
                .nics
                .iter()
                .map(|n| {
                    let x = &n.delta;
                    format!(
                        "{} {}/{}",
                        escape_control(&n.iface),
                        x.rx_errors + x.tx_errors,
                        x.rx_dropped + x.tx_dropped
                    )
                })
                .collect();
            row.push(nics.join(", "));
        }
        rows.push(row);
    }
    let cols = head.len();
    let widths: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter(|r| r.len() == cols)
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in rows {
        let mut line = String::from(" ");
        for (i, c) in row.iter().enumerate() {
            let w = if row.len() == cols { widths[i] } else { 0 };
            let _ = write!(line, " {c:<w$}");
        }
        let _ = writeln!(o, "{}", line.trim_end());
    }
}

/// The sysctl `key` as node `n` reported it at discovery.
fn sysctl<'d>(d: &'d Document, n: usize, key: &str) -> Option<&'d str> {
    d.result
        .nodes
        .get(n)?
        .discovery
        .as_ref()?
        .facts
        .sysctls
        .get(key)
        .map(String::as_str)
}

impl Say<'_> {
    /// A kernel counter of node `node` that grew during the run.
    pub(crate) fn kernel_words(
        &self,
        node: usize,
        net: Option<usize>,
        counter: KernelCounter,
        delta: u64,
        iface: Option<&str>,
        of: Option<u64>,
    ) -> Words {
        let d = self.document();
        let n = self.node(node);
        let k = d.result.kernel.iter().find(|k| k.node == node);
        let span = k.map_or_else(String::new, |k| {
            format!(" over {:.1} s of the run", k.span_ms as f64 / 1000.0)
        });
        let snmp = k.and_then(|k| k.snmp).unwrap_or_default();
        let nic = iface.map_or_else(String::new, |i| escape_control(i).into_owned());
        let on = net.map_or_else(String::new, |_| format!(" on {}", self.net(net)));
        let doctor = format!("mtuperf doctor on {n} checks this");
        let at = NodeAt {
            d,
            node,
            n,
            span,
            snmp,
            doctor,
        };
        let NodeAt {
            n,
            span,
            snmp,
            doctor,
            ..
        } = &at;
        match counter {
            KernelCounter::ReasmFails | KernelCounter::ReasmTimeout => {
                reassembly_words(&at, counter, delta)
            }
            KernelCounter::UdpRcvbufErrors => rcvbuf_words(&at, delta),
            KernelCounter::UdpInErrors => Words {
                summary: format!(
                    "node {n}: {} UDP datagrams not delivered (Udp InErrors) during the run",
                    thousands(delta)
                ),
                evidence: format!(
                    "Udp InErrors +{} of which RcvbufErrors +{}{span}",
                    thousands(snmp.udp_in_errors),
                    thousands(snmp.udp_rcvbuf_errors)
                ),
                next: format!("{doctor} (its counters); netstat -su on {n} for the kind of error (checksum, no socket)"),
            },
            KernelCounter::NicErrors => Words {
                summary: format!(
                    "node {n}: NIC {nic}{on} counted {} errors during the run",
                    thousands(delta)
                ),
                evidence: format!("rx_errors + tx_errors of {nic} grew by {}{span}", thousands(delta)),
                next: format!("ethtool -S {nic} on {n} (CRC or alignment errors: the cable, the transceiver or the switch port); {doctor}"),
            },
            KernelCounter::NicDrops => Words {
                summary: format!(
                    "node {n}: NIC {nic}{on} dropped {} of {} frames during the run",
                    thousands(delta),
                    thousands(of.unwrap_or(0))
                ),
                evidence: format!(
                    "rx_dropped + tx_dropped of {nic} grew by {}{span} (more than 0.1% of its frames)",
                    thousands(delta)
                ),
                next: format!("ethtool -S {nic} and ethtool -g {nic} on {n} (ring sizes, backlog); {doctor}"),
            },
        }
    }
}

/// A node a kernel finding speaks of: its name, the span of its counters, their IP and
/// UDP deltas, and the doctor line that checks it.
struct NodeAt<'d> {
    d: &'d Document,
    node: usize,
    n: String,
    span: String,
    snmp: SnmpCounters,
    doctor: String,
}

impl NodeAt<'_> {
    /// A sysctl of the node as its discovery read it, escaped ("?" when unread).
    fn val(&self, key: &str) -> String {
        sysctl(self.d, self.node, key)
            .map_or_else(|| "?".into(), |v| escape_control(v).into_owned())
    }
}

/// Reassembly failures (or timeouts) on a node: fragmented blocks into it are lost.
fn reassembly_words(at: &NodeAt<'_>, counter: KernelCounter, delta: u64) -> Words {
    let NodeAt {
        n,
        span,
        snmp,
        doctor,
        ..
    } = at;
    let what = if counter == KernelCounter::ReasmFails {
        "IP reassembly failures"
    } else {
        "IP reassembly timeouts"
    };
    Words {
        summary: format!(
            "node {n}: {} {what} during the run (net.ipv4.ipfrag_high_thresh {} on {n}): fragmented blocks into it are lost, as RAC's gc blocks lost",
            thousands(delta),
            at.val("net.ipv4.ipfrag_high_thresh")
        ),
        evidence: format!(
            "Ip ReasmFails +{}, ReasmTimeout +{}, ReasmOKs +{} of ReasmReqds +{} fragments{span}; ipfrag_low_thresh {}, ipfrag_time {}",
            thousands(snmp.ip_reasm_fails),
            thousands(snmp.ip_reasm_timeout),
            thousands(snmp.ip_reasm_oks),
            thousands(snmp.ip_reasm_reqds),
            at.val("net.ipv4.ipfrag_low_thresh"),
            at.val("net.ipv4.ipfrag_time")
        ),
        next: format!(
            "{doctor} (its reassembly check): sysctl -w net.ipv4.ipfrag_high_thresh=16777216 net.ipv4.ipfrag_low_thresh=15728640 on {n} (MOS 2008933.1), or carry 8 KiB blocks unfragmented: MTU 9000 end to end"
        ),
    }
}

/// UDP datagrams a node dropped for a full socket receive buffer.
fn rcvbuf_words(at: &NodeAt<'_>, delta: u64) -> Words {
    let NodeAt {
        n,
        span,
        snmp,
        doctor,
        ..
    } = at;
    Words {
        summary: format!(
            "node {n}: {} UDP datagrams dropped for a full socket receive buffer during the run (net.core.rmem_default {} on {n})",
            thousands(delta),
            at.val("net.core.rmem_default")
        ),
        evidence: format!(
            "Udp RcvbufErrors +{}, InErrors +{}{span}; net.core.rmem_max {}",
            thousands(snmp.udp_rcvbuf_errors),
            thousands(snmp.udp_in_errors),
            at.val("net.core.rmem_max")
        ),
        next: format!(
            "{doctor} (its socket buffer check): net.core.rmem_default=262144 and net.core.rmem_max=4194304 at least (Grid Infrastructure install guide)"
        ),
    }
}
