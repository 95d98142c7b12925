//! The agent's side of a UDP stream: checks the request against its limits
//! (--max-streams, --max-block, --max-rate, --max-duration), opens one socket per
//! index connected to the client's registered port of that index on the control
//! connection's address (it sends to nothing else), paces its senders at the
//! request's rate (the agent's --max-rate for "max"), and reports both its ends.

use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::udp::{UdpEndReport, UdpSent, UdpStreamReady, UdpStreamRequest};
use mtuperf_proto::msg::{AgentMsg, AgentPathInfo, ClientMsg};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::data::DRAIN;
use super::phase::{self, Conn};
use super::plan::{Live, Plan};
use super::{datagrams_per_index, sockets, IDLE, LIVE_DEFAULT};
use crate::config::UdpStreamConfig;
use crate::control::Control;
use crate::placement::{Pinning, Watch};
use crate::sampler::Sampler;
use crate::serve::phase as phase_shared;
use crate::serve::wire_name;
use crate::serve::{AgentHandler, ServeCtx};
use crate::EngineError;

pub fn serve(ctx: &dyn ServeCtx, req: &UdpStreamRequest) -> Result<(), EngineError> {
    let config = UdpStreamConfig::from_request(req);
    if !admit(ctx, req, &config)? {
        return Ok(());
    }
    let sampler = Sampler::toward(ctx.peer().ip());
    let open = ready(ctx, req, &config, &sampler)?;
    if !phase_shared::await_go(ctx)? {
        return Ok(());
    }
    let rate = open.rate;
    let end = measure(ctx, req, &sampler, open);
    report(ctx, req, rate, end)
}

/// Checks the request against the agent's limits and its own shape. Ok(true): go on.
fn admit(
    ctx: &dyn ServeCtx,
    req: &UdpStreamRequest,
    config: &UdpStreamConfig,
) -> Result<bool, EngineError> {
    if let Err(e) = config.validate(ctx.limits()) {
        return ctx.refuse(e.into()).map(|()| false);
    }
    if !ctx.check_cpus(req.cpus.as_deref())? {
        return Ok(false);
    }
    let n = req.connections();
    if req.ports.len() != n as usize || req.ports.contains(&0) {
        return ctx
            .refuse_bad(format!(
                "udp stream needs the client's port of each of its {n} sockets, got {} ports",
                req.ports.len()
            ))
            .map(|()| false);
    }
    Ok(true)
}

/// The test's sockets, opened and announced to the client.
struct Open {
    conns: Vec<Conn>,
    token: u64,
    rate: u64,
    before: mtuperf_proto::host::HostSnapshot,
}

/// Opens one socket per index connected to the client's port of that index, and
/// tells the client their ports, the token and the paced rate.
fn ready(
    ctx: &dyn ServeCtx,
    req: &UdpStreamRequest,
    config: &UdpStreamConfig,
    sampler: &Sampler,
) -> Result<Open, EngineError> {
    let local = phase_shared::local_ip(ctx);
    let socks = sockets::bind(local, req.connections(), req.window)?;
    sockets::connect(&socks, ctx.peer().ip(), &req.ports)?;
    let ports = sockets::ports(&socks)?;
    // Before Ready: the client sends as soon as it has the ports.
    let conns: Vec<Conn> = phase::conns(socks, |i| !req.client_sends_on(i), req.io, req.block);
    let token = u64::from_be_bytes(crate::stamp::random_bytes());
    let rate = config.paced_rate(ctx.limits());
    // The kernel's counters start before Ready: the client may send its first
    // datagrams as soon as it knows the ports, and the kernel reassembles them
    // (ReasmOKs) before this thread would read its counters after Go. The snapshot's
    // own time is ~0, as t0's would be.
    let before = sampler.snapshot(Instant::now());
    ctx.control()
        .send(&AgentMsg::UdpStreamReady(UdpStreamReady {
            path: AgentPathInfo {
                iface: sampler.iface.clone(),
                addr: local.to_string(),
            },
            ports,
            token,
            rate_bps: rate,
        }))?;
    Ok(Open {
        conns,
        token,
        rate,
        before,
    })
}

