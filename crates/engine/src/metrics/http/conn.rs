//! One connection to the metrics listener: read the request head (bounded in size
//! and time), answer it once, then close. Every socket call is non-blocking; the
//! listener's loop calls [`Conn::progress`] when poll(2) says the socket is ready and
//! drops the connection past [`Conn::deadline`].

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Instant;

use nix::poll::PollFlags;

use super::Bounds;
use crate::agent::conns::ConnGuard;

/// Headers a request may carry (a Prometheus scrape sends about six).
const MAX_HEADERS: usize = 32;

/// Bytes read and thrown away once the answer is out, at most: a client that goes on
/// sending past them is closed at once.
const DISCARD: usize = 64 * 1024;

/// What the request asked for, as the answer's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// GET or HEAD of /metrics.
    Metrics {
        head_only: bool,
    },
    NotFound {
        head_only: bool,
    },
    MethodNotAllowed,
    BadRequest,
    /// No complete request head within `Bounds::max_head` bytes.
    HeadTooLarge,
}

/// Why a connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// Answered, and the client closed or the linger ran out.
    Answered,
    /// The client closed before a complete request.
    Gone,
    /// No complete request head by the head deadline.
    SlowHead,
    /// The client did not take the whole answer by the write deadline.
    SlowReader,
    /// A socket error (reset, ...).
    Failed,
}

enum State {
    Head(Vec<u8>),
    Answer {
        head: Vec<u8>,
        body: Option<Arc<[u8]>>,
        sent: usize,
        until: Instant,
    },
    /// The answer is out and the write side shut: read what the client still sends
    /// (closing with unread data would reset the connection and could cut the answer
    /// short in flight) until it closes or the linger ends.
    Linger {
        until: Instant,
        left: usize,
    },
}

pub(super) struct Conn {
    stream: TcpStream,
    pub(super) peer: SocketAddr,
    pub(super) accepted: Instant,
    state: State,
    /// What the request asked for, once read.
    pub(super) route: Option<Route>,
    _share: ConnGuard,
}

/// The answer's bytes: the status line and headers, and the body unless HEAD.
fn answer(route: Route, body: &mut dyn FnMut() -> Arc<[u8]>) -> (Vec<u8>, Option<Arc<[u8]>>) {
    let text = |s: &str| -> Arc<[u8]> { Arc::from(s.as_bytes()) };
    let (status, ctype, extra, body, head_only) = match route {
        Route::Metrics { head_only } => {
            ("200 OK", super::super::CONTENT_TYPE, "", body(), head_only)
        }
        Route::NotFound { head_only } => (
            "404 Not Found",
            "text/plain",
            "",
            text("not found: mtuperf serves /metrics only\n"),
            head_only,
        ),
        Route::MethodNotAllowed => (
            "405 Method Not Allowed",
            "text/plain",
            "Allow: GET, HEAD\r\n",
            text("method not allowed: GET or HEAD /metrics\n"),
            false,
        ),
        Route::BadRequest => (
            "400 Bad Request",
            "text/plain",
            "",
            text("bad request: not an HTTP/1.x request\n"),
            false,
        ),
        Route::HeadTooLarge => (
            "431 Request Header Fields Too Large",
            "text/plain",
            "",
            text("request line and headers too large\n"),
            false,
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n",
        body.len()
    );
    (head.into_bytes(), (!head_only).then_some(body))
}

/// Reads the request head in `buf`: None while it is incomplete and within bounds.
fn route(buf: &[u8], max_head: usize) -> Option<Route> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(buf) {
        Ok(httparse::Status::Complete(_)) => {
            let head_only = req.method == Some("HEAD");
            let path = req.path.unwrap_or("").split('?').next().unwrap_or("");
            Some(match (req.method, path) {
                (Some("GET" | "HEAD"), "/metrics") => Route::Metrics { head_only },
                (Some("GET" | "HEAD"), _) => Route::NotFound { head_only },
                _ => Route::MethodNotAllowed,
            })
        }
        Ok(httparse::Status::Partial) if buf.len() > max_head => Some(Route::HeadTooLarge),
        Ok(httparse::Status::Partial) => None,
        Err(httparse::Error::TooManyHeaders) => Some(Route::HeadTooLarge),
        Err(_) => Some(Route::BadRequest),
    }
}

impl Conn {
    pub(super) fn new(stream: TcpStream, peer: SocketAddr, share: ConnGuard, now: Instant) -> Conn {
        Conn {
            stream,
            peer,
            accepted: now,
            state: State::Head(Vec::new()),
            route: None,
            _share: share,
        }
    }

    pub(super) fn socket(&self) -> &TcpStream {
        &self.stream
    }

    /// Still reading its request head.
    pub(super) fn in_head(&self) -> bool {
        matches!(self.state, State::Head(_))
    }

    /// When the connection is dropped if it has not ended by then, and why.
    pub(super) fn deadline(&self, b: &Bounds) -> (Instant, End) {
        match &self.state {
            State::Head(_) => (self.accepted + b.head_time, End::SlowHead),
            State::Answer { until, .. } => (*until, End::SlowReader),
            State::Linger { until, .. } => (*until, End::Answered),
        }
    }

