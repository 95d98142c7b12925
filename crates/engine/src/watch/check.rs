//! One watch check: resolve the peer's name (again at every check), connect to it as
//! a keyed client, run the path check, then the optional rr probe, on one session,
//! all by the cycle's deadline.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mtuperf_proto::auth::Key;
use mtuperf_proto::failed::Failed;

use super::{Check, RrProbe, WatchConfig};
use crate::client::{self, ConnectOptions, Session};
use crate::config::PathConfig;
use crate::mesh::BlockTest;
use crate::path::{self, LocalView};
use crate::{rr, unix_ms};

/// Checks `peer` by `until`; `cancel` cuts its rr probe short (the cycle's deadline
/// passed, or the agent stops). Only with a key: the session's mutual
/// authentication proves the peer holds it before any probe is sent, so a watch
/// sends test traffic only to agents that completed the keyed handshake (an open or
/// differently keyed agent is an error, not a target).
pub fn check_peer(
    peer: &str,
    cfg: &WatchConfig,
    key: &Key,
    until: Instant,
    cancel: &Arc<AtomicBool>,
) -> Check {
    let started_unix_ms = unix_ms();
    let addr = client::resolve(peer);
    let address = addr
        .as_ref()
        .map_or_else(|_| peer.to_string(), ToString::to_string);
    let network = addr
        .as_ref()
        .ok()
        .and_then(|a| LocalView::toward(a.ip()).ok())
        .map_or_else(|| "unknown".to_string(), |v| v.route.iface);
    let mut check = Check {
        peer: peer.to_string(),
        address: address.clone(),
        network,
        started_unix_ms,
        ended_unix_ms: started_unix_ms,
        path: Err(Failed::error("")),
        rr: None,
    };
    // A silent peer holds the check at most until the cycle's deadline.
    let left = until
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100));
    let defaults = ConnectOptions::default();
    let opts = ConnectOptions {
        key: Some(key.clone()),
        connect_timeout: defaults.connect_timeout.min(left),
        reply_timeout: defaults.reply_timeout.min(left),
        ..defaults
    };
    let session = match addr.and_then(|a| Session::connect(&a.to_string(), &opts)) {
        Ok(s) => s,
        Err(e) => {
            check.path = Err(e.failed());
            check.ended_unix_ms = unix_ms();
            return check;
        }
    };
    check.path =
        path::run(&session, &address, &PathConfig { expect: cfg.expect }).map_err(|e| e.failed());
    if let (Some(time), Ok(_)) = (cfg.rr, &check.path) {
        check.rr = Some(rr_probe(&session, time, cfg.rr_rate, cancel));
    }
    session.close();
    check.ended_unix_ms = unix_ms();
    check
}

fn rr_probe(
    session: &Session,
    time: Duration,
    rate: Option<u64>,
    cancel: &Arc<AtomicBool>,
) -> Result<RrProbe, Failed> {
    // Cache Fusion's pattern, as the mesh's block test: UDP, 8 KiB blocks for 128 B
    // requests, one client, lost after 500 ms; closed loop unless a rate is given.
    // One thread on each end bounds its CPU to a core-second per second of probe.
    let params = BlockTest {
        rate,
        ..BlockTest::default()
    }
    .rr_config(time);
    let r = rr::client::run(session, &params, cancel, &rr::Quiet).map_err(|e| e.failed())?;
    Ok(RrProbe::of(r))
}
