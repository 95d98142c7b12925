//! Each doctor finding in words: what was measured, what the check expects, why it
//! matters (for a SKIP: why it could not run), the document the expected value comes
//! from, and the fix as a shell command. The engine's [`Check`] carries the values; the
//! sentences and the flags they suggest live here.

mod host;
mod iface;

use mtuperf_engine::doctor::{Check, Finding, ReadError, SkipReason};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::shell;

/// The documents the expected values come from.
pub mod source {
    pub const GI_NETWORK: &str = "Oracle Grid Infrastructure Installation Guide for Linux, network requirements (jumbo frames); MOS 1054902.1";
    pub const GI_KERNEL: &str =
        "Oracle Grid Infrastructure Installation Guide for Linux, kernel parameters";
    pub const GI_SAME_MTU: &str = "Oracle Grid Infrastructure Installation Guide for Linux (identical interconnect MTU on all nodes); MOS 1054902.1";
    pub const GI_SAME_PARAMETERS: &str =
        "Oracle Grid Infrastructure Installation Guide for Linux (same kernel parameters on all nodes)";
    pub const CLUVFY_BOND: &str = "Oracle cluvfy PRVE-00468 (bond members with different MTU)";
    pub const MOS_RP_FILTER: &str = "MOS 1286796.1 (rp_filter with multiple private interconnects)";
    pub const MOS_REASSEMBLY: &str = "MOS 2008933.1 (node evictions, IP reassembly thresholds)";
    pub const IEEE_8023: &str = "IEEE 802.3 (half duplex means collisions and late retransmits)";
    pub const IEEE_8023X: &str = "IEEE 802.3x";
    pub const KERNEL_OFFLOADS: &str = "Linux kernel documentation, segmentation offloads (LRO must be off when forwarding or bridging)";
    pub const KERNEL_SCALING: &str =
        "Linux kernel documentation, networking/scaling and sysctl/net";
    pub const KERNEL_METRICS: &str = "Linux kernel documentation, ip-sysctl (tcp_no_metrics_save)";
    pub const TCP_INFO: &str = "tcp_info tcpi_rwnd_limited / tcpi_sndbuf_limited (Linux 4.10+)";
    pub const RFC_7323: &str = "RFC 7323 section 1 (window size and the bandwidth-delay product)";
    pub const RFC_4821: &str = "RFC 4821";
    pub const SNMP: &str = "/proc/net/snmp (netstat -s); MOS 2008933.1";
    pub const IFACE_STATISTICS: &str = "/sys/class/net/IF/statistics (ip -s link)";
    pub const SEED_004: &str =
        "seed 004 (RAC Cache Fusion on T5440); kernel Documentation/networking/scaling.rst";
}

/// One finding in words, as the text report prints it and `doctor --json` carries it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Words {
    /// What was found, as read ("unknown" when the check could not run).
    pub measured: String,
    /// What the check expects.
    pub expected: String,
    /// One sentence on why it matters (for SKIP: why the check could not run).
    pub why: String,
    /// Document or standard the expected value comes from.
    pub source: String,
    /// Exact command that fixes it (empty when nothing to fix).
    pub fix: String,
}

/// The words of `f`.
pub fn of(f: &Finding) -> Words {
    let mut w = check(&f.check, &f.subject);
    w.fix = f.remedy.as_ref().map(shell::command).unwrap_or_default();
    w
}

/// measured, expected, why and source of one check (`subject`: what it looked at).
fn check(c: &Check, subject: &str) -> Words {
    iface::iface(c, subject)
        .or_else(|| host::host(c))
        .unwrap_or_default()
}

