//! The agent's side of a stream test.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{
    AgentMsg, AgentPathInfo, ClientMsg, EndReport, Refusal, StreamLimit, StreamReady,
    StreamRequest, MAX_RX_COALESCE_US, MIN_INTERVAL_MS,
};

use super::data::SendPlan;
use super::phase::{self, DataConn, Phase};
use crate::agent::SessionCtx;
use crate::payload::incompressible;
use crate::sampler::Sampler;
use crate::EngineError;

/// Receivers give up on a sender that sends nothing for this long, and senders on a
/// receiver that takes nothing (the write timeout).
pub const IDLE: Duration = Duration::from_secs(10);

/// A sender still blocked in a write this long after the test's planned end is cut.
/// A blocked write that has copied nothing yet is normal flow control: the kernel
/// wakes a writer only once a good part of the send buffer is free, which at a slow
/// rate takes a while; two seconds of it is a stall, not a slow link.
pub const SEND_GRACE: Duration = Duration::from_secs(2);

/// A receiver still reading this long after the test's planned end is cut: beyond
/// the sender's own grace and the two ends' clock offset (the client starts its
/// clock before the agent sees Go), the last bytes are late by far more than any
/// queue explains.
pub const END_GRACE: Duration = Duration::from_secs(5);

/// After a stop (Ctrl-C, a deadline), senders still blocked this long, and receivers
/// that received nothing in such a span, are cut.
pub const HALT_GRACE: Duration = Duration::from_secs(2);

fn check_limits(ctx: &SessionCtx, req: &StreamRequest) -> Result<bool, EngineError> {
    let l = &ctx.config.limits;
    if req.streams == 0 || req.block == 0 {
        ctx.refuse(Refusal::BadRequest {
            detail: "streams and block must be at least 1".into(),
        })?;
        return Ok(false);
    }
    if req.streams > l.max_streams {
        ctx.refuse_limit("max-streams", req.streams.into(), l.max_streams.into())?;
        return Ok(false);
    }
    if req.block > l.max_block {
        ctx.refuse_limit("max-block", req.block.into(), l.max_block.into())?;
        return Ok(false);
    }
    if req.rx_coalesce_us > MAX_RX_COALESCE_US {
        ctx.refuse(Refusal::BadRequest {
            detail: format!(
                "receive coalescing of {} µs is above the protocol's maximum of {MAX_RX_COALESCE_US} µs",
                req.rx_coalesce_us
            ),
        })?;
        return Ok(false);
    }
    if req.interval_ms != 0 && req.interval_ms < MIN_INTERVAL_MS {
        ctx.refuse(Refusal::BadRequest {
            detail: format!(
                "interval of {} ms is below the protocol's minimum of {MIN_INTERVAL_MS} ms",
                req.interval_ms
            ),
        })?;
        return Ok(false);
    }
    if let StreamLimit::Time { ms } = req.limit {
        if ms > l.max_duration_ms {
            ctx.refuse_limit("max-duration", ms / 1000, l.max_duration_ms / 1000)?;
            return Ok(false);
        }
    }
    Ok(true)
}