/// Runs this end's senders and receivers from Go to the planned end (or the client's
/// Stop), relaying live intervals and what the senders sent; this end's report.
fn measure(
    ctx: &dyn ServeCtx,
    req: &UdpStreamRequest,
    sampler: &Sampler,
    open: Open,
) -> UdpEndReport {
    let t0 = Instant::now();
    let planned = phase_shared::planned(req.limit, phase_shared::max_duration(ctx));
    let plan = Plan {
        token: open.token,
        block: req.block,
        rate_bps: open.rate / u64::from(req.streams),
        count: datagrams_per_index(req),
        t0,
        end: t0 + planned,
        hard_end: t0 + planned + DRAIN + IDLE,
        halt: AtomicBool::new(false),
        abort: AtomicBool::new(false),
        pin: Pinning::new(req.cpus.clone()),
    };
    let watch = Watch::start(&plan.pin, sampler.iface.as_ref().map(|i| i.name.as_str()));
    let lives: Vec<Live> = (0..req.connections()).map(|_| Live::new()).collect();
    let has_senders = open.conns.iter().any(|c| c.sending);
    let every = match req.interval_ms {
        0 => LIVE_DEFAULT,
        ms => Duration::from_millis(ms),
    };
    let reader_done = AtomicBool::new(false);
    let control = ctx.control().clone();
    let (conns, intervals) = thread::scope(|s| {
        s.spawn(|| read_client(&control, req, &plan, &lives, &reader_done));
        let out = phase::run(
            open.conns,
            &plan,
            &lives,
            sampler,
            every,
            |i| {
                let _ = ctx.control().send(&AgentMsg::UdpInterval(Box::new(*i)));
            },
            |sent| {
                if has_senders {
                    let _ = ctx.control().send(&AgentMsg::UdpSent(UdpSent { sent }));
                }
            },
        );
        // Wait (bounded) for the client's end-of-test Stop.
        let until = Instant::now() + IDLE;
        while !reader_done.load(Relaxed) && Instant::now() < until {
            thread::sleep(Duration::from_millis(5));
        }
        if !reader_done.load(Relaxed) {
            ctx.control().shutdown();
        }
        out
    });
    let placement = watch.finish();
    let interrupted = conns.iter().any(|c| c.error.is_some());
    UdpEndReport {
        conns,
        before: open.before,
        after: sampler.snapshot(t0),
        iface: sampler.iface.clone(),
        intervals,
        wall_ns: t0.elapsed().as_nanos() as u64,
        interrupted,
        placement: Some(placement),
    }
}

/// The client's UdpSent gives our receivers their counts; its Stop (Ctrl-C, or its
/// side finished) halts our senders and ends this reader.
fn read_client(
    control: &Control,
    req: &UdpStreamRequest,
    plan: &Plan,
    lives: &[Live],
    reader_done: &AtomicBool,
) {
    loop {
        match control.recv_by::<ClientMsg>(Some(plan.hard_end + IDLE), "stop") {
            Ok(ClientMsg::UdpSent(sent)) => {
                for (i, c) in sent.sent.iter().enumerate() {
                    if req.client_sends_on(i as u32) {
                        if let Some(l) = lives.get(i) {
                            l.expected.store(*c, Relaxed);
                        }
                    }
                }
            }
            Ok(ClientMsg::Stop) => {
                plan.halt.store(true, Relaxed);
                break;
            }
            Ok(_) | Err(_) => {
                plan.halt.store(true, Relaxed);
                plan.abort.store(true, Relaxed);
                break;
            }
        }
    }
    reader_done.store(true, Relaxed);
}

/// Logs what this end moved, and sends its report.
fn report(
    ctx: &dyn ServeCtx,
    req: &UdpStreamRequest,
    rate: u64,
    end: UdpEndReport,
) -> Result<(), EngineError> {
    let wall = Duration::from_nanos(end.wall_ns);
    let sent: u64 = end.conns.iter().map(|c| c.sent).sum();
    let received: u64 = end.conns.iter().map(|c| c.received).sum();
    let direction = wire_name(&req.direction);
    ctx.log_fields(
        "udp_stream",
        format!(
            "udp stream {direction} {} x {} B at {rate} bit/s: sent {sent}, received {received} datagrams in {:.2} s",
            req.streams,
            req.block,
            wall.as_secs_f64()
        ),
        serde_json::json!({
            "direction": direction, "streams": req.streams, "block_bytes": req.block,
            "rate_bps": rate, "datagrams_sent": sent, "datagrams_received": received,
            "wall_s": wall.as_secs_f64(),
        }),
    );
    ctx.control().send(&AgentMsg::UdpStreamDone(Box::new(end)))
}

/// The agent's UDP stream handler.
pub struct UdpStreamHandler;

impl AgentHandler for UdpStreamHandler {
    type Request = UdpStreamRequest;
    fn request(msg: &ClientMsg) -> Option<&UdpStreamRequest> {
        match msg {
            ClientMsg::UdpStream(req) => Some(req),
            _ => None,
        }
    }

    fn serve(&self, ctx: &dyn ServeCtx, req: &UdpStreamRequest) -> Result<(), EngineError> {
        serve(ctx, req)
    }
}
