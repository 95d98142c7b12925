//! One control session on the agent: a loop of test requests, one handler each.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{AgentMsg, ClientMsg, Refusal};

use super::ctx::SessionCtx;
use crate::EngineError;

// Consumes the session: it ends here.
#[allow(clippy::needless_pass_by_value)]
pub(super) fn run(ctx: SessionCtx, shutdown: &Arc<AtomicBool>) {
    ctx.config.counters.sessions.inc();
    ctx.config.log(
        crate::agent::LogLevel::Info,
        Some(ctx.peer),
        "session",
        "session opened".into(),
    );
    let _ = ctx
        .control
        .socket()
        .set_write_timeout(Some(Duration::from_secs(10)));
    // The idle timeout runs from the end of the last test (or the session's start):
    // one deadline on the whole next request, so neither a frame trickled a byte at a
    // time nor a stream of pings keeps the session slot past it.
    let mut idle_until = Instant::now() + ctx.config.idle_timeout;
    loop {
        if shutdown.load(Ordering::Relaxed) {
            break;
        }
        let msg = match ctx
            .control
            .recv_by::<ClientMsg>(Some(idle_until), "next request")
        {
            Ok(m) => m,
            Err(e) => {
                if !matches!(e, EngineError::Closed { .. }) {
                    ctx.config.log(
                        crate::agent::LogLevel::Warn,
                        Some(ctx.peer),
                        "session",
                        format!("ending session: {e}"),
                    );
                }
                break;
            }
        };
        let test = matches!(
            msg,
            ClientMsg::Stream(_)
                | ClientMsg::PathOpen(_)
                | ClientMsg::Rr(_)
                | ClientMsg::Doctor(_)
                | ClientMsg::UdpStream(_)
                | ClientMsg::ThirdParty(_)
        );
        // Tests and the agent's own watch checks never overlap (see `gate`).
        let gate = ctx.config.gate.clone();
        let _in_test = test.then(|| {
            ctx.config.counters.tests.inc();
            let (guard, overlapped) = gate.enter_test(super::gate::TEST_WAIT);
            if overlapped {
                ctx.log(
                    "watch",
                    "a watch check outlasted its wait; serving the test alongside it".into(),
                );
            }
            guard
        });
        let outcome = match msg {
            ClientMsg::Stream(req) => crate::stream::agent::serve(&ctx, &req),
            ClientMsg::PathOpen(req) => crate::path::agent::serve(&ctx, &req),
            ClientMsg::Rr(req) => crate::rr::agent::serve(&ctx, &req),
            ClientMsg::Doctor(req) => crate::doctor::agent::serve(&ctx, &req),
            ClientMsg::UdpStream(req) => crate::stream::udp::agent::serve(&ctx, &req),
            ClientMsg::Discover(req) => crate::mesh::agent::serve_discover(&ctx, &req),
            ClientMsg::ThirdParty(req) => crate::mesh::agent::serve_third_party(&ctx, &req),
            ClientMsg::Counters(req) => crate::mesh::agent::serve_counters(&ctx, &req),
            ClientMsg::Ping => ctx.control.send(&AgentMsg::Ack),
            // A Stop that arrives after its test ended (a race with the end) is harmless.
            ClientMsg::Stop | ClientMsg::UdpSent(_) => Ok(()),
            ClientMsg::Bye => break,
            other => ctx.refuse(Refusal::BadRequest {
                detail: format!("unexpected message {}", message_name(&other)),
            }),
        };
        if let Err(e) = outcome {
            ctx.config.log(
                crate::agent::LogLevel::Warn,
                Some(ctx.peer),
                "test",
                format!("test ended with error: {e}"),
            );
            let _ = ctx.control.send(&AgentMsg::Error {
                message: e.to_string(),
            });
        }
        if test {
            ctx.end_test();
            idle_until = Instant::now() + ctx.config.idle_timeout;
        }
    }
    ctx.registry.release(&ctx.cookie);
    ctx.control.shutdown();
}

fn message_name(m: &ClientMsg) -> &'static str {
    match m {
        ClientMsg::Hello(_) => "hello",
        ClientMsg::Auth { .. } => "auth",
        ClientMsg::Stream(_) => "stream",
        ClientMsg::Rr(_) => "rr",
        ClientMsg::PathOpen(_) => "path_open",
        ClientMsg::PathReverseProbe(_) => "path_reverse_probe",
        ClientMsg::Doctor(_) => "doctor",
        ClientMsg::UdpStream(_) => "udp_stream",
        ClientMsg::UdpSent(_) => "udp_sent",
        ClientMsg::Discover(_) => "discover",
        ClientMsg::ThirdParty(_) => "third_party",
        ClientMsg::Counters(_) => "counters",
        ClientMsg::Go => "go",
        ClientMsg::Stop => "stop",
        ClientMsg::Ping => "ping",
        ClientMsg::Bye => "bye",
    }
}