/// Why a sysctl could not be read, with what to do about it.
fn sysctl_unreadable(e: &ReadError) -> String {
    let path = e.path();
    match e {
        ReadError::NotFound { .. } => format!("cannot read {path}: not present; outside the initial network namespace the kernel hides some host-wide parameters (e.g. netdev_max_backlog): run doctor in the host namespace to check it"),
        ReadError::PermissionDenied { .. } => {
            format!("cannot read {path}: permission denied; run as root to check it")
        }
        ReadError::Os { errno, .. } => {
            format!("cannot read {path}: {}", std::io::Error::from_raw_os_error(*errno))
        }
        ReadError::Other { .. } | ReadError::Unparsable { .. } => unreadable(e),
    }
}

/// A file that could not be read (an interface's: its sysfs directory names the
/// interface), or was read and not understood, with the error's words where they
/// are not the system's.
fn unreadable(e: &ReadError) -> String {
    match e {
        ReadError::NotFound { path }
        | ReadError::PermissionDenied { path }
        | ReadError::Os { path, .. } => format!("cannot read {path}"),
        ReadError::Unparsable { path, what } => format!("cannot parse {path}: {what}"),
        // Not a file's error.
        ReadError::Other { path, error } if path.is_empty() => error.clone(),
        ReadError::Other { path, error } => format!("cannot read {path}: {error}"),
    }
}

