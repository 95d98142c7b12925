//! What a rule found, as data: the check it ran with the values it read and expected
//! ([`Check`]), its status, and what would fix it ([`Fix`]). `crates/report` puts each
//! into words (measured, expected, why, source) and spells each fix as a shell command;
//! a stored doctor run holds these, not the sentences.

use mtuperf_proto::host::Offloads;
use mtuperf_proto::msg::doctor::{Pause, ReadError, Steering};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Bdp, Profile, StreamEvidence};

/// A finding's status. Ordered so the worst is the largest: FAIL > WARN > SKIP > PASS.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Skip,
    Warn,
    Fail,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Skip => "SKIP",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Stable identifier, e.g. "sysctl.net.core.rmem_max" or "iface.mtu".
    #[schemars(pattern(r"^(iface|sysctl|counter|cross)\."))]
    pub id: String,
    /// What was checked: an interface, a sysctl, a counter.
    pub subject: String,
    pub status: Status,
    /// The check and what it read and expected.
    pub check: Check,
    /// What would fix it (only on a WARN or FAIL, and not every one has a fix).
    pub remedy: Option<Fix>,
}

/// The numeric sysctls checked against a documented minimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MinimumOf {
    RmemDefault,
    RmemMax,
    WmemDefault,
    WmemMax,
    NetdevMaxBacklog,
    IpfragHighThresh,
    IpfragLowThresh,
}

impl MinimumOf {
    /// The sysctl's name.
    pub fn sysctl(self) -> &'static str {
        match self {
            MinimumOf::RmemDefault => "net.core.rmem_default",
            MinimumOf::RmemMax => "net.core.rmem_max",
            MinimumOf::WmemDefault => "net.core.wmem_default",
            MinimumOf::WmemMax => "net.core.wmem_max",
            MinimumOf::NetdevMaxBacklog => "net.core.netdev_max_backlog",
            MinimumOf::IpfragHighThresh => "net.ipv4.ipfrag_high_thresh",
            MinimumOf::IpfragLowThresh => "net.ipv4.ipfrag_low_thresh",
        }
    }
}

/// The TCP buffer sysctls whose maximum must hold the bandwidth-delay product.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TcpBuffer {
    Rmem,
    Wmem,
}

impl TcpBuffer {
    pub fn sysctl(self) -> &'static str {
        match self {
            TcpBuffer::Rmem => "net.ipv4.tcp_rmem",
            TcpBuffer::Wmem => "net.ipv4.tcp_wmem",
        }
    }
}

/// The counters checked for growth during the sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Counter {
    IpReasmFails,
    IpReasmTimeout,
    UdpInErrors,
    UdpRcvbufErrors,
    TcpRetransSegs,
    RxErrors,
    RxDropped,
    TxErrors,
    TxDropped,
}

impl Counter {
    /// The counter as `netstat -s` / `nstat` (SNMP) or `ip -s link` (interface) names it.
    pub fn name(self) -> &'static str {
        match self {
            Counter::IpReasmFails => "Ip ReasmFails",
            Counter::IpReasmTimeout => "Ip ReasmTimeout",
            Counter::UdpInErrors => "Udp InErrors",
            Counter::UdpRcvbufErrors => "Udp RcvbufErrors",
            Counter::TcpRetransSegs => "Tcp RetransSegs",
            Counter::RxErrors => "rx_errors",
            Counter::RxDropped => "rx_dropped",
            Counter::TxErrors => "tx_errors",
            Counter::TxDropped => "tx_dropped",
        }
    }

    /// An interface's counter (else a host-wide SNMP one).
    pub fn of_iface(self) -> bool {
        matches!(
            self,
            Counter::RxErrors | Counter::RxDropped | Counter::TxErrors | Counter::TxDropped
        )
    }
}

/// Why a check could not run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SkipReason {
    /// The interface's facts could not be read (the reader's error).
    IfaceUnreadable { error: ReadError },
    /// The driver answers no ETHTOOL_GPAUSEPARAM.
    NoPauseParameters,
    /// The sysctl could not be read (the reader's error).
    SysctlUnreadable { error: ReadError },
    /// The sysctl was not among the values read.
    SysctlNotRead,
    /// The value read is not what the check parses.
    Unparsable { value: String },
    /// A TCP buffer maximum with no bandwidth-delay product to compare it with.
    NoBdp { max: u64 },
    /// /proc/net/snmp could not be read.
    NoSnmp,
    /// An interface's statistics could not be read.
    NoIfaceStats,
}

