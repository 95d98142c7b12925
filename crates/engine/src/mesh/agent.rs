//! The agent's side of `mesh`: discovery, and third-party tests run from this agent
//! toward another agent as a keyed client.
//!
//! Security: a third-party test is refused unless this agent holds a key; the peer is
//! reached with that key exactly as the CLI would, and test traffic starts only once
//! the peer has proved it holds the same key (mutual authentication). An arbitrary
//! address gets at most a TCP handshake and a Hello, never a probe, so the agent
//! cannot be used to reflect or amplify traffic. The test runs inside the asking
//! session, so it holds one of this agent's session slots, like any test.

use std::io::ErrorKind;
use std::net::{IpAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use mtuperf_proto::msg::mesh::{
    CountersRequest, DiscoverRequest, Discovery, NicCounters, NodeCounters, ThirdPartyRequest,
    ThirdPartyTest, MAX_COUNTER_IFACES, MAX_DISCOVERED_ADDRS,
};
use mtuperf_proto::msg::{AgentMsg, ClientMsg, PeerAuth, Refusal};

use super::third_party;
use crate::client::{ConnectOptions, Session};
use crate::doctor::facts;
use crate::error::AuthFailure;
use crate::said::Said;
use crate::serve::{AgentHandler, LogLevel, ServeCtx};
use crate::EngineError;

pub fn serve_discover(ctx: &dyn ServeCtx, _req: &DiscoverRequest) -> Result<(), EngineError> {
    ctx.log("discover", "mesh discovery".into());
    ctx.control()
        .send(&AgentMsg::Discovery(Box::new(discover())))
}

/// This host's interfaces (doctor's facts of every up non-loopback interface) and
/// addresses.
pub fn discover() -> Discovery {
    let root = std::path::Path::new(mtuperf_sys::netdev::SYS_CLASS_NET);
    let ifaces = facts::up_interfaces_at(root);
    let facts = facts::gather(&ifaces, "every up non-loopback interface", Duration::ZERO);
    let mut addrs = mtuperf_sys::netdev::addresses().unwrap_or_default();
    addrs.retain(|a| ifaces.contains(&a.iface));
    addrs.truncate(MAX_DISCOVERED_ADDRS);
    let mut down = facts::down_interfaces_at(root);
    down.truncate(MAX_DISCOVERED_ADDRS);
    Discovery { facts, addrs, down }
}

/// This host's kernel counters: /proc/net/snmp and each of `ifaces` (those that
/// cannot be read are listed without counters).
pub fn counters(ifaces: &[String]) -> NodeCounters {
    NodeCounters {
        snmp: mtuperf_sys::snmp::read().ok(),
        nics: ifaces
            .iter()
            .take(MAX_COUNTER_IFACES)
            .map(|i| NicCounters {
                iface: i.clone(),
                counters: mtuperf_sys::netdev::counters(i).ok(),
            })
            .collect(),
    }
}

pub fn serve_counters(ctx: &dyn ServeCtx, req: &CountersRequest) -> Result<(), EngineError> {
    if req.ifaces.len() > MAX_COUNTER_IFACES {
        return ctx.refuse(Refusal::BadRequest {
            detail: format!(
                "{} interfaces asked, at most {MAX_COUNTER_IFACES}",
                req.ifaces.len()
            ),
        });
    }
    ctx.control()
        .send(&AgentMsg::Counters(Box::new(counters(&req.ifaces))))
}

/// Whether `ip` may be a third-party test's peer at all (a unicast address).
fn unicast(ip: IpAddr) -> bool {
    !(ip.is_unspecified() || ip.is_multicast() || matches!(ip, IpAddr::V4(v4) if v4.is_broadcast()))
}

/// Sets `stop` once the asker sends anything (its Stop) or goes away, until `done`.
/// Peeking leaves the message for the session's reader.
fn watch_asker(sock: &TcpStream, done: &AtomicBool, stop: &AtomicBool) {
    let mut b = [0u8; 1];
    while !done.load(Ordering::Relaxed) {
        let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
        match sock.peek(&mut b) {
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) => {}
            _ => {
                stop.store(true, Ordering::Relaxed);
                return;
            }
        }
    }
}

/// What the protocol allows of a load's threads and loss timeout. The coordinator's
/// own flags check both first, so only a client of another make reaches these: they
/// name the request's fields, not a flag.
fn load_bounds(rr: &mtuperf_proto::msg::mesh::RrLoad) -> Result<(), String> {
    use crate::config::bounds::{MAX_RR_TIMEOUT, MAX_THREADS, MIN_RR_TIMEOUT};
    if rr.threads > MAX_THREADS {
        return Err(format!(
            "rr load threads {} above {MAX_THREADS}",
            rr.threads
        ));
    }
    let t = Duration::from_millis(rr.timeout_ms);
    if !(MIN_RR_TIMEOUT..=MAX_RR_TIMEOUT).contains(&t) {
        return Err(format!(
            "rr load timeout {} ms outside 1 ms to 60 s",
            rr.timeout_ms
        ));
    }
    Ok(())
}