/// Why a check could not run.
fn skipped(why: &SkipReason) -> String {
    match why {
        SkipReason::IfaceUnreadable { error } => {
            format!("cannot read the interface: {}", unreadable(error))
        }
        SkipReason::NoPauseParameters => "the driver reports no pause parameters (ETHTOOL_GPAUSEPARAM unsupported, usual on virtual links)".into(),
        SkipReason::SysctlUnreadable { error } => sysctl_unreadable(error),
        SkipReason::SysctlNotRead => "not read".into(),
        SkipReason::Unparsable { value } => format!("unparsable value {value:?}"),
        SkipReason::NoBdp { max } => format!("maximum {max} not compared: give --rtt and --bandwidth (or --peer and --bandwidth, or an interface with a known link speed), or run `mtuperf stream` to this peer first"),
        SkipReason::NoSnmp => "cannot read /proc/net/snmp".into(),
        SkipReason::NoIfaceStats => "cannot read /sys/class/net statistics".into(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::time::Duration;

    use mtuperf_engine::doctor::{
        Bdp, Check, Counter, Finding, Fix, MinimumOf, MtuScope, Profile, RateFrom, ReadError,
        RttFrom, SkipReason, Status, StreamEvidence, TcpBuffer,
    };
    use mtuperf_engine::stream::verdict::{LimitCause, LimitVerdict};
    use mtuperf_engine::stream::End;
    use mtuperf_proto::host::Offloads;
    use mtuperf_proto::msg::doctor::{Pause, Steering};
    use mtuperf_proto::placement::IrqAffinity;

    fn verdict() -> LimitVerdict {
        LimitVerdict {
            sender: End::Client,
            receiver: End::Agent,
            cause: LimitCause::ReceiveWindow,
            share: Some(0.71),
            cpu: None,
            cpu_because: None,
            shares: mtuperf_engine::stream::limits::LimitShares::default(),
            min_rtt_us: Some(100),
            receiver_buffer: Some(131_072),
            sender_buffer: Some(131_072),
            conns: 1,
            link_bps: None,
            link_bdp_bytes: None,
            needed: None,
            delivery_rate_bps: None,
            goodput_bps: None,
            sysctl: Some("net.ipv4.tcp_rmem".into()),
            sysctl_end: Some(End::Agent),
            evidence: None,
            window_allows_bps: None,
            nominal_link_bps: None,
            fixes: Vec::new(),
        }
    }

    fn evidence() -> StreamEvidence {
        StreamEvidence {
            run_id: 12,
            target: "198.18.1.2:7878".into(),
            sysctl: "net.ipv4.tcp_rmem".into(),
            verdict: verdict(),
        }
    }

    fn bdp(rate_from: RateFrom, rtt_from: RttFrom) -> Bdp {
        Bdp {
            bits_per_sec: 10e9,
            rtt: Duration::from_millis(4),
            rate_from,
            rtt_from,
        }
    }

    /// (subject, check, fix, measured, expected, the start of why, source, fix)
    type Case = (
        &'static str,
        Check,
        Option<Fix>,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    );

    /// Every kind of check (and every reason for a SKIP) in words: the sentences the
    /// text report and `doctor --json` show, as they were when the engine wrote them.
    #[test]
    fn every_kind_of_finding_is_worded() {
        let skipped = |read: Option<&str>, why| Check::Skipped {
            read: read.map(str::to_string),
            why,
        };
        let set = |iface: &str, scope| {
            Some(Fix::SetMtu {
                iface: iface.into(),
                mtu: 9000,
                scope,
            })
        };
        let counter = |counter, delta, sample_ms| Check::Counter {
            counter,
            total: 14,
            delta,
            sample_ms,
        };
        let cases: Vec<Case> = vec![
            ("eth0", Check::Mtu { mtu: 1500, profile: Profile::Rac }, set("eth0", MtuScope::Interconnect),
             "1500", ">= 9000 (jumbo frames)", "An 8 KiB database block in one unfragmented frame needs MTU 9000",
             super::source::GI_NETWORK, "ip link set dev eth0 mtu 9000  # and every switch port and the peer"),
            ("eth0", Check::Mtu { mtu: 1500, profile: Profile::Generic }, None,
             "1500", "the same on every node and switch (compared with --peer)", "Reported so the ends can be compared",
             super::source::GI_NETWORK, ""),
            ("bond0/eth1", Check::BondMemberMtu { member_mtu: 1500, bond_mtu: 9000 }, set("eth1", MtuScope::Iface),
             "1500", "9000", "A bond member with a different MTU drops or fragments frames",
             super::source::CLUVFY_BOND, "ip link set dev eth1 mtu 9000"),
            ("eth2.100/eth2", Check::VlanParentMtu { parent_mtu: 1500, vlan_mtu: 9000 }, set("eth2", MtuScope::Iface),
             "1500", ">= 9000", "A VLAN cannot send frames larger than its parent carries.",
             super::source::CLUVFY_BOND, "ip link set dev eth2 mtu 9000"),
            ("eth0", Check::Link { speed_mbps: Some(10_000), duplex: Some("full".into()), up: false }, Some(Fix::LinkUp { iface: "eth0".into() }),
             "10000 Mb/s, full duplex, down", "up, full duplex", "The interconnect interface is administratively down.",
             super::source::IEEE_8023, "ip link set dev eth0 up"),
            ("eth0", Check::Link { speed_mbps: Some(1000), duplex: Some("half".into()), up: true }, Some(Fix::Autoneg { iface: "eth0".into() }),
             "1000 Mb/s, half duplex, up", "up, full duplex", "Half duplex on a switched link is a negotiation failure",
             super::source::IEEE_8023, "ethtool -s eth0 autoneg on  # then check the switch port"),
            ("veth0", Check::Link { speed_mbps: None, duplex: None, up: true }, None,
             "unknown, unknown duplex, up", "up, full duplex", "Speed and duplex bound what the interconnect can carry",
             super::source::IEEE_8023, ""),
            ("eth0", Check::Offloads { offloads: Offloads { tso: Some(true), gso: Some(true), gro: Some(false), lro: Some(true), rx_csum: None, tx_csum: Some(true) } },
             Some(Fix::LroOff { iface: "eth0".into() }),
             "tso on, gso on, gro off, lro on, rx-csum ?, tx-csum on", "lro off", "LRO merges received frames irreversibly",
             super::source::KERNEL_OFFLOADS, "ethtool -K eth0 lro off"),
            ("eth0", Check::Pause { pause: Pause { autoneg: true, rx: false, tx: true } }, None,
             "autoneg on, rx off, tx on", "reported; match the switch port", "Flow control trades drops for head-of-line stalls",
             super::source::IEEE_8023X, ""),
            ("eth1", Check::RpFilter { effective: 1, all: 1, own: 0, interfaces: 2 },
             Some(Fix::Sysctl { set: vec![
                 mtuperf_engine::doctor::SysctlSet { name: "net.ipv4.conf.all.rp_filter".into(), value: "2".into() },
                 mtuperf_engine::doctor::SysctlSet { name: "net.ipv4.conf.eth1.rp_filter".into(), value: "2".into() },
             ] }),
             "1 (max of all=1, eth1=0) with 2 interconnect interface(s)", "0 or 2", "Strict reverse-path filtering drops packets",
             super::source::MOS_RP_FILTER,
             "sysctl -w 'net.ipv4.conf.all.rp_filter=2' && echo 'net.ipv4.conf.all.rp_filter = 2' > /etc/sysctl.d/90-mtuperf-net.ipv4.conf.all.rp_filter.conf && sysctl -w 'net.ipv4.conf.eth1.rp_filter=2' && echo 'net.ipv4.conf.eth1.rp_filter = 2' > /etc/sysctl.d/90-mtuperf-net.ipv4.conf.eth1.rp_filter.conf"),
            ("net.core.rmem_default", Check::Minimum { of: MinimumOf::RmemDefault, value: 212_992, min: 262_144 },
             Some(Fix::sysctl("net.core.rmem_default", "262144")),
             "212992", ">= 262144", "Cache Fusion sockets start with this receive buffer",
             super::source::GI_KERNEL,
             "sysctl -w 'net.core.rmem_default=262144' && echo 'net.core.rmem_default = 262144' > /etc/sysctl.d/90-mtuperf-net.core.rmem_default.conf"),
            ("net.core.netdev_max_backlog", Check::Minimum { of: MinimumOf::NetdevMaxBacklog, value: 300, min: 1000 }, None,
             "300", ">= 1000", "Packets queued per CPU between the driver and the stack",
             super::source::KERNEL_SCALING, ""),
            ("net.ipv4.ipfrag_low_thresh", Check::Minimum { of: MinimumOf::IpfragLowThresh, value: 3_145_728, min: 15_728_640 }, None,
             "3145728", ">= 15728640", "Reassembly memory is pruned down to this level",
             super::source::MOS_REASSEMBLY, ""),
            ("net.ipv4.tcp_wmem", Check::TcpMax { buffer: TcpBuffer::Wmem, values: [4096, 16384, 4_194_304], bdp: Some(bdp(RateFrom::Given, RttFrom::Given)), need: Some(5_000_000), evidence: None },
             Some(Fix::sysctl("net.ipv4.tcp_wmem", "4096 16384 5000000")),
             "4096 16384 4194304", "maximum >= 5000000 (bandwidth-delay product of 10000 Mbit/s x 4.000 ms; --bandwidth, --rtt)",
             "A TCP connection cannot keep more than its buffer maximum in flight, so below",
             super::source::RFC_7323,
             "sysctl -w 'net.ipv4.tcp_wmem=4096 16384 5000000' && echo 'net.ipv4.tcp_wmem = 4096 16384 5000000' > /etc/sysctl.d/90-mtuperf-net.ipv4.tcp_wmem.conf"),
            ("net.ipv4.tcp_rmem", Check::TcpMax { buffer: TcpBuffer::Rmem, values: [4096, 87380, 6_291_456], bdp: Some(bdp(RateFrom::LinkSpeed { iface: "eth1".into() }, RttFrom::ControlRoundTrip)), need: Some(5_000_000), evidence: Some(Box::new(evidence())) },
             None,
             "4096 87380 6291456", "maximum >= 5000000 (bandwidth-delay product of 10000 Mbit/s x 4.000 ms; link speed of eth1, control round trip to the agent)",
             "A TCP connection cannot keep more than its buffer maximum in flight, so below the bandwidth-delay product it cannot fill the path. Measured by stream run 12 to 198.18.1.2:7878: ",
             super::source::RFC_7323, ""),
            ("net.ipv4.tcp_rmem", Check::TcpMax { buffer: TcpBuffer::Rmem, values: [4096, 87380, 6_291_456], bdp: None, need: None, evidence: Some(Box::new(evidence())) },
             None,
             "4096 87380 6291456", "a maximum that does not limit TCP (stream run 12 to 198.18.1.2:7878: ",
             "A TCP connection cannot keep more than its buffer maximum in flight; the kernel's tcp_info of a stored stream run says",
             super::source::TCP_INFO, ""),
            ("net.ipv4.tcp_mtu_probing", Check::MtuProbing { value: "0".into() }, Some(Fix::sysctl("net.ipv4.tcp_mtu_probing", "1")),
             "0", "1 (probe after an ICMP black hole is detected)", "Without packetization-layer PMTU discovery",
             super::source::RFC_4821,
             "sysctl -w 'net.ipv4.tcp_mtu_probing=1' && echo 'net.ipv4.tcp_mtu_probing = 1' > /etc/sysctl.d/90-mtuperf-net.ipv4.tcp_mtu_probing.conf"),
            ("net.ipv4.ipfrag_time", Check::IpfragTime { value: "30".into() }, None,
             "30 s", "1 to 30 s (kernel default 30)", "Incomplete datagrams hold reassembly memory this long",
             super::source::MOS_REASSEMBLY, ""),
            ("net.ipv4.tcp_no_metrics_save", Check::NoMetricsSave { value: "0".into() }, None,
             "0", "reported (1 for repeatable benchmarks)", "TCP caches ssthresh and RTT per destination",
             super::source::KERNEL_METRICS, ""),
            ("net.ipv4.tcp_no_metrics_save", Check::NoMetricsSave { value: "1".into() }, None,
             "1", "reported (1 for repeatable benchmarks)", "Metrics are not cached: each connection starts fresh.",
             super::source::KERNEL_METRICS, ""),
            ("Udp RcvbufErrors", counter(Counter::UdpRcvbufErrors, Some(5), 500), Some(Fix::Investigate),
             "14 since boot, +5 in 500 ms (10.0/s)", "no increase during the sample", "UDP datagrams dropped because the socket receive buffer was full",
             super::source::SNMP, "# investigate: watch -d 'nstat -az' / ip -s link; see the related buffer and MTU findings"),
            ("eth0 rx_dropped", counter(Counter::RxDropped, Some(0), 0), None,
             "14 since boot (no sample taken)", "no increase during the sample", "Frames the interface or driver lost",
             super::source::IFACE_STATISTICS, ""),
            ("eth0", Check::IrqSteering {
                steering: Steering {
                    irqs: vec![IrqAffinity { irq: 24, name: "eth0-TxRx-0".into(), cpus: "0-1".into() }],
                    rps_cpus: vec!["00000000".into(), "00000003".into()],
                    rps_flow_cnt: vec![0, 0],
                },
                rps_queues_on: 1,
                rps_sock_flow_entries: Some(0),
                irqbalance: Some(true),
             }, None,
             "queue IRQs 24 (eth0-TxRx-0) → CPU 0-1; RPS on 1 of 2 rx queues (masks 00000000 00000003); RFS off; irqbalance running (it may move the IRQs during a test)",
             "known placement; no fixed target", "where the NIC's interrupts and the receive softirq run",
             super::source::SEED_004, ""),
            ("veth0", Check::IrqSteering { steering: Steering::default(), rps_queues_on: 0, rps_sock_flow_entries: None, irqbalance: Some(false) }, None,
             "no queue IRQs found (veth, loopback and bridges have none: receive work runs where the sender's softirq does); RPS unknown (no rx queues listed); RFS off; irqbalance not running",
             "known placement; no fixed target", "where the NIC's interrupts", super::source::SEED_004, ""),
            ("eth0 <-> node2:eth1", Check::CrossMtu { local: 9000, peer: 1500 }, set("eth1", MtuScope::Peer { peer: "node2".into() }),
             "local 9000, peer 1500", "equal MTU on both ends", "The end with the larger MTU sends frames the other end",
             super::source::GI_SAME_MTU, "ip link set dev eth1 mtu 9000  # on the peer (node2), and every switch port between them"),
            ("eth0 <-> node2:eth1", Check::CrossMtu { local: 1500, peer: 1500 }, set("eth0", MtuScope::HereAndPeer { peer: "node2".into(), peer_iface: "eth1".into() }),
             "local 1500, peer 1500", "equal MTU on both ends", "The end with the larger MTU",
             super::source::GI_SAME_MTU, "ip link set dev eth0 mtu 9000  # on this host, the same on the peer (node2) for eth1, and every switch port between them"),
            ("eth0 <-> node2:eth1", Check::CrossMtu { local: 1500, peer: 9000 }, set("eth0", MtuScope::Here),
             "local 1500, peer 9000", "equal MTU on both ends", "The end with the larger MTU",
             super::source::GI_SAME_MTU, "ip link set dev eth0 mtu 9000  # on this host, and every switch port between them"),
            ("net.core.rmem_max", Check::CrossSysctl { sysctl: "net.core.rmem_max".into(), local: "4194304".into(), peer: "8388608".into() },
             Some(Fix::SameOnBothNodes { sysctl: "net.core.rmem_max".into() }),
             "local 4194304, peer 8388608", "equal on both ends", "Nodes with different buffer or reassembly settings",
             super::source::GI_SAME_PARAMETERS, "# set net.core.rmem_max to the same value on both nodes (see the sysctl findings)"),
            // Skips: what was read ("unknown" when nothing), why, no expectation or fix.
            ("eth9", skipped(None, SkipReason::IfaceUnreadable { error: ReadError::NotFound { path: "/sys/class/net/eth9/ifindex".into() } }), None,
             "unknown", "", "cannot read the interface: cannot read /sys/class/net/eth9/ifindex", "", ""),
            ("eth9", skipped(None, SkipReason::IfaceUnreadable { error: ReadError::Os { path: "/sys/class/net/eth9/mtu".into(), errno: 5 } }), None,
             "unknown", "", "cannot read the interface: cannot read /sys/class/net/eth9/mtu", "", ""),
            ("eth9", skipped(None, SkipReason::IfaceUnreadable { error: ReadError::Unparsable { path: "/sys/class/net/eth9/mtu".into(), what: "not a counter: \"x\"".into() } }), None,
             "unknown", "", "cannot read the interface: cannot parse /sys/class/net/eth9/mtu: not a counter: \"x\"", "", ""),
            ("eth0", skipped(None, SkipReason::NoPauseParameters), None,
             "unknown", "", "the driver reports no pause parameters (ETHTOOL_GPAUSEPARAM unsupported, usual on virtual links)", "", ""),
            ("net.core.netdev_max_backlog", skipped(None, SkipReason::SysctlUnreadable { error: ReadError::NotFound { path: "/proc/sys/net/core/netdev_max_backlog".into() } }), None,
             "unknown", "", "cannot read /proc/sys/net/core/netdev_max_backlog: not present; outside the initial network namespace the kernel hides some host-wide parameters (e.g. netdev_max_backlog): run doctor in the host namespace to check it", "", ""),
            ("net.core.rmem_max", skipped(None, SkipReason::SysctlUnreadable { error: ReadError::PermissionDenied { path: "/proc/sys/net/core/rmem_max".into() } }), None,
             "unknown", "", "cannot read /proc/sys/net/core/rmem_max: permission denied; run as root to check it", "", ""),
            ("net.core.rmem_max", skipped(None, SkipReason::SysctlUnreadable { error: ReadError::Os { path: "/proc/sys/net/core/rmem_max".into(), errno: 21 } }), None,
             "unknown", "", "cannot read /proc/sys/net/core/rmem_max: Is a directory (os error 21)", "", ""),
            ("net.core.rmem_max", skipped(None, SkipReason::SysctlUnreadable { error: ReadError::Other { path: "/proc/sys/net/core/rmem_max".into(), error: "stream did not contain valid UTF-8".into() } }), None,
             "unknown", "", "cannot read /proc/sys/net/core/rmem_max: stream did not contain valid UTF-8", "", ""),
            ("net.core.rmem_max", skipped(None, SkipReason::SysctlUnreadable { error: ReadError::Other { path: String::new(), error: "netlink dump for links failed".into() } }), None,
             "unknown", "", "netlink dump for links failed", "", ""),
            ("net.core.rmem_max", skipped(None, SkipReason::SysctlUnreadable { error: ReadError::Unparsable { path: "/proc/sys/net/core/rmem_max".into(), what: "not a number".into() } }), None,
             "unknown", "", "cannot parse /proc/sys/net/core/rmem_max: not a number", "", ""),
            ("net.core.rmem_max", skipped(None, SkipReason::SysctlNotRead), None, "unknown", "", "not read", "", ""),
            ("net.core.rmem_max", skipped(None, SkipReason::Unparsable { value: "x y".into() }), None, "unknown", "", "unparsable value \"x y\"", "", ""),
            ("net.ipv4.tcp_rmem", skipped(Some("4096 131072 33554432"), SkipReason::NoBdp { max: 33_554_432 }), None,
             "4096 131072 33554432", "",
             "maximum 33554432 not compared: give --rtt and --bandwidth (or --peer and --bandwidth, or an interface with a known link speed), or run `mtuperf stream` to this peer first",
             "", ""),
            ("/proc/net/snmp", skipped(None, SkipReason::NoSnmp), None, "unknown", "", "cannot read /proc/net/snmp", "", ""),
            ("eth0", skipped(None, SkipReason::NoIfaceStats), None, "unknown", "", "cannot read /sys/class/net statistics", "", ""),
        ];
        for (subject, check, remedy, measured, expected, why, source, fix) in cases {
            let f = Finding {
                id: "any".into(),
                subject: subject.into(),
                status: Status::Fail,
                check,
                remedy,
            };
            let w = super::of(&f);
            let what = format!("{:?}", f.check);
            assert_eq!(w.measured, measured, "{what}");
            if expected.ends_with(": ") {
                assert!(w.expected.starts_with(expected), "{what}: {}", w.expected);
            } else {
                assert_eq!(w.expected, expected, "{what}");
            }
            assert!(w.why.starts_with(why), "{what}: {}", w.why);
            assert_eq!(w.source, source, "{what}");
            assert_eq!(w.fix, fix, "{what}");
            // The stored form reads back to the same words.
            let back: Finding = serde_json::from_value(serde_json::to_value(&f).unwrap()).unwrap();
            assert_eq!(super::of(&back), w, "{what}");
        }
        // The stored run's verdict is worded by the stream report.
        let line = crate::stream::limit_line(&verdict());
        let held = Finding {
            id: "sysctl.net.ipv4.tcp_rmem".into(),
            subject: "net.ipv4.tcp_rmem".into(),
            status: Status::Warn,
            check: Check::TcpMax {
                buffer: TcpBuffer::Rmem,
                values: [4096, 87380, 6_291_456],
                bdp: None,
                need: None,
                evidence: Some(Box::new(evidence())),
            },
            remedy: None,
        };
        assert_eq!(
            super::of(&held).expected,
            format!("a maximum that does not limit TCP (stream run 12 to 198.18.1.2:7878: {line})")
        );
        assert!(line.contains("71%"), "{line}");
    }
}
