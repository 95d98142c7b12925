//! The words of a host check: a sysctl, a counter, steering, or the two ends compared.

use mtuperf_engine::doctor::{Bdp, Check, Counter, MinimumOf, RateFrom, RttFrom, StreamEvidence};
use mtuperf_proto::msg::doctor::Steering;

use super::{source, Words};

/// The seed-004 advice, as the steering finding's reason.
const STEERING_ADVICE: &str = "where the NIC's interrupts and the receive softirq run decides which CPUs the block-serving threads share with them; placing the block-serving (LMS) processes in a processor set fenced from interrupts gave up to 40% more throughput at 10 GbE in seed 004 (information, not a requirement: measure with rr --agent-cpu and compare --placement)";

const TCP_MAX_WHY: &str = "A TCP connection cannot keep more than its buffer maximum in flight, so below the bandwidth-delay product it cannot fill the path.";

/// The words of a host check: a sysctl, a counter, steering, or the two ends compared
/// (None: an interface's check).
pub(super) fn host(c: &Check) -> Option<Words> {
    let w = |measured: String, expected: &str, why: &str, source: &str| Words {
        measured,
        expected: expected.into(),
        why: why.into(),
        source: source.into(),
        fix: String::new(),
    };
    Some(match c {
        Check::Minimum { of, value, min } => {
            let (why, source) = minimum(*of);
            w(value.to_string(), &format!(">= {min}"), why, source)
        }
        Check::TcpMax { values: [lo, def, max], bdp, need, evidence, .. } => {
            tcp_max(format!("{lo} {def} {max}"), bdp.as_ref(), *need, evidence.as_deref())
        }
        Check::MtuProbing { value } => w(
            value.clone(),
            "1 (probe after an ICMP black hole is detected)",
            "Without packetization-layer PMTU discovery a path that drops ICMP \"fragmentation needed\" stalls TCP connections sending full-size segments.",
            source::RFC_4821,
        ),
        Check::IpfragTime { value } => w(
            format!("{value} s"),
            "1 to 30 s (kernel default 30)",
            "Incomplete datagrams hold reassembly memory this long; longer times let a burst of losses fill ipfrag_high_thresh.",
            source::MOS_REASSEMBLY,
        ),
        Check::NoMetricsSave { value } => w(
            value.clone(),
            "reported (1 for repeatable benchmarks)",
            if value == "0" {
                "TCP caches ssthresh and RTT per destination, so a benchmark run starts from what the previous one learned; set 1 while measuring."
            } else {
                "Metrics are not cached: each connection starts fresh."
            },
            source::KERNEL_METRICS,
        ),
        Check::Counter { counter, total, delta, sample_ms } => {
            let measured = match delta {
                Some(d) if *sample_ms > 0 => {
                    let rate = *d as f64 * 1000.0 / *sample_ms as f64;
                    format!("{total} since boot, +{d} in {sample_ms} ms ({rate:.1}/s)")
                }
                _ => format!("{total} since boot (no sample taken)"),
            };
            let (why, source) = counter_why(*counter);
            w(measured, "no increase during the sample", why, source)
        }
        Check::IrqSteering { steering, rps_queues_on, rps_sock_flow_entries, irqbalance } => w(
            steering_facts(steering, *rps_queues_on, *rps_sock_flow_entries, *irqbalance),
            "known placement; no fixed target",
            STEERING_ADVICE,
            source::SEED_004,
        ),
        Check::CrossMtu { local, peer } => w(
            format!("local {local}, peer {peer}"),
            "equal MTU on both ends",
            "The end with the larger MTU sends frames the other end (or its switch port) drops; small packets pass, so the fault shows only under load or with big blocks.",
            source::GI_SAME_MTU,
        ),
        Check::CrossSysctl { local, peer, .. } => w(
            format!("local {local}, peer {peer}"),
            "equal on both ends",
            "Nodes with different buffer or reassembly settings behave differently under the same load, which hides the cause of one-sided drops.",
            source::GI_SAME_PARAMETERS,
        ),
        _ => return None,
    })
}

/// Why each minimum matters, and where it is documented.
fn minimum(of: MinimumOf) -> (&'static str, &'static str) {
    match of {
        MinimumOf::RmemDefault => ("Cache Fusion sockets start with this receive buffer; too small and bursts of blocks overflow it (Udp RcvbufErrors).", source::GI_KERNEL),
        MinimumOf::RmemMax => ("Caps the receive buffer a process may ask for; below it Oracle's request is silently clipped.", source::GI_KERNEL),
        MinimumOf::WmemDefault => ("Default send buffer; too small and senders block on bursts of blocks.", source::GI_KERNEL),
        MinimumOf::WmemMax => ("Caps the send buffer a process may ask for.", source::GI_KERNEL),
        MinimumOf::NetdevMaxBacklog => ("Packets queued per CPU between the driver and the stack; at 10G+ rates a small queue drops bursts.", source::KERNEL_SCALING),
        MinimumOf::IpfragHighThresh => ("Memory for IP fragments awaiting reassembly; when full the kernel drops fragments, and 8 KiB blocks at MTU 1500 are lost (Ip ReasmFails), a cause of node evictions.", source::MOS_REASSEMBLY),
        MinimumOf::IpfragLowThresh => ("Reassembly memory is pruned down to this level once the high threshold is hit; too low a value throws away most queued fragments at once.", source::MOS_REASSEMBLY),
    }
}

