//! The check before a comparison: does each path carry its MTU both ways? The `path`
//! engine's two-direction check (DF probes each way, with the agent) on each path; a
//! path whose agent cannot be reached, or whose check fails, is broken, with the error
//! kept typed for report to word.

use mtuperf_proto::failed::Failed;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::PathSpec;
use crate::client::{ConnectOptions, Session};
use crate::config::PathConfig;
use crate::diagnosis::{Diagnosis, FaultClass};

/// The check's conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    /// The path cannot be compared honestly (black hole, unreachable agent).
    Broken,
}

/// Where a check that could not judge its path stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckStep {
    /// Reaching the path's agent (connect, handshake).
    Reach,
    /// The path check itself, with the agent reached.
    Path,
}

/// Why a check could not judge its path: the step, and the error (a refusal typed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckFailed {
    pub step: CheckStep,
    pub failed: Failed,
}

/// What the check found on one path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PathCheck {
    pub name: String,
    pub target: String,
    pub verdict: Verdict,
    /// Why the path could not be checked (then `verdict` is broken).
    pub failed: Option<CheckFailed>,
    pub client_iface: Option<String>,
    pub client_mtu: Option<u32>,
    pub agent_iface: Option<String>,
    pub agent_mtu: Option<u32>,
    /// The MTU the path carries both ways, and what keeps it from carrying the
    /// expected one (the report words them).
    pub carries: Option<u32>,
    pub faults: Vec<Diagnosis>,
}

/// Checks one path with the `path` engine (blocking; bounded by its probes' waits).
pub fn check_path(spec: &PathSpec, opts: &ConnectOptions) -> PathCheck {
    let mut c = PathCheck {
        name: spec.name.clone(),
        target: spec.target.clone(),
        verdict: Verdict::Broken,
        failed: None,
        client_iface: None,
        client_mtu: None,
        agent_iface: None,
        agent_mtu: None,
        carries: None,
        faults: Vec::new(),
    };
    let opts = ConnectOptions {
        bind: spec.bind.or(opts.bind),
        ..opts.clone()
    };
    let session = match Session::connect(&c.target, &opts) {
        Ok(s) => s,
        Err(e) => {
            c.failed = Some(CheckFailed {
                step: CheckStep::Reach,
                failed: e.failed(),
            });
            return c;
        }
    };
    let result = crate::path::run(&session, &spec.target, &PathConfig::default());
    session.close();
    match result {
        Ok(r) => from_path(&mut c, &r),
        Err(e) => {
            c.failed = Some(CheckFailed {
                step: CheckStep::Path,
                failed: e.failed(),
            });
        }
    }
    c
}

/// The path engine's two-direction search decides: a fault that drops packets
/// silently (a black hole, a NIC or a switch port below the other end's MTU, a
/// one-way drop) makes the path unfit for a comparison; a router that answers
/// frag-needed does not (path MTU discovery works). The report words the faults.
fn from_path(c: &mut PathCheck, r: &crate::path::PathResult) {
    c.client_mtu = Some(r.local.mtu);
    c.client_iface = Some(r.local.route.iface.clone());
    c.agent_mtu = r.agent_path.iface.as_ref().map(|i| i.mtu);
    c.agent_iface = r.agent_path.iface.as_ref().map(|i| i.name.clone());
    c.carries = Some(r.carries());
    let broken = r.faults.iter().any(|d| d.class() != FaultClass::RouterMtu);
    c.verdict = if broken { Verdict::Broken } else { Verdict::Ok };
    c.faults.clone_from(&r.faults);
}
