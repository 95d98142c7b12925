//! Plain data read from a host: CPU times, interface facts and counters, TCP_INFO,
//! IP/UDP/TCP counters. `mtuperf-sys` fills these in; they cross the wire in results
//! so each end reports its own host. Raw samples here; deltas and ratios are computed
//! by the engine.

use std::net::IpAddr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// System-wide CPU times from the `cpu` line of /proc/stat, in nanoseconds
/// (converted from USER_HZ ticks), summed over all CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SystemCpu {
    pub user_ns: u64,
    pub nice_ns: u64,
    pub system_ns: u64,
    pub idle_ns: u64,
    pub iowait_ns: u64,
    pub irq_ns: u64,
    pub softirq_ns: u64,
    pub steal_ns: u64,
}

impl SystemCpu {
    /// Time the CPUs were doing anything but idling or waiting for I/O.
    pub fn busy_ns(&self) -> u64 {
        self.user_ns + self.nice_ns + self.system_ns + self.irq_ns + self.softirq_ns + self.steal_ns
    }

    pub fn delta(&self, earlier: &SystemCpu) -> SystemCpu {
        SystemCpu {
            user_ns: self.user_ns.saturating_sub(earlier.user_ns),
            nice_ns: self.nice_ns.saturating_sub(earlier.nice_ns),
            system_ns: self.system_ns.saturating_sub(earlier.system_ns),
            idle_ns: self.idle_ns.saturating_sub(earlier.idle_ns),
            iowait_ns: self.iowait_ns.saturating_sub(earlier.iowait_ns),
            irq_ns: self.irq_ns.saturating_sub(earlier.irq_ns),
            softirq_ns: self.softirq_ns.saturating_sub(earlier.softirq_ns),
            steal_ns: self.steal_ns.saturating_sub(earlier.steal_ns),
        }
    }
}

/// This process's CPU time from getrusage(RUSAGE_SELF), in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProcessCpu {
    pub user_ns: u64,
    pub system_ns: u64,
}

/// CPU time of the threads that carried a test's traffic on one end (the tool's own
/// cost, as opposed to the whole host's), each measured over its own life with
/// getrusage(RUSAGE_THREAD), in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadsCpu {
    /// Threads measured.
    pub threads: u32,
    pub user_ns: u64,
    pub system_ns: u64,
    /// Sum of those threads' lifetimes (start → end): the CPU they could have used.
    pub life_ns: u64,
    /// The same threads' time on CPU from /proc/thread-self/schedstat, in ns (the
    /// scheduler's runtime, finer than getrusage's µs); null when a thread could
    /// not read it.
    pub sched_ns: Option<u64>,
}

impl ThreadsCpu {
    pub fn add(&mut self, o: &ThreadsCpu) {
        // A sum over threads is only whole if every thread read its schedstat.
        self.sched_ns = match (self.threads, self.sched_ns, o.sched_ns) {
            (0, _, b) => b,
            (_, Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        self.threads += o.threads;
        self.user_ns += o.user_ns;
        self.system_ns += o.system_ns;
        self.life_ns += o.life_ns;
    }

    pub fn busy_ns(&self) -> u64 {
        self.user_ns + self.system_ns
    }

    /// Time on CPU from the finest source read: schedstat's ns when every thread
    /// read it, else getrusage's user + system.
    pub fn on_cpu_ns(&self) -> u64 {
        self.sched_ns.unwrap_or_else(|| self.busy_ns())
    }
}

/// One reading of both CPU sources plus the number of online CPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CpuSample {
    pub system: SystemCpu,
    pub process: ProcessCpu,
    pub ncpu: u32,
}

/// Counters of one interface from /sys/class/net/IF/statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IfaceCounters {
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
}

impl IfaceCounters {
    pub fn delta(&self, earlier: &IfaceCounters) -> IfaceCounters {
        IfaceCounters {
            rx_packets: self.rx_packets.saturating_sub(earlier.rx_packets),
            tx_packets: self.tx_packets.saturating_sub(earlier.tx_packets),
            rx_bytes: self.rx_bytes.saturating_sub(earlier.rx_bytes),
            tx_bytes: self.tx_bytes.saturating_sub(earlier.tx_bytes),
            rx_errors: self.rx_errors.saturating_sub(earlier.rx_errors),
            tx_errors: self.tx_errors.saturating_sub(earlier.tx_errors),
            rx_dropped: self.rx_dropped.saturating_sub(earlier.rx_dropped),
            tx_dropped: self.tx_dropped.saturating_sub(earlier.tx_dropped),
        }
    }
}

