//! The RAC answer across the cluster, in words: the cluvfy-style checks, the block
//! test's grids (latency, blocks/s, lost blocks, fragments per block), each node's
//! kernel counters over the run, and the findings they raise (reassembly failures,
//! receive-buffer drops, NIC errors, an interconnect NIC down on a node).

use std::fmt::Write as _;

use mtuperf_engine::mesh::{
    Check, CheckStatus, KernelCounter, MeshNetwork, MeshTests, NetCheck, NetSource, NotMeasured,
    PairResult, LOST_BLOCK_AFTER,
};
use mtuperf_proto::host::SnmpCounters;
use mtuperf_proto::msg::mesh::RrSummary;
use mtuperf_proto::msg::rr::RrProto;
use mtuperf_proto::text::escape_control;

use super::grid::grid;
use super::words::{Say, Words};
use super::Document;
use crate::fmt::latency_ns;

/// "1,204".
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "8 KiB", "1500 B".
fn size(b: u32) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KiB", b / 1024)
    } else {
        format!("{b} B")
    }
}

/// "udp 8 KiB blocks for 128 B requests, one in flight per pair".
pub fn block_line(d: &Document) -> Option<String> {
    let b = d.result.block?;
    let proto = match b.proto {
        RrProto::Udp => "UDP",
        RrProto::Tcp => "TCP",
    };
    let load = b.rate.map_or_else(
        || "one in flight per pair".to_string(),
        |r| format!("{r} requests/s per pair, one in flight"),
    );
    Some(format!(
        "rr: {proto} {} blocks for {} requests, {load}; a block unanswered within {} ms is lost",
        size(b.block),
        size(b.request),
        LOST_BLOCK_AFTER.as_millis()
    ))
}

/// Blocks per second over the requester's measured phase.
pub fn blocks_per_s(r: &RrSummary) -> Option<f64> {
    (r.wall_ns > 0).then(|| r.counts.blocks as f64 * 1e9 / r.wall_ns as f64)
}

/// IP fragments the serving node created per block it served.
pub fn fragments_per_block(r: &RrSummary) -> Option<f64> {
    let f = r.fragments?;
    (r.served > 0).then(|| f as f64 / r.served as f64)
}

/// Whether the pair's path test found it short of the network's MTU.
fn short(p: &PairResult, expect: u32) -> bool {
    p.path
        .as_ref()
        .is_some_and(|s| s.forward.mtu < expect || s.reverse.mtu < expect)
}

/// A block test's cell: its figure, "*" when the path is short of the MTU, or why
/// there is none.
fn cell(p: Option<&PairResult>, expect: u32, fig: &dyn Fn(&RrSummary) -> String) -> String {
    let Some(p) = p else { return "-".into() };
    match (&p.rr, p.failure(MeshTests::Rr)) {
        (Some(r), None) => {
            let mark = if short(p, expect) { "*" } else { "" };
            format!("{}{mark}", fig(r))
        }
        (_, Some(_)) => "ERR".into(),
        (None, None) => match p.not_measured(MeshTests::Rr) {
            Some(NotMeasured::PathShort | NotMeasured::PathFailed) => "skip".into(),
            Some(_) => "NM".into(),
            None => "-".into(),
        },
    }
}

fn us(ns: Option<u64>) -> String {
    ns.map_or_else(|| "none".into(), |v| format!("{:.0}", v as f64 / 1e3))
}

/// The block test's grids of one network.
pub fn grids(o: &mut String, d: &Document, say: &Say<'_>, ni: usize, net: &MeshNetwork) {
    let r = &d.result;
    let on_net: Vec<&PairResult> = r.pairs.iter().filter(|p| p.net == ni).collect();
    if !on_net.iter().any(|p| p.rr.is_some()) {
        return;
    }
    let e = net.expect;
    let _ = writeln!(
        o,
        "  rr block latency p50/p99 (µs; the row's node asks, the column's node serves; none: no block answered):"
    );
    grid(o, say, net, &|a, b| {
        cell(r.pair(ni, a, b), e, &|x| {
            format!("{}/{}", us(x.p50_ns), us(x.p99_ns))
        })
    });
    let _ = writeln!(o, "  rr blocks/s, lost blocks:");
    grid(o, say, net, &|a, b| {
        cell(r.pair(ni, a, b), e, &|x| {
            format!(
                "{:.0} {}",
                blocks_per_s(x).unwrap_or(0.0),
                thousands(x.counts.lost)
            )
        })
    });
    let shorts = on_net
        .iter()
        .filter(|p| p.rr.is_some() && short(p, e))
        .count();
    if shorts > 0 {
        let _ = writeln!(
            o,
            "  *: {shorts} pairs whose path is short of {e}, measured all the same: their blocks cross it as IP fragments, or not at all"
        );
    }
    let frags: Vec<f64> = on_net
        .iter()
        .filter_map(|p| p.rr.as_ref().and_then(fragments_per_block))
        .collect();
    let lo = frags.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = frags.iter().copied().fold(0.0, f64::max);
    if !frags.is_empty() {
        let range = if (hi - lo).abs() < 0.05 {
            format!("{lo:.1}")
        } else {
            format!("{lo:.1} to {hi:.1}")
        };
        let _ = writeln!(
            o,
            "  fragments per block: {range} (IP fragments the serving node created per block it served; 0: one unfragmented datagram)"
        );
    }
}

