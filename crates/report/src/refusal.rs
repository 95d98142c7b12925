//! A refusal in words: why an agent would not do what was asked, with the agent flag
//! or limit that applies and what to do. The protocol carries the typed
//! [`Refusal`]; every place that shows one to people words it here.

use mtuperf_proto::failed::Failed;
use mtuperf_proto::msg::{CpuLimit, Full, PeerAuth, Refusal, CONNECTIONS_LIMIT};
use mtuperf_proto::placement::format_cpu_list as list;

/// `r` in words for people.
pub fn refusal(r: &Refusal) -> String {
    match r {
        Refusal::Busy { active, max, full } => busy(*active, *max, *full),
        Refusal::VersionMismatch { agent, client } => format!(
            "protocol version mismatch: agent speaks {agent}, this client {client}; run the same mtuperf version on both ends"
        ),
        Refusal::NotMtuperf => "not an mtuperf client".into(),
        Refusal::AuthRequired => "the agent requires authentication: pass --key-file (or MTUPERF_KEY_FILE) with the agent's key".into(),
        Refusal::AuthFailed => "authentication failed: the keys differ".into(),
        Refusal::NotAllowed { peer } => {
            format!("address {peer} is not allowed by the agent's --allow list")
        }
        Refusal::Limit {
            limit,
            requested,
            allowed,
        } => beyond_limit(limit, *requested, *allowed),
        Refusal::BadRequest { detail } => format!("bad request: {detail}"),
        Refusal::AgentCpus {
            asked,
            allowed,
            limit,
        } => agent_cpus(asked, allowed, *limit),
        Refusal::TestHooksOff => {
            "bad request: test hooks asked for, but the agent was not started with --test-hooks"
                .into()
        }
        Refusal::UnknownSession => "unknown or expired session cookie".into(),
        Refusal::Timeout { waiting_for } => format!("timed out waiting for {waiting_for}"),
        Refusal::KeyRequired { what } => format!(
            "{what} needs a keyed agent: start every agent with --key-file (the same key)"
        ),
        Refusal::PeerNotAuthenticated { peer, why } => format!(
            "the peer {peer} did not authenticate, so no test traffic was sent to it: {}",
            peer_auth(why)
        ),
    }
}

/// Why a third-party test's peer did not authenticate: its refusal, or the keyed
/// handshake's failure as the client states it.
fn peer_auth(why: &PeerAuth) -> String {
    match why {
        PeerAuth::Refused { refusal: r } => refusal(r),
        PeerAuth::PeerOpen => "authentication: a key was given but the agent does not authenticate; refusing to talk to an unauthenticated agent".into(),
        PeerAuth::PeerProof => "authentication: the agent could not prove it holds the same key (wrong key on one side)".into(),
    }
}

/// A third-party test's peer agent's refusal, as the agent asked passes it on.
pub fn peer_refused(peer: &str, r: &Refusal) -> String {
    format!("the peer agent {peer} refused: {}", refusal(r))
}

/// A failure a result keeps, in words: a refusal as [`refusal`], a peer's refusal as
/// the asked agent's error (as [`crate::error::engine_error`] words it), any other
/// error as its text.
pub fn failed(f: &Failed) -> String {
    match f {
        Failed::Refused { refusal: r } => refusal(r),
        Failed::PeerRefused { peer, refusal } => {
            format!("agent error: {}", peer_refused(peer, refusal))
        }
        Failed::Error { text } => text.clone(),
    }
}

/// The words of [`Refusal::Busy`]: what is full, with the counts when the agent gave
/// them.
fn busy(active: Option<u32>, max: Option<u32>, full: Full) -> String {
    match (full, active, max) {
        (Full::Sessions, Some(active), Some(max)) => format!(
            "agent busy: {active} of {max} sessions in use (agent --max-sessions); try again later"
        ),
        (Full::Sessions, ..) => {
            "agent busy: all sessions in use (agent --max-sessions); try again later".into()
        }
        (Full::Connections, ..) => "agent busy: it holds as many connections as its open-file limit allows (RLIMIT_NOFILE); try again later".into(),
        (Full::Handshakes, ..) => "agent busy: too many connections in handshake (all handshake slots, or this address's share of them, are taken); try again later".into(),
    }
}

