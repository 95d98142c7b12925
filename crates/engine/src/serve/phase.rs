//! The phases every test's agent side shares: its address toward the client, the
//! client's Go, the reader that waits for the client's end-of-test Stop (bounded),
//! and the planned end within the agent's `--max-duration`.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{ClientMsg, StreamLimit};

use super::ServeCtx;
use crate::flow::Start;
use crate::EngineError;

/// This end's address on the control connection (0.0.0.0 when it has none).
pub fn local_ip(ctx: &dyn ServeCtx) -> IpAddr {
    ctx.control()
        .local()
        .map_or(IpAddr::from([0u8; 4]), |a| a.ip())
}

/// Waits (bounded: twice the handshake timeout) for the client's Go. False: the
/// client sent Stop instead (Ctrl-C before the test started).
pub fn await_go(ctx: &dyn ServeCtx) -> Result<bool, EngineError> {
    let start = ctx
        .control()
        .expect::<Start>(Some(ctx.handshake_timeout() * 2), "go")?;
    Ok(start == Start::Go)
}

/// The agent's `--max-duration`.
pub fn max_duration(ctx: &dyn ServeCtx) -> Duration {
    Duration::from_millis(ctx.limits().max_duration_ms)
}

/// How long a stream test plans to run: its time, within the agent's maximum (a
/// byte-limited test is bounded by the maximum alone).
pub fn planned(limit: StreamLimit, max: Duration) -> Duration {
    match limit {
        StreamLimit::Time { ms } => Duration::from_millis(ms).min(max),
        StreamLimit::Bytes { .. } => max,
    }
}

/// The thread that owns the control connection's input while a test runs: the
/// client's Stop (Ctrl-C, or its side finished) or its going away stops the test.
pub struct StopReader {
    thread: JoinHandle<()>,
}

impl StopReader {
    /// Reads the client's next message (bounded by `within`), then sets `stop`.
    pub fn spawn(ctx: &dyn ServeCtx, within: Duration, stop: Arc<AtomicBool>) -> StopReader {
        StopReader::then(ctx, within, move || stop.store(true, Ordering::Relaxed))
    }

    /// Reads the client's next message (bounded by `within`), then calls `stop`.
    pub fn then(
        ctx: &dyn ServeCtx,
        within: Duration,
        stop: impl FnOnce() + Send + 'static,
    ) -> StopReader {
        let control = ctx.control().clone();
        let thread = thread::spawn(move || {
            let _ = control.recv::<ClientMsg>(Some(within), "stop");
            stop();
        });
        StopReader { thread }
    }

    /// Waits at most `grace` for the client's end-of-test Stop, so no reader outlives
    /// the test; past it, the control connection is shut and the test fails.
    pub fn finish(self, ctx: &dyn ServeCtx, grace: Duration) -> Result<(), EngineError> {
        let until = Instant::now() + grace;
        while !self.thread.is_finished() && Instant::now() < until {
            thread::sleep(Duration::from_millis(5));
        }
        if !self.thread.is_finished() {
            ctx.control().shutdown();
            return Err(EngineError::Timeout {
                what: "the client's end of test".into(),
                secs: grace.as_secs(),
            });
        }
        let _ = self.thread.join();
        Ok(())
    }
}
