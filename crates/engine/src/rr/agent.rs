//! The agent's side of an rr test: checks the request against its limits, opens the
//! UDP responder (or takes the TCP data connections), serves blocks with `workers`
//! threads until the client's Stop, and reports what it served with host snapshots.

use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::rr::RrProto;
use mtuperf_proto::msg::{
    AgentMsg, AgentPathInfo, ClientMsg, Refusal, RrReady, RrRequest, RrServed,
};

use super::responder::Serving;
use crate::agent::config::wire_name;
use crate::agent::ctx::SessionCtx;
use crate::config::bounds::{MAX_RR_TIMEOUT, MAX_UDP_PORTS, MIN_RR_TIMEOUT};
use crate::config::RrConfig;
use crate::flow::Start;
use crate::placement::{Pinning, Watch};
use crate::sampler::Sampler;
use crate::EngineError;

/// The agent ends a test on its own this long after its planned end if the client's
/// Stop never comes.
const GRACE: Duration = Duration::from_secs(10);

fn bad(ctx: &SessionCtx, detail: String) -> Result<bool, EngineError> {
    ctx.refuse(Refusal::BadRequest { detail })?;
    Ok(false)
}

fn check(ctx: &SessionCtx, req: &RrRequest, workers: u32) -> Result<bool, EngineError> {
    let config = RrConfig::from_request(req);
    if let Err(e) = config.check_shape() {
        return ctx.refuse(e.into()).map(|()| false);
    }
    if req.proto == RrProto::Udp
        && (req.udp_ports.is_empty() || req.udp_ports.len() > MAX_UDP_PORTS)
    {
        return bad(
            ctx,
            format!("udp needs 1 to {MAX_UDP_PORTS} registered client ports"),
        );
    }
    if let Some(b) = &req.bidir {
        let timeout = Duration::from_nanos(b.timeout_ns);
        if b.port == 0 || timeout < MIN_RR_TIMEOUT || timeout > MAX_RR_TIMEOUT {
            return bad(
                ctx,
                format!("bidir needs the client's responder port (1 to 65535, got {}) and a timeout of 1 ms to 60 s (got {} ns)", b.port, b.timeout_ns),
            );
        }
    }
    if req.hooks.is_some() && !ctx.config.test_hooks {
        return bad(
            ctx,
            "test hooks asked for, but the agent was not started with --test-hooks".into(),
        );
    }
    if let Err(e) = config.validate(&ctx.config.limits) {
        return ctx.refuse(e.into()).map(|()| false);
    }
    Ok(ctx.check_cpus(req.cpus.as_deref())? && workers > 0)
}

/// The TCP connections a test holds on the agent: one data connection per client,
/// and as many again toward the client's responder when the test is bidirectional.
fn connections(req: &RrRequest) -> u32 {
    match (req.proto, req.bidir.is_some()) {
        (RrProto::Udp, _) => 0,
        (RrProto::Tcp, false) => req.clients,
        (RrProto::Tcp, true) => req.clients.saturating_mul(2),
    }
}