/// A third-party test: refused before anything connects when this agent holds no key
/// or the request is beyond what it allows; else the peer is reached with the key,
/// the test runs (its asker watched for a Stop), and the asker gets its result.
pub fn serve_third_party(ctx: &dyn ServeCtx, req: &ThirdPartyRequest) -> Result<(), EngineError> {
    let Some(key) = ctx.key().cloned() else {
        ctx.warn(
            "third_party",
            format!(
                "refused a third-party {} test toward {}: this agent holds no key",
                req.test.name(),
                req.to
            ),
        );
        return ctx.refuse(Refusal::KeyRequired {
            what: "a third-party (mesh) test".into(),
        });
    };
    if let Some(refusal) = refusal(ctx, req) {
        return ctx.refuse(refusal);
    }
    log_asked(ctx, req);
    let Some(session) = connect_peer(ctx, req, key)? else {
        return Ok(());
    };
    let result = run_watched(ctx, &session, req);
    session.close();
    match result {
        Ok(r) => ctx.control().send(&AgentMsg::ThirdPartyDone(Box::new(r))),
        // Said once: the asker's side adds its own "agent error:".
        Err(e) => ctx.control().send(&failure(req, e)),
    }
}

/// What the asker is told of a third-party test that failed: the peer's refusal typed
/// (the asker's report words it), any other error as this agent's.
fn failure(req: &ThirdPartyRequest, e: EngineError) -> AgentMsg {
    match e {
        EngineError::Refused(r) => peer_refused(req, &r),
        EngineError::Agent(message) => AgentMsg::Error { message },
        e => AgentMsg::Error {
            message: e.to_string(),
        },
    }
}

/// The peer's refusal `r` passed on to the asker, cut to what its decode check takes.
fn peer_refused(req: &ThirdPartyRequest, r: &Refusal) -> AgentMsg {
    AgentMsg::PeerRefused {
        peer: req.to.to_string(),
        refusal: r.fit(),
    }
}

/// The address a third-party test binds to: `from`, or none when unspecified (the
/// routes choose; an `rr --from` asker does not know this host's address toward the
/// peer).
fn bind_addr(req: &ThirdPartyRequest) -> Option<IpAddr> {
    (!req.from.is_unspecified()).then_some(req.from)
}

/// Why `req` is refused before anything connects, by name: a peer that is no unicast
/// agent address, a `from` that is not this host's, or a test beyond this agent's
/// limits (a stream's duration; a load's shape, threads and loss timeout, checked
/// as this host's own requester would be).
fn refusal(ctx: &dyn ServeCtx, req: &ThirdPartyRequest) -> Option<Refusal> {
    if !unicast(req.to.ip()) || req.to.port() == 0 {
        return Some(Refusal::BadRequest {
            detail: format!("{} is not a unicast agent address", req.to),
        });
    }
    if bind_addr(req).is_some() && mtuperf_sys::netdev::iface_with_addr(req.from).is_none() {
        return Some(Refusal::BadRequest {
            detail: format!("{} is not an address of this host", req.from),
        });
    }
    match req.test {
        ThirdPartyTest::Stream { duration_ms } => {
            let allowed = ctx.limits().max_duration_ms;
            (duration_ms > allowed).then(|| Refusal::Limit {
                limit: "max-duration".into(),
                requested: duration_ms.div_ceil(1000),
                allowed: allowed / 1000,
            })
        }
        ThirdPartyTest::RrLoad { rr } | ThirdPartyTest::Rr { rr } => third_party::load_config(&rr)
            .validate(ctx.limits())
            .and_then(|()| load_bounds(&rr).map_err(crate::config::ConfigError::Bad))
            .err()
            .map(Refusal::from),
        ThirdPartyTest::Path => None,
    }
}

/// Logs an admitted third-party test: what, between which addresses, asked by whom.
fn log_asked(ctx: &dyn ServeCtx, req: &ThirdPartyRequest) {
    let test = req.test.name();
    ctx.log_fields(
        "third_party",
        format!(
            "third-party {test} test from {} to {}, asked by {}",
            req.from,
            req.to,
            ctx.peer()
        ),
        serde_json::json!({
            "test": test, "from": req.from.to_string(), "to": req.to.to_string(),
            "asked_by": ctx.peer().to_string(),
        }),
    );
}