/// "net A", "net eth1 (192.168.10.0, oifcfg)", "net eth1 HAIP".
fn check_name(c: &Check, d: &Document) -> String {
    match c {
        Check::Mtu { expect, .. } => format!("MTU {expect} both ways"),
        Check::Reachability { .. } => "reachability".into(),
        Check::BlockP99 { limit_ns, .. } => {
            let size = d
                .result
                .block
                .map_or_else(|| "8 KiB".into(), |b| size(b.block));
            match limit_ns {
                Some(l) => format!("{size} block p99 under {}", latency_ns(*l as f64)),
                None => format!("{size} block p99"),
            }
        }
        Check::LostBlocks { .. } => "lost blocks = 0".into(),
        Check::Reassembly { .. } => "reassembly failures = 0".into(),
        Check::Settings { .. } => "settings alike".into(),
    }
}

fn status(s: CheckStatus) -> &'static str {
    match s {
        CheckStatus::Passed => "PASSED",
        CheckStatus::Failed => "FAILED",
        CheckStatus::NotRun => "not run",
    }
}

impl Say<'_> {
    /// Why a check passed, failed or did not run, in a few words.
    pub fn check_reason(&self, c: &NetCheck) -> String {
        let d = self.document();
        match &c.check {
            Check::Mtu {
                expect,
                carried,
                measured,
            } => match (c.status, measured) {
                (CheckStatus::NotRun, 0) if !d.result.tests.contains(&MeshTests::Path) => {
                    "add --tests path".into()
                }
                (CheckStatus::NotRun, _) => "no direction measured".into(),
                _ => format!("{carried} of {measured} directions carry {expect}"),
            },
            Check::Reachability {
                reached,
                failed,
                planned,
            } => {
                let mut s = format!("{reached} of {planned} pairs reached");
                if *failed > 0 {
                    let _ = write!(s, ", {failed} failed or silent");
                }
                if c.status == CheckStatus::Failed && *failed == 0 {
                    s.push_str(", a node is missing from it (see findings)");
                }
                s
            }
            Check::BlockP99 {
                limit_ns,
                worst_ns,
                worst,
                over,
                measured,
            } => self.block_p99_reason(*limit_ns, *worst_ns, *worst, *over, *measured),
            Check::LostBlocks {
                lost,
                pairs,
                measured,
            } => self.lost_blocks_reason(c.status, *lost, *pairs, *measured),
            Check::Reassembly { fails, nodes, read } => {
                self.reassembly_reason(*fails, nodes, *read)
            }
            Check::Settings { findings } => settings_reason(c.status, findings),
        }
    }
}

