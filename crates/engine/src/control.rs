//! A blocking, framed control connection. Reading and writing can happen from two
//! threads at once (a test's live intervals go out while a Stop may come in): the
//! socket is shared, the codec's two sequence counters sit behind one mutex that is
//! held only to encode or decode, never across I/O.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mtuperf_proto::codec::Codec;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::EngineError;

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

    /// Receives one message, waiting at most `timeout` (None: forever).
    pub fn recv<T: DeserializeOwned>(
        &self,
        timeout: Option<Duration>,
        what: &str,
    ) -> Result<T, EngineError> {
        let _ = self.sock.set_read_timeout(timeout);
        let map = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => EngineError::Timeout {
                what: what.to_string(),
                secs: timeout.map_or(0, |t| t.as_secs()),
            },
            std::io::ErrorKind::UnexpectedEof => {
                EngineError::Protocol(format!("connection closed while waiting for {what}"))
            }
            _ => EngineError::io(format!("receiving {what}"), e),
        };
        let mut header = [0u8; 4];
        (&*self.sock).read_exact(&mut header).map_err(map)?;
        let len = self.with_codec(|c| c.body_len(header))?;
        let mut body = vec![0u8; len];
        (&*self.sock).read_exact(&mut body).map_err(map)?;
        Ok(self.with_codec(|c| c.decode_body(&body))?)
    }

    pub fn shutdown(&self) {
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}
