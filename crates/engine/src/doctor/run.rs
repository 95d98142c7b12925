//! One doctor check of both ends: this host's facts sampled while the agent samples its
//! own, the bandwidth-delay product chosen from the flags or measured, the rules applied
//! to both hosts here (the agent knows neither `--bandwidth` nor the RTT) and the two
//! hosts compared.
use std::time::Duration;

use super::{
    client, cross, facts, Bdp, Finding, HostFacts, Options, Profile, RateFrom, RttFrom,
    StreamEvidence,
};
use crate::client::Session;
use crate::stream::End;
use crate::EngineError;

/// What to check, already validated.
#[derive(Debug, Clone)]
pub struct Check {
    pub profile: Profile,
    /// How long to sample the error counters.
    pub sample: Duration,
    /// The interfaces to check, and how they were chosen.
    pub ifaces: Vec<String>,
    pub selection: String,
    /// The path rate given, bit/s (default: the slowest link speed of the checked
    /// interfaces).
    pub bandwidth: Option<f64>,
    /// The round trip given (default with a peer: the control connection's).
    pub rtt: Option<Duration>,
}

/// Where the check finds what stored runs say about an end's buffers (the history:
/// the engine does not read it itself).
pub trait EvidenceSource {
    fn evidence(&self, end: End) -> Option<StreamEvidence>;
}

/// The agent's host: what it read, and the findings computed here from it.
#[derive(Debug, Clone)]
pub struct Peer {
    pub hostname: String,
    pub facts: HostFacts,
    pub findings: Vec<Finding>,
}

/// Both hosts' facts and findings, and their comparison.
#[derive(Debug, Clone)]
pub struct Checked {
    pub local: HostFacts,
    pub findings: Vec<Finding>,
    /// The agent's host (its facts sent, its findings computed here with the same
    /// rules and profile).
    pub peer: Option<Peer>,
    /// Cross-node comparisons, empty without a peer.
    pub cross: Vec<Finding>,
}

/// The bandwidth-delay product from the flags, else the slowest real link speed (not
/// a veth's or a bridge's) and the measured round trip; none without a rate or a
/// round trip.
pub fn choose_bdp(c: &Check, host: &HostFacts, measured_rtt: Option<Duration>) -> Option<Bdp> {
    let (bw, rate_from) = if let Some(b) = c.bandwidth {
        (b, RateFrom::Given)
    } else {
        let f = host
            .ifaces
            .iter()
            // A virtual link's speed (veth says 10 Gbit/s) is no rate to size buffers by.
            .filter_map(|f| f.info.real_speed_mbps().map(|s| (s, &f.info.name)))
            .min()?;
        (
            f64::from(f.0) * 1e6,
            RateFrom::LinkSpeed { iface: f.1.clone() },
        )
    };
    let (rtt, rtt_from) = match (c.rtt, measured_rtt) {
        (Some(r), _) => (r, RttFrom::Given),
        (None, Some(r)) => (r, RttFrom::ControlRoundTrip),
        (None, None) => return None,
    };
    Some(Bdp {
        bits_per_sec: bw,
        rtt,
        rate_from,
        rtt_from,
    })
}

/// Runs the check here and, with a session, on the agent's host at the same time.
///
/// # Errors
/// The agent's part failed (refused, closed, timed out).
pub fn run(
    c: &Check,
    session: Option<&Session>,
    stored: &dyn EvidenceSource,
) -> Result<Checked, EngineError> {
    // Sample both hosts at the same time: the agent's sample runs while ours does.
    let (local, peer) = std::thread::scope(|sc| {
        let remote = session.map(|s| sc.spawn(move || client::ask_peer(s, c.profile, c.sample)));
        let local = facts::gather(&c.ifaces, &c.selection, c.sample);
        let peer = remote.map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(EngineError::Protocol("doctor thread failed".into())))
        });
        (local, peer)
    });
    let peer = peer.transpose()?;
    let rtt = session.and_then(|s| client::control_rtt(s, 5));
    let findings = super::check_host(
        &local,
        &Options {
            profile: c.profile,
            bdp: choose_bdp(c, &local, rtt),
            evidence: stored.evidence(End::Client),
        },
    );
    let peer = peer.map(|p| {
        let opts = Options {
            profile: c.profile,
            bdp: choose_bdp(c, &p.facts, rtt),
            evidence: stored.evidence(End::Agent),
        };
        Peer {
            findings: super::check_host(&p.facts, &opts),
            hostname: p.hostname,
            facts: p.facts,
        }
    });
    let cross = peer
        .as_ref()
        .map(|p| cross::compare(&local, &p.facts, c.profile))
        .unwrap_or_default();
    Ok(Checked {
        local,
        findings,
        peer,
        cross,
    })
}