/// Opens an authenticated session with the peer agent, with this agent's key. None:
/// the asker has been answered already (the peer did not authenticate, or was busy).
fn connect_peer(
    ctx: &dyn ServeCtx,
    req: &ThirdPartyRequest,
    key: mtuperf_proto::auth::Key,
) -> Result<Option<Session>, EngineError> {
    let opts = ConnectOptions {
        bind: bind_addr(req),
        key: Some(key),
        mss: req.mss,
        ..ConnectOptions::default()
    };
    let e = match Session::connect(&req.to.to_string(), &opts) {
        Ok(s) => return Ok(Some(s)),
        Err(e) => e,
    };
    if let Some(why) = not_authenticated(&e) {
        ctx.log_at(LogLevel::Warn, "third_party", no_test_toward(req, &e));
        ctx.refuse(Refusal::PeerNotAuthenticated {
            peer: req.to.to_string(),
            why,
        })?;
        return Ok(None);
    }
    match e {
        // An rr load's asker does not retry: it is told whose sessions are taken.
        EngineError::Refused(r @ Refusal::Busy { .. })
            if matches!(req.test, ThirdPartyTest::RrLoad { .. }) =>
        {
            ctx.control().send(&peer_refused(req, &r))?;
        }
        // The peer's session slots are all taken: a transient state the orchestrator
        // retries, so it is passed on as this agent's own busy refusal.
        EngineError::Refused(Refusal::Busy { .. }) => {
            ctx.log(
                "third_party",
                format!("peer {} busy; told the asker to retry", req.to),
            );
            ctx.refuse(Refusal::Busy {
                active: None,
                max: None,
                full: mtuperf_proto::msg::Full::Sessions,
            })?;
        }
        // Any other refusal is the peer's, logged and passed on as such.
        EngineError::Refused(ref r) => {
            ctx.log_at(LogLevel::Warn, "third_party", no_test_toward(req, &e));
            ctx.control().send(&peer_refused(req, r))?;
        }
        e => return Err(e),
    }
    Ok(None)
}

/// The agent's log line for a test not run because the peer answered `e`: a refusal
/// typed, which the log function words.
fn no_test_toward(req: &ThirdPartyRequest, e: &EngineError) -> Said {
    Said::Failed {
        text: format!("no test toward {}: ", req.to),
        failed: e.failed(),
    }
}

/// Why the peer did not complete the keyed handshake, when `e` says it did not.
fn not_authenticated(e: &EngineError) -> Option<PeerAuth> {
    match e {
        EngineError::Auth(AuthFailure::AgentOpen) => Some(PeerAuth::PeerOpen),
        EngineError::Auth(AuthFailure::AgentProof) => Some(PeerAuth::PeerProof),
        EngineError::Refused(
            r @ (Refusal::AuthFailed | Refusal::AuthRequired | Refusal::NotAllowed { .. }),
        ) => Some(PeerAuth::Refused {
            refusal: Box::new(r.fit()),
        }),
        _ => None,
    }
}

/// Runs the test on `session`. The asker's Stop (Ctrl-C) or its going away ends a
/// load early: nothing else reads the control connection while the test runs, so a
/// watcher peeks at it.
fn run_watched(
    ctx: &dyn ServeCtx,
    session: &Session,
    req: &ThirdPartyRequest,
) -> Result<mtuperf_proto::msg::mesh::ThirdPartyResult, EngineError> {
    let stop = Arc::new(AtomicBool::new(false));
    let done = AtomicBool::new(false);
    let asker = ctx.control().socket();
    std::thread::scope(|s| {
        if matches!(
            req.test,
            ThirdPartyTest::RrLoad { .. } | ThirdPartyTest::Rr { .. }
        ) {
            s.spawn(|| watch_asker(asker, &done, &stop));
        }
        let r = third_party::run(session, req, &stop);
        done.store(true, Ordering::Relaxed);
        r
    })
}

/// Mesh discovery: a query, not a test.
pub struct DiscoverHandler;

impl AgentHandler for DiscoverHandler {
    type Request = DiscoverRequest;
    const TEST: bool = false;
    fn request(msg: &ClientMsg) -> Option<&DiscoverRequest> {
        match msg {
            ClientMsg::Discover(req) => Some(req),
            _ => None,
        }
    }

    fn serve(&self, ctx: &dyn ServeCtx, req: &DiscoverRequest) -> Result<(), EngineError> {
        serve_discover(ctx, req)
    }
}

/// A third-party test run from this agent toward another.
pub struct ThirdPartyHandler;

impl AgentHandler for ThirdPartyHandler {
    type Request = ThirdPartyRequest;
    fn request(msg: &ClientMsg) -> Option<&ThirdPartyRequest> {
        match msg {
            ClientMsg::ThirdParty(req) => Some(req),
            _ => None,
        }
    }

    fn serve(&self, ctx: &dyn ServeCtx, req: &ThirdPartyRequest) -> Result<(), EngineError> {
        serve_third_party(ctx, req)
    }
}

/// The agent's kernel counters: a query, not a test.
pub struct CountersHandler;

impl AgentHandler for CountersHandler {
    type Request = CountersRequest;
    const TEST: bool = false;
    fn request(msg: &ClientMsg) -> Option<&CountersRequest> {
        match msg {
            ClientMsg::Counters(req) => Some(req),
            _ => None,
        }
    }

    fn serve(&self, ctx: &dyn ServeCtx, req: &CountersRequest) -> Result<(), EngineError> {
        serve_counters(ctx, req)
    }
}