/// The words of [`Refusal::Limit`]: the agent flag that sets the limit, or the data
/// connections the agent has room for now.
fn beyond_limit(limit: &str, requested: u64, allowed: u64) -> String {
    if limit == CONNECTIONS_LIMIT {
        return format!(
            "request beyond what the agent can hold now: asked {requested} data connections, {allowed} free (its connection cap comes from its open-file limit, RLIMIT_NOFILE; tests already running hold the rest); try again when they end, or with fewer clients or streams"
        );
    }
    let unit = limit_unit(limit);
    format!(
        "request beyond the agent's limit --{limit}: asked {requested}{unit}, allowed {allowed}{unit}"
    )
}

/// The unit a limit's numbers are in.
fn limit_unit(limit: &str) -> &'static str {
    match limit {
        "max-duration" => " s",
        "max-rate" => " bit/s",
        "max-block" | "path-probe-size" => " B",
        _ => "",
    }
}

/// The words of [`Refusal::AgentCpus`]: the CPUs outside what the agent may pin to,
/// and which limit that is.
fn agent_cpus(asked: &[u32], allowed: &[u32], limit: CpuLimit) -> String {
    if asked.is_empty() {
        return "bad request: --agent-cpu: empty CPU list".into();
    }
    let outside: Vec<u32> = asked
        .iter()
        .copied()
        .filter(|c| !allowed.contains(c))
        .collect();
    let limit = match limit {
        CpuLimit::ProcessorSet => "the agent's processor set (serve --cpus)",
        CpuLimit::Online => "the agent host's online CPUs",
    };
    format!(
        "bad request: --agent-cpu {}: CPU {} is outside {limit} {}; ask for CPUs in {}",
        list(asked),
        list(&outside),
        list(allowed),
        list(allowed)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every variant (and each busy and limit case) in the words the protocol crate's
    /// `Display` gave them before they moved here.
    #[test]
    fn every_refusal_reads_as_before() {
        let busy = |active, max, full| Refusal::Busy { active, max, full };
        let limit = |l: &str, requested, allowed| Refusal::Limit {
            limit: l.into(),
            requested,
            allowed,
        };
        let table: Vec<(Refusal, &str)> = vec![
            (busy(Some(3), Some(3), Full::Sessions), "agent busy: 3 of 3 sessions in use (agent --max-sessions); try again later"),
            (busy(None, None, Full::Sessions), "agent busy: all sessions in use (agent --max-sessions); try again later"),
            (busy(Some(1), None, Full::Sessions), "agent busy: all sessions in use (agent --max-sessions); try again later"),
            (busy(Some(3), Some(3), Full::Connections), "agent busy: it holds as many connections as its open-file limit allows (RLIMIT_NOFILE); try again later"),
            (busy(None, None, Full::Handshakes), "agent busy: too many connections in handshake (all handshake slots, or this address's share of them, are taken); try again later"),
            (Refusal::VersionMismatch { agent: 4, client: 5 }, "protocol version mismatch: agent speaks 4, this client 5; run the same mtuperf version on both ends"),
            (Refusal::NotMtuperf, "not an mtuperf client"),
            (Refusal::AuthRequired, "the agent requires authentication: pass --key-file (or MTUPERF_KEY_FILE) with the agent's key"),
            (Refusal::AuthFailed, "authentication failed: the keys differ"),
            (Refusal::NotAllowed { peer: "10.0.0.9".into() }, "address 10.0.0.9 is not allowed by the agent's --allow list"),
            (limit("max-duration", 30, 10), "request beyond the agent's limit --max-duration: asked 30 s, allowed 10 s"),
            (limit("max-rate", 2_000, 1_000), "request beyond the agent's limit --max-rate: asked 2000 bit/s, allowed 1000 bit/s"),
            (limit("max-block", 9000, 8000), "request beyond the agent's limit --max-block: asked 9000 B, allowed 8000 B"),
            (limit("path-probe-size", 9001, 9000), "request beyond the agent's limit --path-probe-size: asked 9001 B, allowed 9000 B"),
            (limit("max-streams", 8, 4), "request beyond the agent's limit --max-streams: asked 8, allowed 4"),
            (limit(CONNECTIONS_LIMIT, 64, 38), "request beyond what the agent can hold now: asked 64 data connections, 38 free (its connection cap comes from its open-file limit, RLIMIT_NOFILE; tests already running hold the rest); try again when they end, or with fewer clients or streams"),
            (Refusal::BadRequest { detail: "interval of 1 ms is below 10 ms".into() }, "bad request: interval of 1 ms is below 10 ms"),
            (Refusal::AgentCpus { asked: vec![0, 1], allowed: vec![0], limit: CpuLimit::ProcessorSet }, "bad request: --agent-cpu 0-1: CPU 1 is outside the agent's processor set (serve --cpus) 0; ask for CPUs in 0"),
            (Refusal::AgentCpus { asked: vec![2, 5, 6, 7], allowed: vec![0, 1, 2, 3], limit: CpuLimit::Online }, "bad request: --agent-cpu 2,5-7: CPU 5-7 is outside the agent host's online CPUs 0-3; ask for CPUs in 0-3"),
            (Refusal::AgentCpus { asked: vec![], allowed: vec![0], limit: CpuLimit::Online }, "bad request: --agent-cpu: empty CPU list"),
            (Refusal::TestHooksOff, "bad request: test hooks asked for, but the agent was not started with --test-hooks"),
            (Refusal::UnknownSession, "unknown or expired session cookie"),
            (Refusal::Timeout { waiting_for: "the data connections".into() }, "timed out waiting for the data connections"),
            (Refusal::KeyRequired { what: "a third-party (mesh) test".into() }, "a third-party (mesh) test needs a keyed agent: start every agent with --key-file (the same key)"),
            (Refusal::PeerNotAuthenticated { peer: "[fd6d::2]:7878".into(), why: PeerAuth::Refused { refusal: Box::new(Refusal::NotAllowed { peer: "fd6d::1".into() }) } }, "the peer [fd6d::2]:7878 did not authenticate, so no test traffic was sent to it: address fd6d::1 is not allowed by the agent's --allow list"),
            (Refusal::PeerNotAuthenticated { peer: "10.0.0.2:7878".into(), why: PeerAuth::Refused { refusal: Box::new(Refusal::AuthFailed) } }, "the peer 10.0.0.2:7878 did not authenticate, so no test traffic was sent to it: authentication failed: the keys differ"),
            (Refusal::PeerNotAuthenticated { peer: "10.0.0.2:7878".into(), why: PeerAuth::PeerOpen }, "the peer 10.0.0.2:7878 did not authenticate, so no test traffic was sent to it: authentication: a key was given but the agent does not authenticate; refusing to talk to an unauthenticated agent"),
            (Refusal::PeerNotAuthenticated { peer: "10.0.0.2:7878".into(), why: PeerAuth::PeerProof }, "the peer 10.0.0.2:7878 did not authenticate, so no test traffic was sent to it: authentication: the agent could not prove it holds the same key (wrong key on one side)"),
        ];
        for (r, want) in &table {
            assert_eq!(refusal(r), *want, "{r:?}");
        }
    }

    /// A kept failure reads as the error it was read as before it was kept typed: a
    /// refusal as its words, a peer's refusal as the asked agent's error relaying it.
    #[test]
    fn a_kept_failure_reads_as_its_error_did() {
        let busy = Refusal::Busy {
            active: Some(2),
            max: Some(2),
            full: Full::Sessions,
        };
        assert_eq!(
            failed(&Failed::Refused {
                refusal: busy.clone()
            }),
            "agent busy: 2 of 2 sessions in use (agent --max-sessions); try again later"
        );
        assert_eq!(
            failed(&Failed::PeerRefused {
                peer: "10.0.0.3:7878".into(),
                refusal: busy
            }),
            "agent error: the peer agent 10.0.0.3:7878 refused: agent busy: 2 of 2 sessions in use (agent --max-sessions); try again later"
        );
        assert_eq!(
            failed(&Failed::error("protocol error: closed")),
            "protocol error: closed"
        );
    }
}
