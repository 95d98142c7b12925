//! Runs one third-party test on an open, authenticated session with the peer agent,
//! through the same client code as the CLI, and condenses its result for the wire.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use mtuperf_proto::msg::mesh::{
    DirSummary, PathSummary, RrLoad, RrLoadSummary, RrSummary, StopKind, StreamSummary,
    ThirdPartyRequest, ThirdPartyResult, ThirdPartyTest, MAX_LOAD_ERRORS,
};
use mtuperf_proto::msg::rr::{RrProto, RrReverse};

use crate::client::Session;
use crate::config::{PathConfig, RrConfig, StreamConfig};
use crate::path::{DirResult, Limit, PathResult};
use crate::EngineError;

/// Runs `req` on `session`; `stop` ends a load early (its asker's Stop).
pub fn run(
    session: &Session,
    req: &ThirdPartyRequest,
    stop: &Arc<AtomicBool>,
) -> Result<ThirdPartyResult, EngineError> {
    match req.test {
        ThirdPartyTest::Path => {
            let r = crate::path::run(session, &req.to.to_string(), &PathConfig::default())?;
            Ok(ThirdPartyResult::Path(summarize_path(&r)))
        }
        ThirdPartyTest::Rr { duration_ms } => {
            let cfg = RrConfig {
                proto: RrProto::Tcp,
                block: 64,
                request: 64,
                time: Duration::from_millis(duration_ms),
                threads: Some(1),
                ..RrConfig::default()
            };
            let r = crate::rr::client::run(session, &cfg, stop, &crate::rr::Quiet)?;
            Ok(ThirdPartyResult::Rr(RrSummary {
                transactions: r.client.counts.blocks,
                // The mesh summary keeps plain numbers: 0 with `transactions` 0 means
                // no block answered (no latency), not 0 ns.
                p50_ns: r.client.latency.p50.unwrap_or(0),
                p99_ns: r.client.latency.p99.unwrap_or(0),
                wall_ns: r.client.wall_ns,
                interrupted: interrupted(r.interrupted, r.interrupt_reason),
            }))
        }
        ThirdPartyTest::RrLoad { rr } => {
            let r = crate::rr::client::run(session, &load_config(&rr), stop, &crate::rr::Quiet)?;
            let mut errors = r.client.errors;
            errors.truncate(MAX_LOAD_ERRORS);
            Ok(ThirdPartyResult::RrLoad(Box::new(RrLoadSummary {
                host: r.client_host,
                peer_host: r.agent_host,
                requester: RrReverse {
                    counts: r.client.counts,
                    unanswered: r.client.unanswered,
                    errors,
                    latency: r.client.latency,
                    threads: r.client.threads,
                    wall_ns: r.client.wall_ns,
                    cpu: r.client.cpu,
                },
                before: r.client.before,
                after: r.client.after,
                iface: r.client.iface,
                workers: r.workers,
                served: r.agent,
                interrupted: interrupted(r.interrupted, r.interrupt_reason),
            })))
        }
        ThirdPartyTest::Stream { duration_ms } => {
            let cfg = StreamConfig::timed(128 * 1024, Duration::from_millis(duration_ms));
            let r = crate::stream::client::run(
                session,
                &cfg.params(),
                stop,
                &crate::stream::client::Quiet,
            )?;
            Ok(ThirdPartyResult::Stream(StreamSummary {
                bytes: r
                    .agent
                    .conns
                    .iter()
                    .filter(|c| !c.sending)
                    .map(|c| c.bytes)
                    .sum(),
                wall_ns: r.agent.wall_ns,
                interrupted: interrupted(r.interrupted, r.interrupt_reason),
            }))
        }
    }
}

/// The rr config of a third-party load (one way, no hooks, no pinning).
pub fn load_config(rr: &RrLoad) -> RrConfig {
    RrConfig {
        proto: rr.proto,
        block: rr.block,
        request: rr.request,
        workers: (rr.workers > 0).then_some(rr.workers),
        clients: rr.clients,
        time: Duration::from_millis(rr.duration_ms),
        rate: rr.rate,
        timeout: Duration::from_millis(rr.timeout_ms),
        verify: rr.verify,
        threads: (rr.threads > 0).then_some(rr.threads),
        ..RrConfig::default()
    }
}

fn interrupted(was: bool, why: Option<String>) -> Option<String> {
    was.then(|| why.unwrap_or_else(|| "ended early".into()))
}

fn dir(d: &DirResult, mtu: Option<u32>) -> DirSummary {
    let (stop, icmp_from) = match &d.limit {
        Limit::Top => (StopKind::Top, None),
        Limit::Icmp { from, .. } => (StopKind::Icmp, from.map(|a| a.to_string())),
        Limit::Local { .. } => (StopKind::Local, None),
        Limit::Silent => (StopKind::Silent, None),
    };
    DirSummary {
        largest_ok: d.largest_ok,
        mtu: mtu.unwrap_or(d.largest_ok),
        stop,
        icmp_from,
        probes: d.probes,
        lost: d.lost,
    }
}

pub fn summarize_path(r: &PathResult) -> PathSummary {
    PathSummary {
        forward: dir(&r.forward, r.forward_mtu),
        reverse: dir(&r.reverse, r.reverse_mtu),
        local_mtu: r.local.mtu,
        peer_mtu: r.agent_path.iface.as_ref().map(|i| i.mtu),
        same_segment: r.local.same_segment,
        verdict: serde_json::to_value(&r.verdict)
            .ok()
            .and_then(|v| v.get("kind")?.as_str().map(String::from))
            .unwrap_or_default(),
        verdict_text: r.verdict_text.clone(),
        elapsed_ms: r.elapsed_ms,
    }
}
