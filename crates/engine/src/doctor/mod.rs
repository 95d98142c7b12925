//! `doctor`: checks a host's interconnect settings against what the documents tell
//! operators to tune. The reader ([`facts`]) gathers a [`HostFacts`] from /proc, /sys,
//! ethtool and rtnetlink; the rules ([`check_host`], [`cross::compare`]) are pure
//! functions over it, so each rule is unit-tested on hand-made facts. Nothing here
//! changes the host: each finding carries what would fix it ([`Fix`]), which
//! `crates/report` words, with the finding, and spells as a shell command.

pub mod agent;
pub mod client;
pub mod counters;
pub mod cross;
pub mod facts;
mod finding;
pub mod iface;
pub mod run;
mod steering;
pub mod sysctl;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::stream::verdict::LimitVerdict;
use crate::stream::End;

pub use finding::{
    Check, Counter, Finding, Fix, MinimumOf, MtuScope, SkipReason, Status, SysctlSet, TcpBuffer,
};
pub use mtuperf_proto::msg::doctor::{HostFacts, IfaceFacts, ReadError};

/// Which documents the thresholds come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Oracle RAC interconnect: values below the Grid Infrastructure minimums FAIL.
    Rac,
    /// Any cluster interconnect: the same values are advice (WARN).
    Generic,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Rac => "rac",
            Profile::Generic => "generic",
        }
    }

    /// The status of a value below a documented minimum under this profile.
    pub fn below_minimum(self) -> Status {
        match self {
            Profile::Rac => Status::Fail,
            Profile::Generic => Status::Warn,
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rac" => Ok(Profile::Rac),
            "generic" => Ok(Profile::Generic),
            _ => Err(format!("unknown profile {s:?}: allowed rac, generic")),
        }
    }
}

/// Where a bandwidth-delay product's rate came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum RateFrom {
    /// The `bandwidth` the user gave.
    Given,
    /// The link speed of `iface`, the slowest real link checked.
    LinkSpeed { iface: String },
}

/// Where a bandwidth-delay product's round trip came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RttFrom {
    /// The `rtt` the user gave.
    Given,
    /// The control connection's round trip to the agent.
    ControlRoundTrip,
}

/// The bandwidth-delay product the TCP buffer maxima are checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Bdp {
    pub bits_per_sec: f64,
    /// The round trip, µs.
    #[serde(rename = "rtt_us", with = "micros")]
    #[schemars(with = "f64")]
    pub rtt: Duration,
    pub rate_from: RateFrom,
    pub rtt_from: RttFrom,
}

/// A duration as µs (a float, to keep the kernel's sub-ms round trips exact).
mod micros {
    use std::time::Duration;

    use serde::{de::Error, Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1e6)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let us = f64::deserialize(d)?;
        Duration::try_from_secs_f64(us / 1e6)
            .map_err(|e| D::Error::custom(format!("rtt_us {us}: {e}")))
    }
}

impl Bdp {
    /// Bytes in flight needed to fill the path: rate / 8 × RTT.
    pub fn bytes(&self) -> u64 {
        (self.bits_per_sec / 8.0 * self.rtt.as_secs_f64()).ceil() as u64
    }
}

/// What a stored `stream` run measured about this host's buffers: a direction whose
/// sender was held back by an autotuned receive window (this host received) or send
/// buffer (this host sent), capped by `sysctl`'s maximum. Runs with `--window` are
/// no evidence about the sysctls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamEvidence {
    /// The stored run: its id and target.
    pub run_id: i64,
    pub target: String,
    /// "net.ipv4.tcp_rmem" or "net.ipv4.tcp_wmem".
    pub sysctl: String,
    /// The run's verdict on that direction (report words it).
    pub verdict: LimitVerdict,
}

impl StreamEvidence {
    /// The evidence of `verdicts`, from stored run `run_id` to `target`, about the
    /// buffer sysctls of `end`.
    pub fn of(
        run_id: i64,
        target: &str,
        end: End,
        verdicts: &[LimitVerdict],
    ) -> Option<StreamEvidence> {
        verdicts.iter().find_map(|v| {
            (v.sysctl_end == Some(end)).then_some(())?;
            Some(StreamEvidence {
                run_id,
                target: target.to_string(),
                sysctl: v.sysctl.clone()?,
                verdict: v.clone(),
            })
        })
    }
}

/// What the rules need besides the facts.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub profile: Profile,
    pub bdp: Option<Bdp>,
    /// A stored stream run's verdict that this host's buffers held a sender back.
    pub evidence: Option<StreamEvidence>,
}

/// Every single-host check, in report order: interfaces, sysctls, counters.
pub fn check_host(facts: &HostFacts, opts: &Options) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(iface::check(facts, opts));
    out.extend(sysctl::check(facts, opts));
    out.extend(counters::check(facts));
    out.extend(steering::check(facts));
    out
}

/// Worst status first, for exit codes: FAIL > WARN > SKIP > PASS.
pub fn worst(findings: &[Finding]) -> Status {
    findings
        .iter()
        .map(|f| f.status)
        .max()
        .unwrap_or(Status::Pass)
}

#[cfg(test)]
mod tests;
