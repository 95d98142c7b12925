//! Messages of `doctor --peer` (the agent reads its host), and the host facts the
//! checks are computed from (on the client, for both ends), so both ends can be
//! compared field by field.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::host::{IfaceCounters, IfaceInfo, SnmpCounters};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorRequest {
    /// "rac" or "generic".
    pub profile: String,
    /// Length of the counter sample on the agent, in ms (0: since-boot values only).
    pub sample_ms: u64,
}

/// ETHTOOL_GPAUSEPARAM of one interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pause {
    pub autoneg: bool,
    pub rx: bool,
    pub tx: bool,
}

/// What the reader found about one interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IfaceFacts {
    pub info: IfaceInfo,
    /// IFF_UP from /sys/class/net/IF/flags.
    pub up: bool,
    /// None: the driver does not report pause parameters.
    pub pause: Option<Pause>,
    /// Since boot (or since the interface was created).
    pub counters: Option<IfaceCounters>,
    /// Increase over the sample (`HostFacts::sample_ms`).
    pub counters_delta: Option<IfaceCounters>,
    /// net.ipv4.conf.IF.rp_filter.
    pub rp_filter: Option<u32>,
    /// Where the interface's receive work runs: queue IRQs and RPS/RFS (null when it
    /// could not be read).
    pub steering: Option<Steering>,
}

/// Interrupt and receive-packet steering of one interface.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Steering {
    /// The interface's queue IRQs and their smp_affinity_list (empty: none, as veth).
    pub irqs: Vec<crate::placement::IrqAffinity>,
    /// Per rx queue: the rps_cpus mask (all zero: RPS off).
    pub rps_cpus: Vec<String>,
    /// Per rx queue: rps_flow_cnt (0: RFS off on that queue).
    pub rps_flow_cnt: Vec<u32>,
}

/// Why the reader could not read one of a host's files (a sysctl under /proc/sys, an
/// interface's under /sys/class/net): the file, and what went wrong, typed (report
/// words it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ReadError {
    /// The file is not there (ENOENT): outside the initial network namespace the
    /// kernel hides some host-wide sysctls; an interface that went away.
    NotFound { path: String },
    /// The reader may not read it (EACCES, EPERM).
    PermissionDenied { path: String },
    /// Another error of the system, by its number (EISDIR, EIO, EOPNOTSUPP...).
    Os { path: String, errno: i32 },
    /// Another error that is none of the system's (content that is not UTF-8, a name
    /// that is not a file's), in its own words.
    Other { path: String, error: String },
    /// The file was read but holds what the reader does not parse.
    Unparsable { path: String, what: String },
}

impl ReadError {
    /// The file that could not be read.
    pub fn path(&self) -> &str {
        match self {
            ReadError::NotFound { path }
            | ReadError::PermissionDenied { path }
            | ReadError::Os { path, .. }
            | ReadError::Other { path, .. }
            | ReadError::Unparsable { path, .. } => path,
        }
    }
}

/// Everything the checks look at on one host (one network namespace).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostFacts {
    pub hostname: String,
    /// How the interfaces were chosen ("given", "route to 198.18.2.2", "every up
    /// non-loopback interface").
    pub selection: String,
    pub ifaces: Vec<IfaceFacts>,
    /// sysctl name → value (whitespace collapsed to one space).
    pub sysctls: BTreeMap<String, String>,
    /// sysctl name (or "iface.NAME" for an interface) → why it could not be read.
    pub unreadable: BTreeMap<String, ReadError>,
    /// IPv4 + IPv6 counters since boot.
    pub snmp: Option<SnmpCounters>,
    /// Increase over the sample.
    pub snmp_delta: Option<SnmpCounters>,
    /// Length of the counter sample in ms (0: none taken).
    pub sample_ms: u64,
    /// Whether irqbalance runs (null: unknown).
    pub irqbalance: Option<bool>,
    /// net.core.rps_sock_flow_entries (0: RFS off host-wide).
    pub rps_sock_flow_entries: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorReply {
    pub hostname: String,
    /// What the agent read; the client applies the rules (with its own profile, the
    /// round trip and the history's evidence).
    pub facts: HostFacts,
}
