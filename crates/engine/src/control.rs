//! A blocking, framed control connection. Reading and writing can happen from two
//! threads at once (a test's live intervals go out while a Stop may come in): the
//! socket is shared, the codec's two sequence counters sit behind one mutex that is
//! held only to encode or decode, never across I/O.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mtuperf_proto::codec::Codec;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::EngineError;

/// Longest a control send may block.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone)]
pub struct Control {
    sock: Arc<TcpStream>,
    codec: Arc<Mutex<Codec>>,
    peer: SocketAddr,
}

impl Control {
    pub fn new(sock: TcpStream, codec: Codec) -> Result<Control, EngineError> {
        let peer = sock
            .peer_addr()
            .map_err(|e| EngineError::io("peer address", e))?;
        let _ = sock.set_nodelay(true);
        // A control message is small: a peer that accepts none of it for this long is
        // gone (or stopped), and a send must not block the test forever.
        let _ = sock.set_write_timeout(Some(SEND_TIMEOUT));
        Ok(Control {
            sock: Arc::new(sock),
            codec: Arc::new(Mutex::new(codec)),
            peer,
        })
    }

    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    pub fn local(&self) -> Option<SocketAddr> {
        self.sock.local_addr().ok()
    }

    pub fn socket(&self) -> &TcpStream {
        &self.sock
    }

    fn with_codec<R>(&self, f: impl FnOnce(&mut Codec) -> R) -> R {
        let mut guard = match self.codec.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    pub fn authenticate(&self, session: mtuperf_proto::auth::Key) {
        self.with_codec(|c| c.authenticate(session));
    }

    pub fn send<T: Serialize>(&self, msg: &T) -> Result<(), EngineError> {
        // Encode and write under the lock so frames from two threads never interleave.
        let mut guard = match self.codec.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        let frame = guard.encode(msg);
        (&*self.sock)
            .write_all(&frame)
            .map_err(|e| EngineError::io("sending control message", e))
    }

    /// Receives one message, waiting at most `timeout` (None: forever) for the
    /// whole frame.
    pub fn recv<T: DeserializeOwned>(
        &self,
        timeout: Option<Duration>,
        what: &str,
    ) -> Result<T, EngineError> {
        self.recv_by(timeout.map(|t| Instant::now() + t), what)
    }

    /// Receives the one message variant `T` the protocol's state waits for (see
    /// [`crate::flow`]), waiting at most `timeout` for it.
    pub fn expect<T: crate::flow::Expected>(
        &self,
        timeout: Option<Duration>,
        what: &str,
    ) -> Result<T, EngineError> {
        crate::flow::take(self.recv::<T::Msg>(timeout, what)?)
    }

    /// Receives one message whose last byte must arrive before `deadline` (None:
    /// no deadline). The deadline is on the whole frame, not on each read: a peer
    /// that trickles a byte now and then cannot stretch it.
    pub fn recv_by<T: DeserializeOwned>(
        &self,
        deadline: Option<Instant>,
        what: &str,
    ) -> Result<T, EngineError> {
        let started = Instant::now();
        let map = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => EngineError::Timeout {
                what: what.to_string(),
                secs: started.elapsed().as_secs(),
            },
            std::io::ErrorKind::UnexpectedEof => EngineError::Closed {
                what: what.to_string(),
            },
            _ => EngineError::io(format!("receiving {what}"), e),
        };
        let mut header = [0u8; 4];
        self.read_full(&mut header, deadline).map_err(map)?;
        let len = self.with_codec(|c| c.body_len(header))?;
        let mut body = vec![0u8; len];
        self.read_full(&mut body, deadline).map_err(map)?;
        Ok(self.with_codec(|c| c.decode_body(&body))?)
    }

    /// `read_exact` with one deadline for all of `buf`.
    fn read_full(&self, mut buf: &mut [u8], deadline: Option<Instant>) -> std::io::Result<()> {
        while !buf.is_empty() {
            let timeout = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(std::io::ErrorKind::TimedOut.into());
                    }
                    // A zero timeout would mean "block forever".
                    Some(left.max(Duration::from_millis(1)))
                }
                None => None,
            };
            self.sock.set_read_timeout(timeout)?;
            match (&*self.sock).read(buf) {
                Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => buf = buf.get_mut(n..).unwrap_or_default(),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    pub fn shutdown(&self) {
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}

/// Waits until the agent's answer starts to arrive (or the deadline passes), giving
/// up at once when `stop` is set (Ctrl-C): a running pair never holds the stop for
/// its whole deadline. Peeking leaves the frame whole for the reader.
pub fn answer_or_stop(
    sock: &std::net::TcpStream,
    until: Instant,
    stop: &AtomicBool,
) -> Result<(), EngineError> {
    let mut b = [0u8; 1];
    while Instant::now() < until {
        if stop.load(Ordering::Relaxed) {
            return Err(EngineError::Agent(
                "interrupted (Ctrl-C) before the result".into(),
            ));
        }
        let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
        match sock.peek(&mut b) {
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            // Data, end of stream or an error: the reader says which.
            _ => break,
        }
    }
    Ok(())
}