impl Say<'_> {
    /// The block p99 check: the worst pair's p99 and where, and how many pairs are over.
    fn block_p99_reason(
        &self,
        limit_ns: Option<u64>,
        worst_ns: Option<u64>,
        worst: Option<(usize, usize)>,
        over: usize,
        measured: usize,
    ) -> String {
        if !self.document().result.tests.contains(&MeshTests::Rr) {
            return "add --tests rr".into();
        }
        if measured == 0 {
            return "no pair measured".into();
        }
        let at = worst.map_or_else(String::new, |(a, b)| {
            format!(" ({} asking {})", self.node(a), self.node(b))
        });
        let worst = worst_ns.map_or_else(
            || "a pair answered no block".into(),
            |w| format!("worst {}{at}", latency_ns(w as f64)),
        );
        match limit_ns {
            None => format!(
                "{worst}; not judged on a network outside private address space (--max-block-p99 sets a limit)"
            ),
            Some(_) if over == 0 => format!("{worst}, all {measured} pairs under"),
            Some(_) => format!("{over} of {measured} pairs over; {worst}"),
        }
    }

    /// The lost-blocks check: how many, on how many pairs.
    fn lost_blocks_reason(
        &self,
        status: CheckStatus,
        lost: u64,
        pairs: usize,
        measured: usize,
    ) -> String {
        if status == CheckStatus::NotRun {
            return if self.document().result.tests.contains(&MeshTests::Rr) {
                "no pair measured".into()
            } else {
                "add --tests rr".into()
            };
        }
        if lost == 0 {
            format!("none on {measured} pairs")
        } else {
            format!(
                "{} lost on {pairs} of {measured} pairs (unanswered within {} ms, or never)",
                thousands(lost),
                LOST_BLOCK_AFTER.as_millis()
            )
        }
    }

    /// The reassembly check: the failures and the nodes that counted them.
    fn reassembly_reason(&self, fails: u64, nodes: &[usize], read: usize) -> String {
        if read == 0 {
            return "no node's counters could be read".into();
        }
        if nodes.is_empty() {
            return format!("none on the {read} nodes read");
        }
        let who: Vec<String> = nodes.iter().map(|&n| self.node(n)).collect();
        format!(
            "{} on {} (whole-host counters, over the run)",
            thousands(fails),
            who.join(", ")
        )
    }
}

/// The settings check: which findings differ.
fn settings_reason(status: CheckStatus, findings: &[usize]) -> String {
    if status == CheckStatus::NotRun {
        return "add --tests doctor".into();
    }
    if findings.is_empty() {
        "every compared setting alike".into()
    } else {
        let list: Vec<String> = findings.iter().map(|i| format!("#{}", i + 1)).collect();
        format!(
            "{} settings differ (findings {})",
            findings.len(),
            list.join(", ")
        )
    }
}

/// The checks as (network, check, status, reason) rows.
pub(crate) fn check_rows(
    d: &Document,
    say: &Say<'_>,
) -> Vec<(String, String, &'static str, String)> {
    d.result
        .checks
        .iter()
        .map(|c| {
            (
                say.net_title(c.net),
                check_name(&c.check, d),
                status(c.status),
                say.check_reason(c),
            )
        })
        .collect()
}

/// The cluvfy-style summary: one line per check per network.
pub fn checks(o: &mut String, d: &Document, say: &Say<'_>) {
    let r = &d.result;
    if r.checks.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nchecks (per network, as cluvfy prints them):");
    let rows = check_rows(d, say);
    let w0 = rows.iter().map(|x| x.0.chars().count()).max().unwrap_or(0);
    let w1 = rows.iter().map(|x| x.1.chars().count()).max().unwrap_or(0);
    for (net, name, st, why) in rows {
        let _ = writeln!(o, "  {net:<w0$}  {name:<w1$}  {st:<7}  {why}");
    }
}

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
            (None, Some(e)) => row.push(format!("not read: {}", escape_control(e))),
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

/// A network's source, for its header: "oifcfg eth1 192.168.10.0", "HAIP on eth1".
pub fn source(net: &MeshNetwork) -> Option<String> {
    match &net.source {
        NetSource::Shared => None,
        NetSource::Oifcfg { iface, subnet } => Some(format!(
            "oifcfg: {} {subnet} cluster_interconnect",
            escape_control(iface)
        )),
        NetSource::Haip { iface } => Some(format!(
            "HAIP: link-local addresses on {}",
            escape_control(iface)
        )),
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
    /// A failed block check of network `net`.
    pub(crate) fn check_failed(&self, net: Option<usize>, c: &Check) -> Words {
        let on = self.net(net);
        let d = self.document();
        let size = d
            .result
            .block
            .map_or_else(|| "8 KiB".into(), |b| size(b.block));
        let reason = self.check_reason(&NetCheck {
            net: net.unwrap_or(0),
            status: CheckStatus::Failed,
            check: c.clone(),
        });
        match c {
            Check::LostBlocks { .. } => Words {
                summary: format!("{size} blocks lost on {on}: RAC counts each as a gc block lost"),
                evidence: reason,
                next: "the findings above name causes (a short path, reassembly failures, receive-buffer drops); else mtuperf rr between the pair's nodes, with --from to ask from the node that lost them".into(),
            },
            _ => Words {
                summary: format!("{size} block p99 over the limit on {on}"),
                evidence: reason,
                next: "mtuperf rr between the worst pair's nodes (--clients 1 --time 10s) and mtuperf doctor on both; a loaded host or CPU placement shows in its report; --max-block-p99 sets the limit".into(),
            },
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1204), "1,204");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
