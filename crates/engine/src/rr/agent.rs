//! The agent's side of an rr test: checks the request against its limits, opens the
//! UDP responder (or takes the TCP data connections), serves blocks with `workers`
//! threads until the client's Stop, and reports what it served with host snapshots.

use std::net::{IpAddr, TcpStream, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::rr::{RrBidir, RrProto};
use mtuperf_proto::msg::{
    AgentMsg, AgentPathInfo, ClientMsg, Refusal, RrReady, RrRequest, RrServed,
};

use super::bidir_requester;
use super::requester::Transport;
use super::responder::{Serving, Tally};
use crate::config::bounds::{MAX_RR_TIMEOUT, MAX_UDP_PORTS, MIN_RR_TIMEOUT};
use crate::config::RrConfig;
use crate::placement::{Pinning, Watch};
use crate::sampler::Sampler;
use crate::serve::phase::{self as phase_shared, StopReader};
use crate::serve::wire_name;
use crate::serve::{AgentHandler, ServeCtx};
use crate::EngineError;

/// The agent ends a test on its own this long after its planned end if the client's
/// Stop never comes.
const GRACE: Duration = Duration::from_secs(10);

fn bad(ctx: &dyn ServeCtx, detail: String) -> Result<bool, EngineError> {
    ctx.refuse(Refusal::BadRequest { detail })?;
    Ok(false)
}

fn check(ctx: &dyn ServeCtx, req: &RrRequest, workers: u32) -> Result<bool, EngineError> {
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
    if req.hooks.is_some() && !ctx.test_hooks() {
        return ctx.refuse(Refusal::TestHooksOff).map(|()| false);
    }
    if let Err(e) = config.validate(ctx.limits()) {
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

/// Serving threads: the request's, else one per core within the agent's
/// `--max-workers`; one for a single UDP client, which has one request in flight at
/// a time: a second thread would only wait beside the first on the same socket, each
/// answer waking the one that slept longest (the two threads take turns, and each
/// turn starts on a cold stack).
fn workers(ctx: &dyn ServeCtx, req: &RrRequest) -> u32 {
    let cores = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    serving_threads(req, cores, ctx.limits().max_workers)
}

fn serving_threads(req: &RrRequest, cores: u32, max_workers: u32) -> u32 {
    match (req.workers, req.proto, req.clients) {
        (0, RrProto::Udp, 1) => 1,
        (0, _, _) => cores.min(max_workers).max(1),
        (asked, _, _) => asked,
    }
}

pub fn serve(ctx: &dyn ServeCtx, req: &RrRequest) -> Result<(), EngineError> {
    let workers = workers(ctx, req);
    if !check(ctx, req, workers)? || !ctx.reserve_connections(connections(req))? {
        return Ok(());
    }
    let sampler = Sampler::toward(ctx.peer().ip());
    let open = ready(ctx, req, workers, &sampler)?;
    if !phase_shared::await_go(ctx)? {
        return Ok(());
    }
    let (served, tally) = measure(ctx, req, workers, &sampler, open)?;
    report(ctx, req, workers, &tally, &served);
    ctx.control().send(&AgentMsg::RrDone(Box::new(served)))
}

/// The test's transports, opened and announced to the client.
struct Open {
    token: u64,
    /// The UDP responder's socket (None: TCP, `tcp` holds the data connections).
    udp: Option<UdpSocket>,
    tcp: Vec<TcpStream>,
    /// The reverse direction's requester transports (bidir).
    rev: Option<(Vec<Transport>, RrBidir)>,
}

/// Opens the responder (a UDP socket, or the client's TCP data connections) and the
/// reverse direction's requester (bidir), telling the client the port and token.
fn ready(
    ctx: &dyn ServeCtx,
    req: &RrRequest,
    workers: u32,
    sampler: &Sampler,
) -> Result<Open, EngineError> {
    let local_ip = phase_shared::local_ip(ctx);
    let token = u64::from_be_bytes(crate::stamp::random_bytes());
    let udp = udp_responder(ctx, req, local_ip)?;
    let rev_threads = bidir_requester::threads(req.clients);
    let rev_udp = match (&req.bidir, req.proto) {
        (Some(_), RrProto::Udp) => {
            bidir_requester::udp_sockets(local_ip, req.clients, rev_threads)?
        }
        _ => Vec::new(),
    };
    let port = match &udp {
        Some(s) => s
            .local_addr()
            .map_err(|e| EngineError::io("udp local address", e))?
            .port(),
        None => ctx.control().local().map_or(0, |a| a.port()),
    };
    ctx.control().send(&AgentMsg::RrReady(RrReady {
        port,
        token,
        workers,
        path: AgentPathInfo {
            iface: sampler.iface.clone(),
            addr: local_ip.to_string(),
        },
        reverse_ports: bidir_requester::ports(&rev_udp),
    }))?;
    let tcp = if udp.is_none() {
        let conns = ctx.accept_data(req.clients)?;
        ctx.control().send(&AgentMsg::DataReady)?;
        conns
    } else {
        Vec::new()
    };
    let rev = match &req.bidir {
        Some(b) => {
            let rev_tcp = match req.proto {
                RrProto::Tcp => bidir_requester::tcp_connect(
                    ctx.peer().ip(),
                    local_ip,
                    b,
                    req.clients,
                    ctx.handshake_timeout(),
                )?,
                RrProto::Udp => Vec::new(),
            };
            let t = bidir_requester::transports(
                req.proto,
                rev_udp,
                rev_tcp,
                ctx.peer().ip(),
                b,
                rev_threads,
            )?;
            Some((t, *b))
        }
        None => None,
    };
    Ok(Open {
        token,
        udp,
        tcp,
        rev,
    })
}

/// The UDP responder's socket, holding the requests of every client (None: TCP).
fn udp_responder(
    ctx: &dyn ServeCtx,
    req: &RrRequest,
    local_ip: IpAddr,
) -> Result<Option<UdpSocket>, EngineError> {
    if req.proto != RrProto::Udp {
        return Ok(None);
    }
    let s = super::requester::udp_socket(local_ip)?;
    if let Some(w) = super::responder::udp::hold_requests(&s, req.clients) {
        ctx.warn("rr", w);
    }
    let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
    Ok(Some(s))
}

/// Serves blocks with `workers` threads from Go until the client's Stop (and runs
/// the reverse direction); what this end served, and its tally.
fn measure(
    ctx: &dyn ServeCtx,
    req: &RrRequest,
    workers: u32,
    sampler: &Sampler,
    open: Open,
) -> Result<(RrServed, Tally), EngineError> {
    let t0 = Instant::now();
    let before = sampler.snapshot(t0);
    let requester = open
        .rev
        .map(|(t, b)| bidir_requester::Requester::start(t, req, b));
    let mut serving = Serving::new(
        open.token,
        req.block,
        req.request,
        req.hooks.unwrap_or_default(),
    );
    serving.pin = Pinning::new(req.cpus.clone());
    let watch = Watch::start(
        &serving.pin,
        sampler.iface.as_ref().map(|i| i.name.as_str()),
    );
    let shared = Arc::new(serving);
    let max = Duration::from_millis(req.duration_ms.min(ctx.limits().max_duration_ms)) + GRACE;
    let reader = {
        let shared = shared.clone();
        StopReader::then(ctx, max, move || shared.stop.store(true, Ordering::Relaxed))
    };
    let allowed = ctx
        .agent_cpus()
        .map_or_else(mtuperf_sys::affinity::online_cpus, <[u32]>::to_vec);
    let tally = match open.udp {
        Some(sock) => super::responder::udp::serve(
            &sock,
            workers,
            &shared,
            (ctx.peer().ip(), &req.udp_ports),
            req.clients,
            t0 + max,
        ),
        // Steering pins only inside the operator's processor set, when there is one.
        None => super::responder::tcp::serve(open.tcp, workers, &shared, t0 + max, &allowed),
    };
    // The reverse direction ends on its own schedule: its duration, then the drain.
    let drain =
        Duration::from_nanos(req.bidir.map_or(0, |b| b.timeout_ns)).max(Duration::from_secs(1));
    let placement = watch.finish();
    let reverse = requester.map(|r| r.finish(t0 + max + drain));
    let after = sampler.snapshot(t0);
    let wall = t0.elapsed();
    reader.finish(ctx, GRACE)?;
    // The tool's own CPU on this end: the serving threads, and the requester's.
    let mut cpu = tally.cpu;
    if let Some(c) = reverse.as_ref().and_then(|r| r.cpu.as_ref()) {
        cpu.get_or_insert_with(Default::default).add(c);
    }
    let served = RrServed {
        requests: tally.requests,
        responses: tally.responses,
        bytes_sent: tally.bytes_sent,
        rejected: tally.rejected,
        before,
        after,
        iface: sampler.iface.clone(),
        wall_ns: wall.as_nanos() as u64,
        reverse,
        cpu,
        placement: Some(placement),
    };
    Ok((served, tally))
}

/// Counts and logs what this end served.
fn report(ctx: &dyn ServeCtx, req: &RrRequest, workers: u32, tally: &Tally, served: &RrServed) {
    ctx.test_bytes(tally.bytes_sent, tally.requests * u64::from(req.request));
    let wall = Duration::from_nanos(served.wall_ns);
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
}

/// The agent's rr handler.
pub struct RrHandler;

impl AgentHandler for RrHandler {
    type Request = RrRequest;
    fn request(msg: &ClientMsg) -> Option<&RrRequest> {
        match msg {
            ClientMsg::Rr(req) => Some(req),
            _ => None,
        }
    }

    fn serve(&self, ctx: &dyn ServeCtx, req: &RrRequest) -> Result<(), EngineError> {
        serve(ctx, req)
    }
}

#[cfg(test)]
mod tests {
    use mtuperf_proto::msg::rr::RrProto;
    use mtuperf_proto::msg::RrRequest;

    use super::serving_threads;

    fn req(proto: RrProto, clients: u32, workers: u32) -> RrRequest {
        RrRequest {
            proto,
            block: 8192,
            request: 128,
            workers,
            clients,
            duration_ms: 1000,
            rate: None,
            udp_ports: vec![40_000],
            hooks: None,
            bidir: None,
            cpus: None,
        }
    }

    /// One UDP client is served by one thread; more clients, or TCP, by one per core
    /// within `--max-workers`; a count the client asked for is kept.
    #[test]
    fn a_single_udp_client_gets_one_serving_thread_unless_it_asks_for_more() {
        assert_eq!(serving_threads(&req(RrProto::Udp, 1, 0), 8, 4), 1);
        assert_eq!(serving_threads(&req(RrProto::Udp, 2, 0), 8, 4), 4);
        assert_eq!(serving_threads(&req(RrProto::Udp, 64, 0), 2, 4), 2);
        assert_eq!(serving_threads(&req(RrProto::Tcp, 1, 0), 2, 4), 2);
        assert_eq!(serving_threads(&req(RrProto::Udp, 1, 3), 2, 4), 3);
    }
}
