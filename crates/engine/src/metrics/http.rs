//! The `/metrics` listener: a `tiny_http` server on the address the operator gave
//! (never a default one), answering `GET /metrics` and nothing else.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use tiny_http::{Header, Method, Response, Server};

use super::{Metrics, CONTENT_TYPE};
use crate::EngineError;

/// How often an idle listener looks at the shutdown flag.
const POLL: Duration = Duration::from_secs(1);

/// A bound listener, ready to serve.
pub struct Listener {
    server: Server,
}

impl Listener {
    pub fn bind(addr: SocketAddr) -> Result<Listener, EngineError> {
        let server = Server::http(addr).map_err(|e| EngineError::Bind {
            addr,
            source: std::io::Error::other(e.to_string()),
        })?;
        Ok(Listener { server })
    }

    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.server.server_addr().to_ip()
    }

    /// Serves on its own thread until `shutdown` is set.
    pub fn spawn(
        self,
        metrics: Arc<Metrics>,
        shutdown: Arc<AtomicBool>,
    ) -> std::io::Result<JoinHandle<()>> {
        thread::Builder::new()
            .name("mtuperf-metrics".into())
            .spawn(move || self.run(&metrics, &shutdown))
    }

    fn run(self, metrics: &Metrics, shutdown: &AtomicBool) {
        while !shutdown.load(Ordering::Relaxed) {
            let req = match self.server.recv_timeout(POLL) {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(_) => {
                    thread::sleep(Duration::from_millis(100));
                    continue;
                }
            };
            let path = req.url().split('?').next().unwrap_or("");
            let response = match (req.method(), path) {
                (Method::Get | Method::Head, "/metrics") => {
                    let mut r = Response::from_string(metrics.encode());
                    if let Ok(h) = Header::from_bytes("Content-Type", CONTENT_TYPE) {
                        r.add_header(h);
                    }
                    r
                }
                (Method::Get | Method::Head, _) => {
                    Response::from_string("not found: mtuperf serves /metrics only\n")
                        .with_status_code(404)
                }
                _ => Response::from_string("method not allowed\n").with_status_code(405),
            };
            // A client gone before the answer is not the listener's problem.
            let _ = req.respond(response);
        }
    }
}
