//! Helpers for the adversarial suite: a live agent (the shared test agent with a
//! key), raw protocol clients and the real client commands.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use mtuperf_proto::auth::{self, Key};
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{AgentInfo, AgentMsg, ClientMsg, Hello, Role};

use crate::agent_support::{AgentProc, Spec};

pub const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

/// The shared test agent (`agent_support`) with a key: `mtuperf --key-file K serve
/// ...`. Derefs to it (its address, process and log).
pub struct LiveAgent {
    agent: AgentProc,
    pub key: Key,
    pub key_file: PathBuf,
    dir: tempfile::TempDir,
}

impl std::ops::Deref for LiveAgent {
    type Target = AgentProc;
    fn deref(&self) -> &AgentProc {
        &self.agent
    }
}

impl std::ops::DerefMut for LiveAgent {
    fn deref_mut(&mut self) -> &mut AgentProc {
        &mut self.agent
    }
}

impl LiveAgent {
    /// Starts `mtuperf --key-file K serve --bind 127.0.0.1 --port P EXTRA` and waits
    /// until it accepts connections.
    pub fn start(extra: &[&str]) -> LiveAgent {
        LiveAgent::start_under(&[], extra)
    }

    /// `start` with the agent run under `wrapper` (e.g. `prlimit --nofile=200:200`),
    /// which must exec the command it is given.
    pub fn start_under(wrapper: &[&str], extra: &[&str]) -> LiveAgent {
        let dir = tempfile::tempdir().unwrap();
        let key = Key(std::array::from_fn(|i| (i as u8).wrapping_mul(37) ^ 0x5a));
        let key_file = dir.path().join("key");
        std::fs::write(&key_file, key.to_file()).unwrap();
        let spec = Spec::new(extra)
            .wrapper(wrapper.iter().copied())
            .global([OsStr::new("--key-file"), key_file.as_os_str()]);
        // A wrapper under a tight limit may fail to start the agent now and then.
        let mut seen = Vec::new();
        for _ in 0..3 {
            match spec.try_start() {
                Ok(agent) => {
                    return LiveAgent {
                        agent,
                        key,
                        key_file,
                        dir,
                    }
                }
                Err(lines) => seen = lines,
            }
        }
        panic!("agent did not start: {seen:?}");
    }

    /// Runs `mtuperf --no-store [--key-file K] stream 127.0.0.1:P ARGS`.
    pub fn stream(&self, key_file: Option<&Path>, args: &[&str]) -> Output {
        let mut c = Command::new(BIN);
        c.arg("--no-store").env_remove("MTUPERF_KEY_FILE");
        if let Some(k) = key_file {
            c.arg("--key-file").arg(k);
        }
        c.args(["stream", &self.addr.to_string()]).args(args);
        c.output().unwrap()
    }

    /// Runs `mtuperf --no-store --key-file K rr 127.0.0.1:P ARGS`.
    pub fn rr(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .env_remove("MTUPERF_KEY_FILE")
            .arg("--no-store")
            .arg("--key-file")
            .arg(&self.key_file)
            .args(["rr", &self.addr.to_string()])
            .args(args)
            .output()
            .unwrap()
    }

    /// A short real stream test that must succeed.
    pub fn stream_ok(&self) {
        let out = self.stream(Some(&self.key_file), &["--time", "1s"]);
        assert!(
            out.status.success(),
            "legitimate stream failed: {}\nagent log: {}",
            String::from_utf8_lossy(&out.stderr),
            self.log_text()
        );
    }
}

/// A raw control connection speaking the protocol by hand.
pub struct Raw {
    pub sock: TcpStream,
    pub codec: Codec,
    buf: Vec<u8>,
    /// Every byte this client sent, frame by frame (for replay).
    pub sent: Vec<Vec<u8>>,
    /// The agent's details from the last AuthOk `handshake` received.
    pub last_auth_ok: Option<AgentInfo>,
}

impl Raw {
    pub fn connect(addr: SocketAddr) -> Raw {
        let sock = TcpStream::connect(addr).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        Raw {
            sock,
            codec: Codec::client(),
            buf: Vec::new(),
            sent: Vec::new(),
            last_auth_ok: None,
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.sock.write_all(bytes).unwrap();
        self.sent.push(bytes.to_vec());
    }

    pub fn send(&mut self, m: &ClientMsg) {
        let f = self.codec.encode(m);
        self.send_raw(&f);
    }

    /// Next message, or None when the agent closed the connection.
    pub fn recv(&mut self) -> Option<AgentMsg> {
        loop {
            if let Some((m, n)) = self.codec.decode::<AgentMsg>(&self.buf).unwrap() {
                self.buf.drain(..n);
                return Some(m);
            }
            let mut chunk = vec![0u8; 65536];
            match self.sock.read(&mut chunk) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.buf.extend_from_slice(chunk.get(..n).unwrap()),
            }
        }
    }

    /// Completes the keyed handshake; returns the AuthOk cookie.
    pub fn handshake(&mut self, key: &Key) -> String {
        self.try_handshake(key).expect("no welcome")
    }

    /// The keyed handshake, or None when the agent answers the Hello with anything
    /// but a Welcome (e.g. busy while a finished session's slot is still releasing).
    pub fn try_handshake(&mut self, key: &Key) -> Option<String> {
        let nc = [0x11u8; 16];
        self.send(&ClientMsg::Hello(Hello::new(nc, Role::Control)));
        let Some(AgentMsg::Welcome(w)) = self.recv() else {
            return None;
        };
        let mut na = [0u8; 16];
        hex::decode_to_slice(&w.nonce, &mut na).unwrap();
        let proof = hex::encode(auth::client_proof(key, &nc, &na));
        self.send(&ClientMsg::Auth { proof });
        self.codec.authenticate(auth::session_key(key, &nc, &na));
        match self.recv() {
            Some(AgentMsg::AuthOk { cookie, info }) => {
                self.last_auth_ok = Some(*info);
                Some(cookie)
            }
            other => panic!("expected auth_ok, got {other:?}"),
        }
    }

    /// Whether the agent closes this connection within `within`.
    pub fn closed_within(&mut self, within: Duration) -> bool {
        self.sock.set_read_timeout(Some(within)).unwrap();
        let mut b = [0u8; 4096];
        loop {
            match self.sock.read(&mut b) {
                Ok(0) => return true,
                Ok(_) => {}
                Err(e) => {
                    return !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    )
                }
            }
        }
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