/// Where the bandwidth-delay product's figures come from.
fn bdp_source(b: &Bdp) -> String {
    let rate = match &b.rate_from {
        RateFrom::Given => "--bandwidth".to_string(),
        RateFrom::LinkSpeed { iface } => format!("link speed of {iface}"),
    };
    let rtt = match b.rtt_from {
        RttFrom::Given => "--rtt",
        RttFrom::ControlRoundTrip => "control round trip to the agent",
    };
    format!("{rate}, {rtt}")
}

/// The stored run a piece of evidence comes from, and its verdict in words.
fn evidence_words(e: &StreamEvidence) -> (String, String) {
    (
        format!("stream run {} to {}", e.run_id, e.target),
        crate::stream::limit_line(&e.verdict),
    )
}

fn tcp_max(
    measured: String,
    bdp: Option<&Bdp>,
    need: Option<u64>,
    evidence: Option<&StreamEvidence>,
) -> Words {
    let evidence = evidence.map(evidence_words);
    let (Some(bdp), Some(need)) = (bdp, need) else {
        let (run, line) = evidence.unwrap_or_default();
        return Words {
            measured,
            expected: format!("a maximum that does not limit TCP ({run}: {line})"),
            why: "A TCP connection cannot keep more than its buffer maximum in flight; the kernel's tcp_info of a stored stream run says this buffer held the sender back.".into(),
            source: source::TCP_INFO.into(),
            fix: String::new(),
        };
    };
    Words {
        measured,
        expected: format!(
            "maximum >= {need} (bandwidth-delay product of {:.0} Mbit/s x {:.3} ms; {})",
            bdp.bits_per_sec / 1e6,
            bdp.rtt.as_secs_f64() * 1e3,
            bdp_source(bdp)
        ),
        why: match evidence {
            Some((run, line)) => format!("{TCP_MAX_WHY} Measured by {run}: {line}"),
            None => TCP_MAX_WHY.into(),
        },
        source: source::RFC_7323.into(),
        fix: String::new(),
    }
}

/// Why a counter matters, and where it is read.
fn counter_why(c: Counter) -> (&'static str, &'static str) {
    match c {
        Counter::IpReasmFails => ("Datagrams lost because reassembly failed (fragment lost or reassembly memory full).", source::SNMP),
        Counter::IpReasmTimeout => ("Datagrams lost because a fragment did not arrive within ipfrag_time.", source::SNMP),
        Counter::UdpInErrors => ("UDP datagrams received but not delivered (buffer full, checksum).", source::SNMP),
        Counter::UdpRcvbufErrors => ("UDP datagrams dropped because the socket receive buffer was full (raise rmem_default/rmem_max).", source::SNMP),
        Counter::TcpRetransSegs => ("TCP segments sent again: loss or reordering on some path.", source::SNMP),
        Counter::RxErrors | Counter::RxDropped | Counter::TxErrors | Counter::TxDropped => (
            "Frames the interface or driver lost: CRC errors, ring overruns, or frames larger than the MTU.",
            source::IFACE_STATISTICS,
        ),
    }
}

/// Where an interface's receive work runs, in one line.
fn steering_facts(
    s: &Steering,
    rps_on: usize,
    rps_sock_flow_entries: Option<u64>,
    irqbalance: Option<bool>,
) -> String {
    let irqs = if s.irqs.is_empty() {
        "no queue IRQs found (veth, loopback and bridges have none: receive work runs where the sender's softirq does)"
            .to_string()
    } else {
        let v: Vec<String> = s
            .irqs
            .iter()
            .map(|i| format!("{} ({}) → CPU {}", i.irq, i.name, i.cpus))
            .collect();
        format!("queue IRQs {}", v.join(", "))
    };
    let rps = if s.rps_cpus.is_empty() {
        "RPS unknown (no rx queues listed)".to_string()
    } else if rps_on == 0 {
        format!("RPS off on all {} rx queues", s.rps_cpus.len())
    } else {
        format!(
            "RPS on {rps_on} of {} rx queues (masks {})",
            s.rps_cpus.len(),
            s.rps_cpus.join(" ")
        )
    };
    let rfs_queues = s.rps_flow_cnt.iter().filter(|&&c| c > 0).count();
    let rfs = match rps_sock_flow_entries {
        Some(0) | None if rfs_queues == 0 => "RFS off".to_string(),
        Some(n) => format!("RFS {n} socket flow entries, {rfs_queues} queues with flow counts"),
        None => format!("RFS table unknown, {rfs_queues} queues with flow counts"),
    };
    let irqbalance = match irqbalance {
        Some(true) => "irqbalance running (it may move the IRQs during a test)",
        Some(false) => "irqbalance not running",
        None => "irqbalance unknown",
    };
    format!("{irqs}; {rps}; {rfs}; {irqbalance}")
}