/// Offload features of an interface (None: the kernel did not say).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Offloads {
    pub tso: Option<bool>,
    pub gso: Option<bool>,
    pub gro: Option<bool>,
    pub lro: Option<bool>,
    pub rx_csum: Option<bool>,
    pub tx_csum: Option<bool>,
}

impl Offloads {
    /// True when any segmentation/coalescing offload is on: interface counters then
    /// count super-packets handed to/from the stack, not frames on the wire.
    pub fn any_segmentation(&self) -> bool {
        [self.tso, self.gso, self.gro, self.lro].contains(&Some(true))
    }
}

/// Facts about one interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct IfaceInfo {
    pub name: String,
    pub index: u32,
    pub mtu: u32,
    /// Link kind from the kernel ("veth", "bond", "vlan", "loopback", "ether", ...).
    pub kind: String,
    /// For a VLAN: the parent interface and its MTU.
    pub parent: Option<(String, u32)>,
    /// For a bond: each member and its MTU.
    pub members: Vec<(String, u32)>,
    pub speed_mbps: Option<u32>,
    pub duplex: Option<String>,
    pub offloads: Offloads,
}

/// Link kinds with no wire: the speed they report (veth says 10000 Mb/s) is not a
/// rate they are held to, their rate is the CPU time they take.
pub const VIRTUAL_LINK_KINDS: [&str; 5] = ["veth", "bridge", "loopback", "dummy", "tun"];

impl IfaceInfo {
    /// A link with no wire (veth, bridge, loopback, ...): see [`VIRTUAL_LINK_KINDS`].
    pub fn is_virtual(&self) -> bool {
        VIRTUAL_LINK_KINDS.contains(&self.kind.as_str())
    }

    /// The link speed when it is a real one (None on virtual links and when unknown).
    pub fn real_speed_mbps(&self) -> Option<u32> {
        self.speed_mbps.filter(|_| !self.is_virtual())
    }
}

/// The kernel's route to a destination (`ip route get` equivalent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RouteInfo {
    pub destination: Option<IpAddr>,
    pub iface: String,
    pub source: Option<IpAddr>,
    pub gateway: Option<IpAddr>,
    /// A path MTU exception cached for this destination, if any.
    pub cached_pmtu: Option<u32>,
    /// Seconds until that exception expires.
    pub cached_expires_s: Option<u32>,
}

/// The TCP_INFO fields mtuperf reports, at the end of a data connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TcpInfo {
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub pmtu: u32,
    /// Total retransmitted segments over the connection's life (tcpi_total_retrans).
    pub retransmits: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_cwnd: u32,
    /// tcpi_delivery_rate in bytes/s, when the kernel provides it (4.9+).
    pub delivery_rate_bps: Option<u64>,
    /// The fields below come from the extended `tcp_info`; `None` means the kernel did
    /// not report the field (too old) or the document predates it, never zero.
    /// tcpi_delivery_rate_app_limited: the last delivery-rate sample was taken while
    /// the application, not the network, limited the sender.
    pub delivery_rate_app_limited: Option<bool>,
    /// tcpi_min_rtt in µs: the smallest RTT seen (4.6+).
    pub min_rtt_us: Option<u32>,
    /// tcpi_notsent_bytes: written by the application, not yet sent.
    pub notsent_bytes: Option<u32>,
    /// tcpi_bytes_acked / tcpi_bytes_received over the connection's life.
    pub bytes_acked: Option<u64>,
    /// tcpi_bytes_received.
    pub bytes_received: Option<u64>,
    /// tcpi_busy_time in µs: time with data in flight or queued to send (4.10+).
    pub busy_time_us: Option<u64>,
    /// tcpi_rwnd_limited in µs: part of the busy time the peer's receive window
    /// stopped the sender (4.10+).
    pub rwnd_limited_us: Option<u64>,
    /// tcpi_sndbuf_limited in µs: part of the busy time the sender ran out of data
    /// to send because its own send buffer was full (4.10+).
    pub sndbuf_limited_us: Option<u64>,
    /// tcpi_delivered / tcpi_delivered_ce: segments delivered, and of them those
    /// that arrived with an ECN congestion mark (4.18+).
    pub delivered: Option<u32>,
    /// tcpi_delivered_ce: segments delivered with an ECN CE mark.
    pub delivered_ce: Option<u32>,
    /// tcpi_bytes_sent / tcpi_bytes_retrans: bytes sent including retransmissions,
    /// and retransmitted bytes (4.19+).
    pub bytes_sent: Option<u64>,
    /// tcpi_bytes_retrans: retransmitted bytes.
    pub bytes_retrans: Option<u64>,
    /// tcpi_snd_wnd: the receive window the peer last advertised, in bytes (5.4+).
    pub snd_wnd: Option<u32>,
    /// tcpi_rcv_space: the receive buffer autotuning's estimate of what the peer
    /// sends per RTT, in bytes.
    pub rcv_space: Option<u32>,
}

