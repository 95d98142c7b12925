//! One control session on the agent: a loop of requests, each served by the handler
//! registered for it (`handlers`); the session's own messages (Ping, Stop, Bye) are
//! answered here, anything else is refused by name.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{AgentMsg, ClientMsg};

use super::ctx::SessionCtx;
use super::gate::TestGuard;
use crate::serve::{unexpected, Handlers, Route, ServeCtx};
use crate::EngineError;

/// What the loop does after one message.
enum Next {
    Continue,
    /// A test ended: the idle timeout runs again from now.
    TestEnded,
    End,
}

// Consumes the session: it ends here.
#[allow(clippy::needless_pass_by_value)]
pub(super) fn run(ctx: SessionCtx, handlers: &Handlers, shutdown: &Arc<AtomicBool>) {
    ctx.config.counters.sessions.inc();
    ctx.log("session", "session opened".into());
    let _ = ctx
        .control
        .socket()
        .set_write_timeout(Some(Duration::from_secs(10)));
    // The idle timeout runs from the end of the last test (or the session's start):
    // one deadline on the whole next request, so neither a frame trickled a byte at a
    // time nor a stream of pings keeps the session slot past it.
    let mut idle_until = Instant::now() + ctx.config.idle_timeout;
    while !shutdown.load(Ordering::Relaxed) {
        let msg = match ctx
            .control
            .recv_by::<ClientMsg>(Some(idle_until), "next request")
        {
            Ok(m) => m,
            Err(e) => {
                if !matches!(e, EngineError::Closed { .. }) {
                    ctx.warn("session", format!("ending session: {e}"));
                }
                break;
            }
        };
        match dispatch(&ctx, handlers, &msg) {
            Next::Continue => {}
            Next::TestEnded => idle_until = Instant::now() + ctx.config.idle_timeout,
            Next::End => break,
        }
    }
    ctx.registry.release(&ctx.cookie);
    ctx.control.shutdown();
}

/// Serves one message: through its registered handler, or as one of the session's
/// own, or refused by name.
fn dispatch(ctx: &SessionCtx, handlers: &Handlers, msg: &ClientMsg) -> Next {
    let outcome = match (handlers.find(msg), msg) {
        (Some(route), _) => return serve(ctx, route, msg),
        (None, ClientMsg::Ping) => ctx.control.send(&AgentMsg::Ack),
        // A Stop that arrives after its test ended (a race with the end) is harmless.
        (None, ClientMsg::Stop | ClientMsg::UdpSent(_)) => Ok(()),
        (None, ClientMsg::Bye) => return Next::End,
        (None, other) => ctx.refuse_bad(unexpected(other)),
    };
    report_error(ctx, outcome);
    Next::Continue
}

/// Serves one request through its handler; a test is counted, gated against the
/// agent's own watch checks, and its connections released when it ends.
fn serve(ctx: &SessionCtx, route: &dyn Route, msg: &ClientMsg) -> Next {
    if !route.is_test() {
        report_error(ctx, route.serve(ctx, msg));
        return Next::Continue;
    }
    let _in_test = enter_test(ctx);
    report_error(ctx, route.serve(ctx, msg));
    ctx.end_test();
    Next::TestEnded
}

/// Tests and the agent's own watch checks never overlap (see `gate`).
fn enter_test(ctx: &SessionCtx) -> TestGuard<'_> {
    ctx.config.counters.tests.inc();
    let (guard, overlapped) = ctx.config.gate.enter_test(super::gate::TEST_WAIT);
    if overlapped {
        ctx.log(
            "watch",
            "a watch check outlasted its wait; serving the test alongside it".into(),
        );
    }
    guard
}

/// A handler's failure ends its test: logged, and sent to the client.
fn report_error(ctx: &SessionCtx, outcome: Result<(), EngineError>) {
    if let Err(e) = outcome {
        ctx.warn("test", format!("test ended with error: {e}"));
        let _ = ctx.control.send(&AgentMsg::Error {
            message: e.to_string(),
        });
    }
}
