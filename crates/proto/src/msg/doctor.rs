//! Messages of `doctor --peer` (host checks run on the agent's host).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorRequest {
    /// "rac" or "generic".
    pub profile: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Skip,
    Warn,
    Fail,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// Stable identifier, e.g. "sysctl.net.core.rmem_max" or "iface.mtu".
    pub id: String,
    /// What was checked: an interface, a sysctl, a counter.
    pub subject: String,
    pub status: Status,
    pub measured: String,
    pub expected: String,
    pub why: String,
    pub source: String,
    /// Exact command that fixes it (empty when nothing to fix).
    pub fix: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoctorReply {
    pub hostname: String,
    pub findings: Vec<Finding>,
}
