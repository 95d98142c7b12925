//! The agent's side of an rr test: checks the request against its limits, opens the
//! UDP responder (or takes the TCP data connections), serves blocks with `workers`
//! threads until the client's Stop, and reports what it served with host snapshots.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::rr::{RrHooks, RrProto};
use mtuperf_proto::msg::{
    AgentMsg, AgentPathInfo, ClientMsg, Refusal, RrReady, RrRequest, RrServed,
};

use super::wire::{MAX_REQUEST, MAX_UDP_BLOCK};
use crate::agent::SessionCtx;
use crate::sampler::Sampler;
use crate::EngineError;

/// The agent ends a test on its own this long after its planned end if the client's
/// Stop never comes.
const GRACE: Duration = Duration::from_secs(10);
/// Most UDP source ports a client may register.
const MAX_UDP_PORTS: usize = 256;

/// What every serving thread shares.
pub(super) struct Serving {
    pub token: u64,
    pub block: u32,
    pub request: u32,
    pub t0: Instant,
    pub stop: AtomicBool,
    pub hooks: RrHooks,
    /// Responses sent so far, across workers (numbers responses for the corrupt hook).
    pub responses: AtomicU64,
}

/// Per-worker tallies, summed at the end.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Tally {
    pub requests: u64,
    pub responses: u64,
    pub bytes_sent: u64,
    pub rejected: u64,
}

impl Serving {
    /// Test hook: stalls the calling worker once, `stall_after_ms` into the test.
    pub fn maybe_stall(&self, stalled: &mut bool) {
        if *stalled || self.hooks.stall_ms == 0 {
            return;
        }
        if self.t0.elapsed() >= Duration::from_millis(self.hooks.stall_after_ms) {
            *stalled = true;
            thread::sleep(Duration::from_millis(self.hooks.stall_ms));
        }
    }

    /// Test hook: true when this response (1-based, across workers) must be corrupted.
    pub fn next_response_corrupt(&self) -> bool {
        let n = self.responses.fetch_add(1, Ordering::Relaxed) + 1;
        self.hooks.corrupt_response != 0 && n == self.hooks.corrupt_response
    }
}

fn bad(ctx: &SessionCtx, detail: String) -> Result<bool, EngineError> {
    ctx.refuse(Refusal::BadRequest { detail })?;
    Ok(false)
}

fn check(ctx: &SessionCtx, req: &RrRequest, workers: u32) -> Result<bool, EngineError> {
    let l = &ctx.config.limits;
    if req.block == 0 || req.clients == 0 {
        return bad(ctx, "block and clients must be at least 1".into());
    }
    if req.request > MAX_REQUEST {
        return bad(
            ctx,
            format!("request size {} above {MAX_REQUEST} bytes", req.request),
        );
    }
    if req.proto == RrProto::Udp && req.block > MAX_UDP_BLOCK {
        return bad(
            ctx,
            format!("block {} B does not fit one UDP datagram (at most {MAX_UDP_BLOCK} B after the 40-byte header; UDP carries at most 65507 B); use tcp", req.block),
        );
    }
    if req.proto == RrProto::Udp
        && (req.udp_ports.is_empty() || req.udp_ports.len() > MAX_UDP_PORTS)
    {
        return bad(
            ctx,
            format!("udp needs 1 to {MAX_UDP_PORTS} registered client ports"),
        );
    }
    if req.hooks.is_some() && !ctx.config.test_hooks {
        return bad(
            ctx,
            "test hooks asked for, but the agent was not started with --test-hooks".into(),
        );
    }
    let checks: [(&str, u64, u64); 5] = [
        ("max-workers", req.workers.into(), l.max_workers.into()),
        ("max-clients", req.clients.into(), l.max_clients.into()),
        ("max-block", req.block.into(), l.max_block.into()),
        (
            "max-duration",
            req.duration_ms / 1000,
            l.max_duration_ms / 1000,
        ),
        (
            "max-rate",
            req.rate
                .unwrap_or(0)
                .saturating_mul(u64::from(req.block) + 40)
                .saturating_mul(8),
            l.max_rate_bps,
        ),
    ];
    for (flag, asked, allowed) in checks {
        let over = if flag == "max-duration" {
            req.duration_ms > l.max_duration_ms
        } else {
            asked > allowed
        };
        if over {
            ctx.refuse_limit(flag, asked, allowed)?;
            return Ok(false);
        }
    }
    Ok(workers > 0)
}

pub fn serve(ctx: &SessionCtx, req: &RrRequest) -> Result<(), EngineError> {
    let cores = thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let workers = if req.workers == 0 {
        cores.min(ctx.config.limits.max_workers).max(1)
    } else {
        req.workers
    };
    if !check(ctx, req, workers)? {
        return Ok(());
    }
    let sampler = Sampler::toward(ctx.peer.ip());
    let local_ip = ctx
        .control
        .local()
        .map_or(IpAddr::from([0u8; 4]), |a| a.ip());
    let token = u64::from_be_bytes(crate::random_bytes());
    let udp = if req.proto == RrProto::Udp {
        let addr = SocketAddr::new(local_ip, 0);
        let s = UdpSocket::bind(addr).map_err(|source| EngineError::Bind { addr, source })?;
        let r = socket2::SockRef::from(&s);
        let _ = r.set_recv_buffer_size(4 << 20);
        let _ = r.set_send_buffer_size(4 << 20);
        let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
        Some(s)
    } else {
        None
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
    }))?;
    let tcp = if udp.is_none() {
        let conns = ctx.accept_data(req.clients)?;
        ctx.control.send(&AgentMsg::DataReady)?;
        conns
    } else {
        Vec::new()
    };
    match ctx
        .control
        .recv::<ClientMsg>(Some(ctx.config.handshake_timeout * 2), "go")?
    {
        ClientMsg::Go => {}
        ClientMsg::Stop => return Ok(()),
        other => return Err(EngineError::Protocol(format!("expected go, got {other:?}"))),
    }
    let t0 = Instant::now();
    let before = sampler.snapshot(t0);
    let shared = Arc::new(Serving {
        token,
        block: req.block,
        request: req.request,
        t0,
        stop: AtomicBool::new(false),
        hooks: req.hooks.unwrap_or_default(),
        responses: AtomicU64::new(0),
    });
    let max = Duration::from_millis(req.duration_ms.min(ctx.config.limits.max_duration_ms)) + GRACE;
    let reader = {
        let (control, shared) = (ctx.control.clone(), shared.clone());
        thread::spawn(move || {
            let _ = control.recv::<ClientMsg>(Some(max), "stop");
            shared.stop.store(true, Ordering::Relaxed);
        })
    };
    let tally = match udp {
        Some(sock) => super::agent_udp::serve(
            &sock,
            workers,
            &shared,
            ctx.peer.ip(),
            &req.udp_ports,
            t0 + max,
        ),
        None => super::agent_tcp::serve(tcp, workers, &shared, t0 + max),
    };
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
    ctx.log(
        "rr",
        format!(
            "rr {:?} {} B blocks, {} clients, {workers} workers: {} requests, {} responses, {} rejected in {:.2} s",
            req.proto, req.block, req.clients, tally.requests, tally.responses, tally.rejected, wall.as_secs_f64()
        ),
    );
    ctx.control.send(&AgentMsg::RrDone(Box::new(RrServed {
        requests: tally.requests,
        responses: tally.responses,
        bytes_sent: tally.bytes_sent,
        rejected: tally.rejected,
        before,
        after,
        iface: sampler.iface,
        wall_ns: wall.as_nanos() as u64,
    })))
}