/// Counters from /proc/net/snmp that reveal fragmentation and UDP/TCP trouble.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SnmpCounters {
    pub ip_frag_creates: u64,
    pub ip_frag_oks: u64,
    pub ip_frag_fails: u64,
    pub ip_reasm_reqds: u64,
    pub ip_reasm_oks: u64,
    pub ip_reasm_fails: u64,
    pub ip_reasm_timeout: u64,
    pub udp_in_datagrams: u64,
    pub udp_out_datagrams: u64,
    pub udp_in_errors: u64,
    pub udp_rcvbuf_errors: u64,
    pub udp_sndbuf_errors: u64,
    pub tcp_retrans_segs: u64,
    pub tcp_out_segs: u64,
    pub tcp_in_segs: u64,
}

impl SnmpCounters {
    pub fn delta(&self, e: &SnmpCounters) -> SnmpCounters {
        SnmpCounters {
            ip_frag_creates: self.ip_frag_creates.saturating_sub(e.ip_frag_creates),
            ip_frag_oks: self.ip_frag_oks.saturating_sub(e.ip_frag_oks),
            ip_frag_fails: self.ip_frag_fails.saturating_sub(e.ip_frag_fails),
            ip_reasm_reqds: self.ip_reasm_reqds.saturating_sub(e.ip_reasm_reqds),
            ip_reasm_oks: self.ip_reasm_oks.saturating_sub(e.ip_reasm_oks),
            ip_reasm_fails: self.ip_reasm_fails.saturating_sub(e.ip_reasm_fails),
            ip_reasm_timeout: self.ip_reasm_timeout.saturating_sub(e.ip_reasm_timeout),
            udp_in_datagrams: self.udp_in_datagrams.saturating_sub(e.udp_in_datagrams),
            udp_out_datagrams: self.udp_out_datagrams.saturating_sub(e.udp_out_datagrams),
            udp_in_errors: self.udp_in_errors.saturating_sub(e.udp_in_errors),
            udp_rcvbuf_errors: self.udp_rcvbuf_errors.saturating_sub(e.udp_rcvbuf_errors),
            udp_sndbuf_errors: self.udp_sndbuf_errors.saturating_sub(e.udp_sndbuf_errors),
            tcp_retrans_segs: self.tcp_retrans_segs.saturating_sub(e.tcp_retrans_segs),
            tcp_out_segs: self.tcp_out_segs.saturating_sub(e.tcp_out_segs),
            tcp_in_segs: self.tcp_in_segs.saturating_sub(e.tcp_in_segs),
        }
    }
}

/// Who a host is: shown in headers and reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HostIdentity {
    pub hostname: String,
    pub kernel: String,
    pub ncpu: u32,
    pub software: String,
}

/// Everything one end samples at the start and the end of a measurement on the
/// interface that carries the traffic. `before`/`after` are taken by the same process.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostSnapshot {
    pub cpu: CpuSample,
    pub iface: Option<IfaceCounters>,
    pub snmp: Option<SnmpCounters>,
    /// Monotonic nanoseconds since the measurement's start on this end.
    pub at_ns: u64,
}