/// One kind of check, with what it read and what it expected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Check {
    /// The check could not run; `read` is the value it saw, if any.
    Skipped {
        read: Option<String>,
        why: SkipReason,
    },
    /// The interface's MTU under the profile (rac: at least [`super::iface::RAC_MTU`]).
    Mtu { mtu: u32, profile: Profile },
    /// A bond member's MTU against the bond's.
    BondMemberMtu { member_mtu: u32, bond_mtu: u32 },
    /// A VLAN parent's MTU against the VLAN's.
    VlanParentMtu { parent_mtu: u32, vlan_mtu: u32 },
    /// Speed, duplex and administrative state.
    Link {
        speed_mbps: Option<u32>,
        duplex: Option<String>,
        up: bool,
    },
    /// Offload features (LRO must be off).
    Offloads { offloads: Offloads },
    /// Pause (flow control) parameters, for comparison with the switch port.
    Pause { pause: Pause },
    /// Effective rp_filter (the larger of `all` and the interface's) with the number
    /// of interconnect interfaces.
    RpFilter {
        effective: u32,
        all: u32,
        own: u32,
        interfaces: usize,
    },
    /// A numeric sysctl with a documented minimum.
    Minimum { of: MinimumOf, value: u64, min: u64 },
    /// The maximum of tcp_rmem/tcp_wmem against the bandwidth-delay product (`bdp`,
    /// `need` bytes) and a stored stream run's evidence that it held a sender back.
    TcpMax {
        buffer: TcpBuffer,
        values: [u64; 3],
        bdp: Option<Bdp>,
        need: Option<u64>,
        evidence: Option<Box<StreamEvidence>>,
    },
    /// net.ipv4.tcp_mtu_probing (0 warns).
    MtuProbing { value: String },
    /// net.ipv4.ipfrag_time in seconds (0 or above 30 warns).
    IpfragTime { value: String },
    /// net.ipv4.tcp_no_metrics_save (reported).
    NoMetricsSave { value: String },
    /// A counter since boot and its increase over a sample of `sample_ms`.
    Counter {
        counter: Counter,
        total: u64,
        delta: Option<u64>,
        sample_ms: u64,
    },
    /// Where the interface's receive work runs (information).
    IrqSteering {
        steering: Steering,
        /// rx queues whose RPS mask is not empty.
        rps_queues_on: usize,
        rps_sock_flow_entries: Option<u64>,
        irqbalance: Option<bool>,
    },
    /// This host's interconnect MTU against the peer's.
    CrossMtu { local: u32, peer: u32 },
    /// A sysctl that should be the same on both nodes.
    CrossSysctl {
        sysctl: String,
        local: String,
        peer: String,
    },
}

/// Where an MTU change is to be made, beyond the interface it names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "on", rename_all = "snake_case")]
pub enum MtuScope {
    /// The interface alone (a bond member, a VLAN's parent).
    Iface,
    /// This host's interconnect, and with it every switch port and the peer.
    Interconnect,
    /// This host, between it and the peer.
    Here,
    /// This host, and the peer `peer`'s interface `peer_iface` too.
    HereAndPeer { peer: String, peer_iface: String },
    /// The peer `peer` (the interface is the peer's).
    Peer { peer: String },
}

/// One sysctl setting a fix makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SysctlSet {
    pub name: String,
    pub value: String,
}

/// What would fix a finding, with the names and values the command needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[schemars(rename = "DoctorFix")]
pub enum Fix {
    /// Set `iface`'s MTU to `mtu`.
    SetMtu {
        iface: String,
        mtu: u32,
        scope: MtuScope,
    },
    /// Bring `iface` up.
    LinkUp { iface: String },
    /// Renegotiate `iface`'s link (then check the switch port).
    Autoneg { iface: String },
    /// Turn LRO off on `iface`.
    LroOff { iface: String },
    /// Set these sysctls now and persistently, in this order.
    Sysctl { set: Vec<SysctlSet> },
    /// A counter grows: look at the counters and the related findings.
    Investigate,
    /// Give `sysctl` the same value on both nodes.
    SameOnBothNodes { sysctl: String },
}

impl Fix {
    /// The fix setting one sysctl.
    pub fn sysctl(name: &str, value: impl Into<String>) -> Fix {
        Fix::Sysctl {
            set: vec![SysctlSet {
                name: name.into(),
                value: value.into(),
            }],
        }
    }
}

/// Builds a [`Finding`]: the fix is kept only on a WARN or FAIL.
pub fn finding(id: &str, subject: &str, status: Status, check: Check, fix: Option<Fix>) -> Finding {
    Finding {
        id: id.into(),
        subject: subject.into(),
        status,
        check,
        remedy: fix.filter(|_| matches!(status, Status::Warn | Status::Fail)),
    }
}

/// A SKIP finding saying why a check could not run (`read`: what it saw, if anything).
pub fn skip(id: &str, subject: &str, read: Option<&str>, why: SkipReason) -> Finding {
    finding(
        id,
        subject,
        Status::Skip,
        Check::Skipped {
            read: read.map(str::to_string),
            why,
        },
        None,
    )
}
