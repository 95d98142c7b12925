//! Runs one third-party test on an open, authenticated session with the peer agent,
//! through the same client code as the CLI, and condenses its result for the wire.
//!
//! A result's causes go as the client typed them (a client's `interrupted` is
//! `!interrupted_by.is_empty()`), fitted to what the receiver's size check allows.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use mtuperf_proto::interrupt;
use mtuperf_proto::msg::mesh::{
    DirSummary, HopSummary, PathSummary, RrLoad, RrLoadSummary, RrSummary, StreamSummary,
    ThirdPartyRequest, ThirdPartyResult, ThirdPartyTest, MAX_LOAD_ERRORS,
};
use mtuperf_proto::msg::rr::RrReverse;

use crate::client::Session;
use crate::config::{PathConfig, RrConfig, StreamConfig};
use crate::path::{DirResult, PathResult};
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
        ThirdPartyTest::Rr { rr } => {
            let r = crate::rr::client::run(session, &load_config(&rr), stop, &crate::rr::Quiet)?;
            Ok(ThirdPartyResult::Rr(summarize_rr(&rr, &r)))
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
                interrupted_by: interrupt::fit(&r.interrupted_by),
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
                interrupted_by: interrupt::fit(&r.interrupted_by),
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

/// The block test as evidence for the orchestrator: A's counts and percentiles, and
/// the fragments B's host created while it served A.
pub fn summarize_rr(rr: &RrLoad, r: &crate::rr::RrResult) -> RrSummary {
    let c = &r.client;
    let snmp = |s: &mtuperf_proto::host::HostSnapshot| s.snmp;
    let fragments = match (snmp(&r.agent.before), snmp(&r.agent.after)) {
        (Some(b), Some(a)) => Some(a.delta(&b).ip_frag_creates),
        _ => None,
    };
    RrSummary {
        proto: rr.proto,
        block: rr.block,
        request: rr.request,
        rate: rr.rate,
        timeout_ms: rr.timeout_ms,
        counts: c.counts,
        unanswered: c.unanswered,
        p50_ns: c.latency.p50,
        p99_ns: c.latency.p99,
        p999_ns: c.latency.p999,
        max_ns: c.latency.max,
        wall_ns: c.wall_ns,
        served: r.agent.responses,
        fragments,
        interrupted_by: interrupt::fit(&r.interrupted_by),
    }
}

fn dir(d: &DirResult, mtu: u32) -> DirSummary {
    DirSummary {
        largest_ok: d.largest_ok,
        mtu,
        stop: d.limit.stop(),
        icmp_from: d.limit.icmp_from().map(|a| a.to_string()),
        probes: d.probes,
        lost: d.lost,
        rtt_us: d.waited.rtt_us,
        wait_us: d.waited.wait_us,
    }
}

/// The path run as evidence for the orchestrator's diagnosis.
pub fn summarize_path(r: &PathResult) -> PathSummary {
    PathSummary {
        forward: dir(&r.forward, r.forward_mtu),
        reverse: dir(&r.reverse, r.reverse_mtu),
        local_mtu: r.local.mtu,
        peer_mtu: r.agent_path.iface.as_ref().map(|i| i.mtu),
        same_segment: r.local.same_segment,
        first_router: r.first_router.map(|a| a.to_string()),
        vanish_after: r.black_hole_hop.as_ref().map(|b| HopSummary {
            ttl: b.last_ttl,
            addr: b.last_addr.map(|a| a.to_string()),
        }),
        elapsed_ms: r.elapsed_ms,
    }
}