    /// What poll(2) should wait for.
    pub(super) fn interest(&self) -> PollFlags {
        match self.state {
            State::Answer { .. } => PollFlags::POLLOUT,
            _ => PollFlags::POLLIN,
        }
    }

    /// Moves the connection on as far as its socket allows now; Some(end) when it is
    /// over (the caller drops it, which closes the socket).
    pub(super) fn progress(
        &mut self,
        b: &Bounds,
        now: Instant,
        body: &mut dyn FnMut() -> Arc<[u8]>,
    ) -> Option<End> {
        loop {
            match &mut self.state {
                State::Head(buf) => {
                    let route = match read_head(&mut self.stream, buf, b.max_head) {
                        Ok(Some(route)) => route,
                        Ok(None) => return None,
                        Err(end) => return Some(end),
                    };
                    self.route = Some(route);
                    let (head, body) = answer(route, body);
                    self.state = State::Answer {
                        head,
                        body,
                        sent: 0,
                        until: now + b.write_time,
                    };
                }
                State::Answer {
                    head, body, sent, ..
                } => {
                    match write_answer(&mut self.stream, head, body.as_deref(), sent) {
                        Ok(true) => {}
                        Ok(false) => return None,
                        Err(end) => return Some(end),
                    }
                    let _ = self.stream.shutdown(Shutdown::Write);
                    self.state = State::Linger {
                        until: now + b.linger,
                        left: DISCARD,
                    };
                }
                State::Linger { left, .. } => return discard(&mut self.stream, left),
            }
        }
    }
}

/// Reads what has come of the head (at most one byte past the bound).
fn read_head(stream: &mut TcpStream, buf: &mut Vec<u8>, max: usize) -> Result<Option<Route>, End> {
    let mut chunk = [0u8; 2048];
    loop {
        let room = (max + 1).saturating_sub(buf.len()).min(chunk.len());
        let Some(into) = chunk.get_mut(..room) else {
            return Err(End::Failed);
        };
        match stream.read(into) {
            Ok(0) => return Err(End::Gone),
            Ok(n) => {
                buf.extend_from_slice(into.get(..n).unwrap_or_default());
                if let Some(r) = route(buf, max) {
                    return Ok(Some(r));
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(End::Failed),
        }
    }
}

/// Writes what the socket takes now; Ok(true) once all of it is out.
fn write_answer(
    stream: &mut TcpStream,
    head: &[u8],
    body: Option<&[u8]>,
    sent: &mut usize,
) -> Result<bool, End> {
    let body = body.unwrap_or_default();
    loop {
        let rest = if *sent < head.len() {
            head.get(*sent..)
        } else {
            body.get(*sent - head.len()..)
        };
        let rest = rest.unwrap_or_default();
        if rest.is_empty() {
            return Ok(true);
        }
        match stream.write(rest) {
            Ok(0) => return Err(End::Failed),
            Ok(n) => *sent += n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(End::Failed),
        }
    }
}

/// Reads and drops what the client still sends after the answer (`left` bytes at
/// most); the end once it closes or sends more.
fn discard(stream: &mut TcpStream, left: &mut usize) -> Option<End> {
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return Some(End::Answered),
            Ok(n) if n >= *left => return Some(End::Answered),
            Ok(n) => *left -= n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Some(End::Answered),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{route, Route};

    #[test]
    fn requests_are_routed_and_bounded() {
        let m = 64;
        let cases: [(&[u8], Option<Route>); 9] = [
            (
                b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
                Some(Route::Metrics { head_only: false }),
            ),
            (
                b"HEAD /metrics?x=1 HTTP/1.0\r\n\r\n",
                Some(Route::Metrics { head_only: true }),
            ),
            (
                b"GET / HTTP/1.1\r\n\r\n",
                Some(Route::NotFound { head_only: false }),
            ),
            (
                b"POST /metrics HTTP/1.1\r\n\r\n",
                Some(Route::MethodNotAllowed),
            ),
            (b"SSH-2.0-OpenSSH\r\n\r\n", Some(Route::BadRequest)),
            // Incomplete within the bound: wait for more.
            (b"GET /metrics HTTP/1.1\r\nHost:", None),
            // A request line longer than the bound, complete or not.
            (&[b'A'; 65], Some(Route::HeadTooLarge)),
            (
                b"GET /metrics HTTP/1.1\r\nX: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                Some(Route::HeadTooLarge),
            ),
            // A pipelined second request does not matter: the first is answered.
            (
                b"GET /metrics HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\n\r\nGET",
                Some(Route::Metrics { head_only: false }),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                route(input, m),
                want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        let many: String = std::iter::once("GET /metrics HTTP/1.1\r\n".to_string())
            .chain((0..40).map(|i| format!("X{i}: 1\r\n")))
            .chain(std::iter::once("\r\n".to_string()))
            .collect();
        assert_eq!(route(many.as_bytes(), 8192), Some(Route::HeadTooLarge));
    }
}
