//! The check before a comparison: can each path carry full-size segments?
//!
//! Until the `path` engine (DF probes in both directions) is wired in, the check is a
//! short bulk TCP probe: connect and handshake with the agent, then send 64 KiB blocks
//! for [`PROBE_MS`]. A path whose route drops full-size packets without telling the
//! sender (a PMTU black hole) lets the handshake through but delivers (almost) none of
//! the probe's bytes. Both ends' interface MTUs are recorded.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use mtuperf_proto::failed::Failed;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::probe::{self, Answer};
use super::PathSpec;
use crate::client::{ConnectOptions, Session};
use crate::config::{PathConfig, StreamConfig};
use crate::diagnosis::{Diagnosis, FaultClass};
use crate::stream::{self, metrics};

/// Length of the probe.
pub const PROBE_MS: u64 = 1000;
/// Fewer bytes than this delivered in the probe means full-size segments do not pass.
pub const MIN_PROBE_BYTES: u64 = 256 * 1024;

/// The check's conclusion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    /// The path cannot be compared honestly (black hole, unreachable agent).
    Broken,
}

/// What the check found on one path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PathCheck {
    pub name: String,
    pub target: String,
    pub verdict: Verdict,
    /// Why, in one sentence (ending in `failed`'s words when it is set).
    pub reason: String,
    /// The error that ended the check (reaching the agent, or the bulk probe): a
    /// refusal typed, which report words after `reason`.
    pub failed: Option<Failed>,
    /// "stream-probe" (until the path engine exists).
    pub method: String,
    pub client_iface: Option<String>,
    pub client_mtu: Option<u32>,
    pub agent_iface: Option<String>,
    pub agent_mtu: Option<u32>,
    /// Bytes the agent received during the probe.
    pub probe_bytes: Option<u64>,
    pub probe_goodput_bps: Option<f64>,
    /// The don't-fragment UDP probe at this host's interface MTU, in words.
    pub df_probe: Option<String>,
    /// The `path` method: the MTU the path carries both ways, and what keeps it from
    /// carrying the expected one (the report words them; `reason` is then empty).
    pub carries: Option<u32>,
    pub faults: Vec<Diagnosis>,
}

/// Checks one path (blocking, about [`PROBE_MS`]; longer on a black hole, bounded by
/// the stream test's idle timeout).
pub fn check_path(spec: &PathSpec, opts: &ConnectOptions, stop: &Arc<AtomicBool>) -> PathCheck {
    let mut c = PathCheck {
        name: spec.name.clone(),
        target: spec.target.clone(),
        verdict: Verdict::Broken,
        reason: String::new(),
        failed: None,
        method: "stream-probe".into(),
        client_iface: None,
        client_mtu: None,
        agent_iface: None,
        agent_mtu: None,
        probe_bytes: None,
        probe_goodput_bps: None,
        df_probe: None,
        carries: None,
        faults: Vec::new(),
    };
    let opts = ConnectOptions {
        bind: spec.bind.or(opts.bind),
        ..opts.clone()
    };
    let Some(session) = reach(&mut c, &opts) else {
        return c;
    };
    match crate::path::run(&session, &spec.target, &PathConfig::default()) {
        Ok(r) => {
            session.close();
            from_path(&mut c, &r);
            return c;
        }
        Err(e) => {
            c.df_probe = Some(format!(
                "path engine unavailable ({e}); falling back to probes"
            ));
        }
    }
    session.close();
    if let Some(session) = reach(&mut c, &opts) {
        bulk_probe(&mut c, session, opts.bind, stop);
    }
    c
}

/// A session with the path's agent; None with the reason in `c`.
fn reach(c: &mut PathCheck, opts: &ConnectOptions) -> Option<Session> {
    Session::connect(&c.target, opts)
        .map_err(|e| {
            c.reason = format!("cannot reach the agent at {}: ", c.target);
            c.failed = Some(e.failed());
        })
        .ok()
}