pub fn serve(ctx: &SessionCtx, req: &RrRequest) -> Result<(), EngineError> {
    let cores = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let workers = if req.workers == 0 {
        cores.min(ctx.config.limits.max_workers).max(1)
    } else {
        req.workers
    };
    if !check(ctx, req, workers)? || !ctx.reserve_connections(connections(req))? {
        return Ok(());
    }
    let sampler = Sampler::toward(ctx.peer.ip());
    let local_ip = ctx
        .control
        .local()
        .map_or(IpAddr::from([0u8; 4]), |a| a.ip());
    let token = u64::from_be_bytes(crate::stamp::random_bytes());
    let udp = if req.proto == RrProto::Udp {
        let s = super::requester::udp_socket(local_ip)?;
        if let Some(w) = super::responder::udp::hold_requests(&s, req.clients) {
            ctx.config
                .log(crate::agent::LogLevel::Warn, Some(ctx.peer), "rr", w);
        }
        let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
        Some(s)
    } else {
        None
    };
    let rev_threads = super::bidir_requester::threads(req.clients);
    let rev_udp = match (&req.bidir, req.proto) {
        (Some(_), RrProto::Udp) => {
            super::bidir_requester::udp_sockets(local_ip, req.clients, rev_threads)?
        }
        _ => Vec::new(),
    };
    let port = match &udp {
        Some(s) => s
            .local_addr()
            .map_err(|e| EngineError::io("udp local address", e))?
            .port(),
        None => ctx.control.local().map_or(0, |a| a.port()),
    };
    ctx.control.send(&AgentMsg::RrReady(RrReady {
        port,
        token,
        workers,
        path: AgentPathInfo {
            iface: sampler.iface.clone(),
            addr: local_ip.to_string(),
        },
        reverse_ports: super::bidir_requester::ports(&rev_udp),
    }))?;
    let tcp = if udp.is_none() {
        let conns = ctx.accept_data(req.clients)?;
        ctx.control.send(&AgentMsg::DataReady)?;
        conns
    } else {
        Vec::new()
    };
    let rev_tcp = match (&req.bidir, req.proto) {
        (Some(b), RrProto::Tcp) => super::bidir_requester::tcp_connect(
            ctx.peer.ip(),
            local_ip,
            b,
            req.clients,
            ctx.config.handshake_timeout,
        )?,
        _ => Vec::new(),
    };
    let rev = match &req.bidir {
        Some(b) => Some((
            super::bidir_requester::transports(
                req.proto,
                rev_udp,
                rev_tcp,
                ctx.peer.ip(),
                b,
                rev_threads,
            )?,
            *b,
        )),
        None => None,
    };
    if ctx
        .control
        .expect::<Start>(Some(ctx.config.handshake_timeout * 2), "go")?
        == Start::Stop
    {
        return Ok(());
    }
    let t0 = Instant::now();
    let before = sampler.snapshot(t0);
    let requester = rev.map(|(t, b)| super::bidir_requester::Requester::start(t, req, b));
    let mut serving = Serving::new(token, req.block, req.request, req.hooks.unwrap_or_default());
    serving.pin = Pinning::new(req.cpus.clone());
    let watch = Watch::start(
        &serving.pin,
        sampler.iface.as_ref().map(|i| i.name.as_str()),
    );
    let shared = Arc::new(serving);
    let max = Duration::from_millis(req.duration_ms.min(ctx.config.limits.max_duration_ms)) + GRACE;
    let reader = {
        let (control, shared) = (ctx.control.clone(), shared.clone());
        thread::spawn(move || {
            let _ = control.recv::<ClientMsg>(Some(max), "stop");
            shared.stop.store(true, Ordering::Relaxed);
        })
    };
    let allowed = ctx
        .config
        .cpus
        .clone()
        .unwrap_or_else(mtuperf_sys::affinity::online_cpus);
    let tally = match udp {
        Some(sock) => super::responder::udp::serve(
            &sock,
            workers,
            &shared,
            ctx.peer.ip(),
            &req.udp_ports,
            t0 + max,
        ),
        // Steering pins only inside the operator's processor set, when there is one.
        None => super::responder::tcp::serve(tcp, workers, &shared, t0 + max, &allowed),
    };
    // The reverse direction ends on its own schedule: its duration, then the drain.
    let drain =
        Duration::from_nanos(req.bidir.map_or(0, |b| b.timeout_ns)).max(Duration::from_secs(1));
    let placement = watch.finish();
    let reverse = requester.map(|r| r.finish(t0 + max + drain));
    let after = sampler.snapshot(t0);
    let wall = t0.elapsed();
    let wait_until = Instant::now() + GRACE;
    while !reader.is_finished() && Instant::now() < wait_until {
        thread::sleep(Duration::from_millis(5));
    }
    if reader.is_finished() {
        let _ = reader.join();
    } else {
        ctx.control.shutdown();
        return Err(EngineError::Timeout {
            what: "the client's end of test".into(),
            secs: GRACE.as_secs(),
        });
    }
    ctx.config
        .counters
        .test_bytes(tally.bytes_sent, tally.requests * u64::from(req.request));
    let proto = wire_name(&req.proto);
    ctx.log_fields(
        "rr",
        format!(
            "rr {proto} {} B blocks, {} clients, {workers} workers: {} requests, {} responses, {} rejected in {:.2} s",
            req.block, req.clients, tally.requests, tally.responses, tally.rejected, wall.as_secs_f64()
        ),
        serde_json::json!({
            "proto": proto, "block_bytes": req.block, "clients": req.clients,
            "workers": workers, "requests": tally.requests, "responses": tally.responses,
            "rejected": tally.rejected, "wall_s": wall.as_secs_f64(),
        }),
    );
    // The tool's own CPU on this end: the serving threads, and the requester's.
    let mut cpu = tally.cpu;
    if let Some(c) = reverse.as_ref().and_then(|r| r.cpu.as_ref()) {
        cpu.get_or_insert_with(Default::default).add(c);
    }
    ctx.control.send(&AgentMsg::RrDone(Box::new(RrServed {
        requests: tally.requests,
        responses: tally.responses,
        bytes_sent: tally.bytes_sent,
        rejected: tally.rejected,
        before,
        after,
        iface: sampler.iface,
        wall_ns: wall.as_nanos() as u64,
        reverse,
        cpu,
        placement: Some(placement),
    })))
}
