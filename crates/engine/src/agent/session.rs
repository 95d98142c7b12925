//! One control session on the agent: a loop of test requests, one handler each.

use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{AgentMsg, ClientMsg, Refusal};

use super::conns::ConnGuard;
use super::registry::{DataConn, Registry};
use super::AgentConfig;
use crate::control::Control;
use crate::EngineError;

/// What a test handler gets: the control connection, the peer, the agent's
/// configuration and limits, and the data connections addressed to this session.
pub struct SessionCtx {
    pub control: Control,
    pub peer: SocketAddr,
    pub config: Arc<AgentConfig>,
    pub(super) registry: Arc<Registry>,
    pub(super) cookie: String,
    pub(super) data_rx: Receiver<DataConn>,
    /// This control connection's share of the agent's connection cap.
    pub(super) _conn: ConnGuard,
    /// The shares of the last test's data connections (released at the next test).
    pub(super) data_conns: Mutex<Vec<ConnGuard>>,
}

impl SessionCtx {
    /// Refuses a request beyond a limit, naming the limit.
    pub fn refuse_limit(
        &self,
        limit: &str,
        requested: u64,
        allowed: u64,
    ) -> Result<(), EngineError> {
        self.control.send(&AgentMsg::Refused(Refusal::Limit {
            limit: limit.into(),
            requested,
            allowed,
        }))
    }

    pub fn refuse(&self, refusal: Refusal) -> Result<(), EngineError> {
        self.control.send(&AgentMsg::Refused(refusal))
    }

    /// Waits for `n` data connections (any order); bounded by the handshake timeout
    /// per connection. Returns them sorted by index. Only while this waits does the
    /// registry take data connections for the session, each Hello once, `n` at most.
    pub fn accept_data(&self, n: u32) -> Result<Vec<TcpStream>, EngineError> {
        let mut guards = match self.data_conns.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        guards.clear();
        // Left over from a test that gave up waiting: never handed to this one.
        while self.data_rx.try_recv().is_ok() {}
        self.registry.open_window(&self.cookie, n);
        let r = self.collect_data(n, &mut guards);
        self.registry.close_window(&self.cookie);
        r
    }

    fn collect_data(
        &self,
        n: u32,
        guards: &mut Vec<ConnGuard>,
    ) -> Result<Vec<TcpStream>, EngineError> {
        let mut got: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
        let deadline = Instant::now() + self.config.handshake_timeout * 2;
        let mut count = 0;
        while count < n {
            let left = deadline.saturating_duration_since(Instant::now());
            let (index, stream, guard) =
                self.data_rx
                    .recv_timeout(left)
                    .map_err(|_| EngineError::Timeout {
                        what: "data connections".into(),
                        secs: (self.config.handshake_timeout * 2).as_secs(),
                    })?;
            if let Some(slot @ None) = got.get_mut(index as usize) {
                *slot = Some(stream);
                guards.push(guard);
                count += 1;
            }
        }
        Ok(got.into_iter().flatten().collect())
    }

    pub fn log(&self, event: &'static str, message: String) {
        self.config.log("info", Some(self.peer), event, message);
    }

    /// [`Self::log`] with the message's figures as named fields (a JSON object).
    pub fn log_fields(&self, event: &'static str, message: String, fields: serde_json::Value) {
        let fields = match fields {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        };
        self.config
            .log_fields("info", Some(self.peer), event, message, fields);
    }
}

// Consumes the session: it ends here.
#[allow(clippy::needless_pass_by_value)]
pub(super) fn run(ctx: SessionCtx, shutdown: &Arc<AtomicBool>) {
    ctx.config
        .log("info", Some(ctx.peer), "session", "session opened".into());
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
                if !matches!(&e, EngineError::Protocol(m) if m.contains("closed")) {
                    ctx.config.log(
                        "warn",
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
            ClientMsg::Stream(_) | ClientMsg::PathOpen(_) | ClientMsg::Rr(_) | ClientMsg::Doctor(_)
        );
        let outcome = match msg {
            ClientMsg::Stream(req) => crate::stream::agent::serve(&ctx, &req),
            ClientMsg::PathOpen(req) => crate::path::agent::serve(&ctx, &req),
            ClientMsg::Rr(req) => crate::rr::agent::serve(&ctx, &req),
            ClientMsg::Doctor(req) => crate::doctor::agent::serve(&ctx, &req),
            ClientMsg::Ping => ctx.control.send(&AgentMsg::Ack),
            // A Stop that arrives after its test ended (a race with the end) is harmless.
            ClientMsg::Stop => Ok(()),
            ClientMsg::Bye => break,
            other => ctx.refuse(Refusal::BadRequest {
                detail: format!("unexpected message {}", message_name(&other)),
            }),
        };
        if let Err(e) = outcome {
            ctx.config.log(
                "warn",
                Some(ctx.peer),
                "test",
                format!("test ended with error: {e}"),
            );
            let _ = ctx.control.send(&AgentMsg::Error {
                message: e.to_string(),
            });
        }
        if test {
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
        ClientMsg::Go => "go",
        ClientMsg::Stop => "stop",
        ClientMsg::Ping => "ping",
        ClientMsg::Bye => "bye",
    }
}
