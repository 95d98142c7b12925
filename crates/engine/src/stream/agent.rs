//! The agent's side of a stream test.

use std::net::TcpStream;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{
    AgentMsg, AgentPathInfo, ClientMsg, EndReport, StreamReady, StreamRequest,
};

use super::phase::{self, DataConn, Phase, END_GRACE, IDLE};
use crate::config::StreamConfig;
use crate::payload::incompressible;
use crate::placement::{Pinning, Watch};
use crate::sampler::Sampler;
use crate::serve::phase::{self as phase_shared, StopReader};
use crate::serve::wire_name;
use crate::serve::{AgentHandler, ServeCtx};
use crate::EngineError;

fn check_limits(ctx: &dyn ServeCtx, req: &StreamRequest) -> Result<bool, EngineError> {
    match StreamConfig::from_request(req).validate(ctx.limits()) {
        Ok(()) => ctx.check_cpus(req.cpus.as_deref()),
        Err(e) => ctx.refuse(e.into()).map(|()| false),
    }
}

pub fn serve(ctx: &dyn ServeCtx, req: &StreamRequest) -> Result<(), EngineError> {
    if !check_limits(ctx, req)? || !ctx.reserve_connections(req.connections())? {
        return Ok(());
    }
    let sampler = Sampler::toward(ctx.peer().ip());
    let socks = ready(ctx, req, &sampler)?;
    if !phase_shared::await_go(ctx)? {
        return Ok(());
    }
    let end = measure(ctx, req, &sampler, socks)?;
    report(ctx, req, end)
}

/// Tells the client the agent is ready, takes the test's data connections and says
/// they are all here.
fn ready(
    ctx: &dyn ServeCtx,
    req: &StreamRequest,
    sampler: &Sampler,
) -> Result<Vec<TcpStream>, EngineError> {
    let n = req.connections();
    ctx.control().send(&AgentMsg::StreamReady(StreamReady {
        path: AgentPathInfo {
            iface: sampler.iface.clone(),
            addr: ctx
                .control()
                .local()
                .map(|a| a.ip().to_string())
                .unwrap_or_default(),
        },
        connections: n,
    }))?;
    let socks = ctx.accept_data(n)?;
    for s in &socks {
        phase::socket_options(&socket2::SockRef::from(s), req);
        let _ = s.set_write_timeout(Some(IDLE));
    }
    ctx.control().send(&AgentMsg::DataReady)?;
    Ok(socks)
}

/// Runs this end's half of the test from Go until the client's Stop (or the planned
/// end), relaying live intervals; this end's report.
fn measure(
    ctx: &dyn ServeCtx,
    req: &StreamRequest,
    sampler: &Sampler,
    socks: Vec<TcpStream>,
) -> Result<EndReport, EngineError> {
    let t0 = Instant::now();
    let max = phase_shared::max_duration(ctx);
    let before = sampler.snapshot(t0);
    let stop = Arc::new(AtomicBool::new(false));
    // The client sends Stop when Ctrl-C is pressed and, in any case, once its own side
    // is finished: that Stop also ends this reader, so no thread outlives the test.
    let reader = StopReader::spawn(ctx, max + IDLE, stop.clone());
    let conns: Vec<DataConn> = socks
        .into_iter()
        .enumerate()
        .map(|(i, sock)| DataConn {
            index: i as u32,
            sock,
            sending: !req.client_sends_on(i as u32),
        })
        .collect();
    let payload = incompressible(req.block as usize, 0x6d74_7570_6572_6601);
    let end = t0 + phase_shared::planned(req.limit, max);
    // The limit bounds what the client may send; what it sent before the limit is
    // still drained (bounded by the same grace as any test's end), so a run ended at
    // the limit balances its bytes.
    let mut phase = Phase::new(
        req,
        conns,
        &payload,
        end,
        t0 + max + END_GRACE,
        true,
        "the client",
    );
    let pin = Pinning::new(req.cpus.clone());
    phase.pin = Some(pin.clone());
    let watch = Watch::start(&pin, sampler.iface.as_ref().map(|i| i.name.as_str()));
    let control = ctx.control().clone();
    // A client that takes no live interval within the send timeout gets no more: the
    // ticker also watches the data threads and must not block on it.
    let mut live = true;
    let (conns, intervals) = phase::run(&phase, t0, &stop, |s| {
        live = live && control.send(&AgentMsg::Interval(*s)).is_ok();
    });
    let placement = watch.finish();
    let after = sampler.snapshot(t0);
    // Wait for the client's end-of-test Stop (bounded), so its reader is gone.
    reader.finish(ctx, IDLE)?;
    let interrupted = conns.iter().any(|c| c.error.is_some());
    Ok(EndReport {
        conns,
        before,
        after,
        iface: sampler.iface.clone(),
        intervals,
        wall_ns: t0.elapsed().as_nanos() as u64,
        interrupted,
        placement: Some(placement),
    })
}

/// Counts and logs what this end moved, and sends its report.
fn report(ctx: &dyn ServeCtx, req: &StreamRequest, end: EndReport) -> Result<(), EngineError> {
    let received: u64 = end
        .conns
        .iter()
        .filter(|c| !c.sending)
        .map(|c| c.bytes)
        .sum();
    let sent: u64 = end
        .conns
        .iter()
        .filter(|c| c.sending)
        .map(|c| c.bytes)
        .sum();
    let wall = Duration::from_nanos(end.wall_ns);
    ctx.test_bytes(sent, received);
    let direction = wire_name(&req.direction);
    ctx.log_fields(
        "stream",
        format!(
            "stream {direction} {} x {} B{}{}: sent {sent} B, received {received} B in {:.2} s",
            req.streams,
            req.block,
            if req.zerocopy { " zero-copy" } else { "" },
            if req.rx_poll_us > 0 { " polled" } else { "" },
            wall.as_secs_f64()
        ),
        serde_json::json!({
            "direction": direction, "streams": req.streams, "block_bytes": req.block,
            "zerocopy": req.zerocopy, "rx_poll_us": req.rx_poll_us,
            "bytes_sent": sent, "bytes_received": received, "wall_s": wall.as_secs_f64(),
        }),
    );
    ctx.control().send(&AgentMsg::StreamDone(Box::new(end)))
}

/// The agent's stream (TCP) handler.
pub struct StreamHandler;

impl AgentHandler for StreamHandler {
    type Request = StreamRequest;
    fn request(msg: &ClientMsg) -> Option<&StreamRequest> {
        match msg {
            ClientMsg::Stream(req) => Some(req),
            _ => None,
        }
    }

    fn serve(&self, ctx: &dyn ServeCtx, req: &StreamRequest) -> Result<(), EngineError> {
        serve(ctx, req)
    }
}