/// The fallback without the path engine: a short bulk TCP stream (full-size
/// segments must arrive), then DF datagrams (what TCP's MSS negotiation hides).
fn bulk_probe(
    c: &mut PathCheck,
    session: Session,
    bind: Option<std::net::IpAddr>,
    stop: &Arc<AtomicBool>,
) {
    let params = StreamConfig::timed(64 * 1024, Duration::from_millis(PROBE_MS)).params();
    let res = stream::run(&session, &params, stop, &stream::client::Quiet);
    let agent_ip = session.agent.ip();
    session.close();
    let res = match res {
        Ok(r) => r,
        Err(e) => {
            c.reason = "the bulk TCP probe failed: ".into();
            c.failed = Some(e.failed());
            return;
        }
    };
    c.client_iface = res.client.iface.as_ref().map(|i| i.name.clone());
    c.client_mtu = res.client.iface.as_ref().map(|i| i.mtu);
    c.agent_iface = res.agent.iface.as_ref().map(|i| i.name.clone());
    c.agent_mtu = res.agent.iface.as_ref().map(|i| i.mtu);
    let m = metrics::compute(&res);
    let got = m.directions.first().map_or(0, |d| d.bytes_read);
    c.probe_bytes = Some(got);
    c.probe_goodput_bps = Some(m.headline_bps);
    if got < MIN_PROBE_BYTES {
        c.reason = format!(
            "the handshake passed but a {PROBE_MS} ms bulk TCP probe delivered only {got} bytes \
             (at least {MIN_PROBE_BYTES} expected): full-size packets are dropped on the way \
             (PMTU black hole?); check with `mtuperf path` or `ping -M do -s <MTU-28>`"
        );
        return;
    }
    c.verdict = Verdict::Ok;
    c.reason = match (c.client_mtu, c.agent_mtu) {
        (Some(a), Some(b)) if a == b => {
            format!("full-size TCP segments pass; MTU {a} on both ends")
        }
        (Some(a), Some(b)) => {
            format!("TCP passes (MSS negotiated); MTU {a} here, {b} at the agent")
        }
        _ => "full-size TCP segments pass".into(),
    };
    if let Some(mtu) = c.client_mtu {
        df_check(c, agent_ip, bind, mtu);
    }
}

/// Small then full-size DF datagrams: a small one that is answered and a full-size one
/// that vanishes is a black hole (what TCP's MSS negotiation hides but UDP traffic hits).
fn df_check(c: &mut PathCheck, dst: std::net::IpAddr, bind: Option<std::net::IpAddr>, mtu: u32) {
    let small = probe::probe(dst, bind, 128);
    if !matches!(small, Ok(Answer::Reached)) {
        c.df_probe = Some(format!(
            "inconclusive: a small DF datagram drew no ICMP port unreachable ({small:?}); ICMP filtered?"
        ));
        return;
    }
    match probe::probe(dst, bind, mtu) {
        Ok(Answer::Reached) => {
            c.df_probe = Some(format!("a {mtu}-byte DF datagram reached the agent's host"));
        }
        Ok(Answer::TooBig { mtu: m, from }) => {
            c.df_probe = Some(format!(
                "path MTU {m} (reported by {from}), below this host's {mtu}; PMTU discovery works"
            ));
        }
        Ok(Answer::Silent) => {
            c.verdict = Verdict::Broken;
            c.df_probe = Some(format!(
                "a {mtu}-byte DF datagram vanished without an ICMP error"
            ));
            c.reason = format!(
                "PMTU black hole: a small DF datagram reaches {dst} but a {mtu}-byte one (this \
                 interface's MTU) vanishes with no ICMP frag-needed; TCP hides it by negotiating \
                 the MSS, UDP and DF traffic do not. Fix the MTU on the path or let ICMP through"
            );
        }
        other => c.df_probe = Some(format!("inconclusive: {other:?}")),
    }
}

/// The path engine's two-direction search decides: a fault that drops packets
/// silently (a black hole, a NIC or a switch port below the other end's MTU, a
/// one-way drop) makes the path unfit for a comparison; a router that answers
/// frag-needed does not (path MTU discovery works). The report words the faults.
fn from_path(c: &mut PathCheck, r: &crate::path::PathResult) {
    c.method = "path".into();
    c.client_mtu = Some(r.local.mtu);
    c.client_iface = Some(r.local.route.iface.clone());
    c.agent_mtu = r.agent_path.iface.as_ref().map(|i| i.mtu);
    c.agent_iface = r.agent_path.iface.as_ref().map(|i| i.name.clone());
    c.carries = Some(r.carries());
    let broken = r.faults.iter().any(|d| d.class() != FaultClass::RouterMtu);
    c.verdict = if broken { Verdict::Broken } else { Verdict::Ok };
    c.faults.clone_from(&r.faults);
}
