//! `doctor`: checks a host's interconnect settings against what the documents tell
//! operators to tune. The reader ([`facts`]) gathers a [`HostFacts`] from /proc, /sys,
//! ethtool and rtnetlink; the rules ([`check_host`], [`cross::compare`]) are pure
//! functions over it, so each rule is unit-tested on hand-made facts. Nothing here
//! changes the host: each finding carries the command that would fix it.

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

use crate::stream::verdict::LimitVerdict;
use crate::stream::End;

pub use finding::FindingBuilder;
pub use mtuperf_proto::msg::doctor::{Finding, HostFacts, IfaceFacts, Status};

/// Which documents the thresholds come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// The bandwidth-delay product the TCP buffer maxima are checked against.
#[derive(Debug, Clone, PartialEq)]
pub struct Bdp {
    pub bits_per_sec: f64,
    pub rtt: Duration,
    /// Where the figures come from ("--rtt and --bandwidth", "TCP_INFO rtt of the
    /// control connection, link speed of IF").
    pub source: String,
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
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEvidence {
    /// "stream run 12 to 198.18.1.2:7878".
    pub source: String,
    /// "net.ipv4.tcp_rmem" or "net.ipv4.tcp_wmem".
    pub sysctl: String,
    /// The verdict, in words (`line` of [`StreamEvidence::of`]: report words it).
    pub line: String,
}

impl StreamEvidence {
    /// The evidence of `verdicts` about the buffer sysctls of `end`, `line` putting
    /// the verdict into words.
    pub fn of(
        source: &str,
        end: End,
        verdicts: &[&LimitVerdict],
        line: impl Fn(&LimitVerdict) -> String,
    ) -> Option<StreamEvidence> {
        verdicts.iter().find_map(|v| {
            (v.sysctl_end == Some(end)).then_some(())?;
            Some(StreamEvidence {
                source: source.to_string(),
                sysctl: v.sysctl.clone()?,
                line: line(v),
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