pub fn serve(ctx: &SessionCtx, req: &StreamRequest) -> Result<(), EngineError> {
    if !check_limits(ctx, req)? {
        return Ok(());
    }
    let sampler = Sampler::toward(ctx.peer.ip());
    let local = ctx
        .control
        .local()
        .map(|a| a.ip().to_string())
        .unwrap_or_default();
    let n = req.connections();
    ctx.control.send(&AgentMsg::StreamReady(StreamReady {
        path: AgentPathInfo {
            iface: sampler.iface.clone(),
            addr: local,
        },
        connections: n,
    }))?;
    let socks = ctx.accept_data(n)?;
    for s in &socks {
        let r = socket2::SockRef::from(s);
        if let Some(w) = req.window {
            let _ = r.set_send_buffer_size(w as usize);
            let _ = r.set_recv_buffer_size(w as usize);
        }
        if let Some(m) = req.mss {
            let _ = r.set_tcp_mss(m);
        }
        let _ = s.set_write_timeout(Some(IDLE));
    }
    ctx.control.send(&AgentMsg::DataReady)?;
    match ctx
        .control
        .recv::<ClientMsg>(Some(ctx.config.handshake_timeout * 2), "go")?
    {
        ClientMsg::Go => {}
        ClientMsg::Stop => return Ok(()),
        other => {
            return Err(EngineError::Protocol(format!("expected go, got {other:?}")));
        }
    }
    let t0 = Instant::now();
    let max = Duration::from_millis(ctx.config.limits.max_duration_ms);
    let before = sampler.snapshot(t0);
    let stop = Arc::new(AtomicBool::new(false));
    // The client sends Stop when Ctrl-C is pressed and, in any case, once its own side
    // is finished: that Stop also ends this reader, so no thread outlives the test.
    let reader = {
        let (control, stop) = (ctx.control.clone(), stop.clone());
        thread::spawn(move || {
            let _ = control.recv::<ClientMsg>(Some(max + IDLE), "stop");
            stop.store(true, Ordering::Relaxed);
        })
    };
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
    let end = t0
        + match req.limit {
            StreamLimit::Time { ms } => Duration::from_millis(ms).min(max),
            StreamLimit::Bytes { .. } => max,
        };
    let plan = SendPlan {
        deadline: Some(end),
        bytes: match req.limit {
            StreamLimit::Bytes { total } => Some(total / u64::from(req.streams)),
            StreamLimit::Time { .. } => None,
        },
        block: req.block as usize,
        cycle: true,
        peer: "the client",
    };
    let phase = Phase {
        conns,
        data: &payload,
        block: req.block as usize,
        plan,
        idle: IDLE,
        // The limit bounds what the client may send; what it sent before the limit
        // is still drained (bounded by the same grace as any test's end), so a run
        // ended at the limit balances its bytes.
        recv_deadline: t0 + max + END_GRACE,
        interval: Duration::from_millis(if req.interval_ms == 0 {
            1000
        } else {
            req.interval_ms
        }),
        omit: Duration::from_millis(req.omit_ms),
        rx_coalesce: Duration::from_micros(req.rx_coalesce_us.into()),
        cut: phase::Cut {
            send_at: Some(end + SEND_GRACE),
            recv_at: Some(end + END_GRACE),
            after_halt: HALT_GRACE,
        },
        peer: "the client",
    };
    let control = ctx.control.clone();
    // A client that takes no live interval within the send timeout gets no more: the
    // ticker also watches the data threads and must not block on it.
    let mut live = true;
    let (conns, intervals) = phase::run(&phase, t0, &stop, |s| {
        live = live && control.send(&AgentMsg::Interval(*s)).is_ok();
    });
    let after = sampler.snapshot(t0);
    // Wait for the client's end-of-test Stop (bounded), so its reader is gone.
    let wait_until = Instant::now() + IDLE;
    while !reader.is_finished() && Instant::now() < wait_until {
        thread::sleep(Duration::from_millis(5));
    }
    if !reader.is_finished() {
        ctx.control.shutdown();
        return Err(EngineError::Timeout {
            what: "the client's end of test".into(),
            secs: IDLE.as_secs(),
        });
    }
    let _ = reader.join();
    let interrupted = conns.iter().any(|c| c.error.is_some());
    let received: u64 = conns.iter().filter(|c| !c.sending).map(|c| c.bytes).sum();
    let sent: u64 = conns.iter().filter(|c| c.sending).map(|c| c.bytes).sum();
    let wall = t0.elapsed();
    let direction = crate::agent::wire_name(&req.direction);
    ctx.log_fields(
        "stream",
        format!(
            "stream {direction} {} x {} B: sent {sent} B, received {received} B in {:.2} s",
            req.streams,
            req.block,
            wall.as_secs_f64()
        ),
        serde_json::json!({
            "direction": direction, "streams": req.streams, "block_bytes": req.block,
            "bytes_sent": sent, "bytes_received": received, "wall_s": wall.as_secs_f64(),
        }),
    );
    ctx.control.send(&AgentMsg::StreamDone(Box::new(EndReport {
        conns,
        before,
        after,
        iface: sampler.iface,
        intervals,
        wall_ns: wall.as_nanos() as u64,
        interrupted,
    })))
}
