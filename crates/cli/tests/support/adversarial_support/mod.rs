//! Helpers for the adversarial suite: a live agent (the real binary on 127.0.0.1 with
//! a key), raw protocol clients and the real client commands.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use mtuperf_proto::auth::{self, Key};
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{AgentInfo, AgentMsg, ClientMsg, Hello, Role};

pub const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

pub struct LiveAgent {
    pub child: Child,
    pub addr: SocketAddr,
    pub key: Key,
    pub key_file: PathBuf,
    pub log: PathBuf,
    dir: tempfile::TempDir,
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
        let log = dir.path().join("agent.log");
        // Port 0 and the address from the agent's first log line: a port picked in
        // advance can be taken meanwhile, and probing it with connect() can even
        // succeed by TCP self-connect on loopback before the agent has bound it.
        for _ in 0..3 {
            let mut cmd = match wrapper.split_first() {
                Some((w, rest)) => {
                    let mut c = Command::new(w);
                    c.args(rest).arg(BIN);
                    c
                }
                None => Command::new(BIN),
            };
            let child = cmd
                .arg("--key-file")
                .arg(&key_file)
                .args(["serve", "--bind", "127.0.0.1", "--port", "0"])
                .args(extra)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap();
            let mut agent = LiveAgent {
                child,
                addr: "127.0.0.1:0".parse().unwrap(),
                key: key.clone(),
                key_file: key_file.clone(),
                log: log.clone(),
                dir: tempfile::tempdir().unwrap(),
            };
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if agent.child.try_wait().unwrap().is_some() {
                    break;
                }
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                if let Some(addr) = text
                    .lines()
                    .find_map(|l| {
                        l.rsplit("listening on ")
                            .next()
                            .filter(|_| l.contains("listening on"))
                    })
                    .and_then(|a| a.trim().parse::<SocketAddr>().ok())
                {
                    agent.addr = addr;
                    agent.dir = dir;
                    return agent;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = agent.child.kill();
        }
        panic!(
            "agent did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    pub fn assert_alive(&mut self) {
        assert!(
            self.child.try_wait().unwrap().is_none(),
            "agent exited; log: {}",
            self.log_text()
        );
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
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

impl Drop for LiveAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
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
