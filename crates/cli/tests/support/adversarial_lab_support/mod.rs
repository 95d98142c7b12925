//! Helpers for adversarial_lab.rs: sockets created inside a lab host's network
//! namespace (a thread joins the namespace with setns, creates the socket and hands it
//! back: a socket stays in the namespace it was made in), hand-built rr and path
//! datagrams, and opening raw rr/path sessions to learn the token and UDP port.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use mtuperf_proto::auth::Key;
use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use mtuperf_proto::msg::{AgentMsg, ClientMsg, PathOpen, PathReady, RrReady, RrRequest};
use nix::sched::CloneFlags;

use crate::adversarial_support::Raw;

/// Request size of the raw rr sessions.
pub const REQUEST: u32 = 64;
/// Block size of the raw rr sessions.
pub const BLOCK: u32 = 1024;

/// Runs `f` on a thread inside network namespace `ns` (as `ip netns` names it) and
/// returns its result; sockets `f` creates belong to that namespace.
pub fn in_netns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let path = format!("/run/netns/{ns}");
    std::thread::spawn(move || {
        let fd = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        nix::sched::setns(&fd, CloneFlags::CLONE_NEWNET).unwrap();
        f()
    })
    .join()
    .unwrap()
}

/// A datagram of `total` bytes whose header says `kind`, `token`, `seq` and `len`.
pub fn dgram(kind: Kind, token: u64, seq: u64, len: u32, total: usize) -> Vec<u8> {
    let mut d = vec![0u8; total.max(HEADER_LEN)];
    let h = Header {
        kind,
        client: 0,
        token,
        seq,
        stamp: 0,
        aux: 0,
        len,
    };
    assert!(h.write(&mut d));
    d.truncate(total);
    d
}

/// A well-formed rr request carrying `token`.
pub fn rr_request(token: u64, seq: u64) -> Vec<u8> {
    dgram(
        Kind::RrRequest,
        token,
        seq,
        REQUEST,
        HEADER_LEN + REQUEST as usize,
    )
}

/// A path probe of `total` bytes carrying `token`.
pub fn path_probe(token: u64, seq: u64, total: usize) -> Vec<u8> {
    dgram(Kind::PathProbe, token, seq, total as u32, total)
}

/// Every datagram that reaches `sock` until 300 ms pass without one, with its size.
pub fn received(sock: &UdpSocket) -> Vec<(Header, usize)> {
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = vec![0u8; 65536];
    let mut got = Vec::new();
    while let Ok((n, _)) = sock.recv_from(&mut buf) {
        got.push((Header::read(buf.get(..n).unwrap()).unwrap(), n));
    }
    got
}

/// Opens a UDP rr session on `raw` (already authenticated) for `port` and says Go.
pub fn rr_session(raw: &mut Raw, port: u16) -> RrReady {
    // From JSON so that optional fields added to the request later keep their
    // defaults without touching this test.
    let req: RrRequest = serde_json::from_value(serde_json::json!({
        "proto": "udp",
        "block": BLOCK,
        "request": REQUEST,
        "workers": 1,
        "clients": 1,
        "duration_ms": 5000,
        "rate": null,
        "udp_ports": [port],
        "hooks": null,
    }))
    .unwrap();
    raw.send(&ClientMsg::Rr(req));
    let ready = match raw.recv() {
        Some(AgentMsg::RrReady(r)) => r,
        other => panic!("expected rr_ready, got {other:?}"),
    };
    raw.send(&ClientMsg::Go);
    ready
}

/// Stops an rr session and returns the agent's (requests, responses, rejected).
pub fn rr_finish(raw: &mut Raw) -> (u64, u64, u64) {
    raw.send(&ClientMsg::Stop);
    loop {
        match raw.recv() {
            Some(AgentMsg::RrDone(d)) => return (d.requests, d.responses, d.rejected),
            Some(_) => {}
            None => panic!("no rr_done"),
        }
    }
}

/// Opens a path probing session on `raw` for `client_port`.
pub fn path_session(raw: &mut Raw, client_port: u16) -> PathReady {
    raw.send(&ClientMsg::PathOpen(PathOpen {
        client_port,
        reverse_port: None,
    }));
    match raw.recv() {
        Some(AgentMsg::PathReady(r)) => r,
        other => panic!("expected path_ready, got {other:?}"),
    }
}

/// A raw control connection from inside `ns` to `agent`, authenticated with the key
/// in `key_file`, and a UDP socket beside it (same namespace, any port).
pub fn client_in(ns: &str, agent: SocketAddr, key_file: &std::path::Path) -> (Raw, UdpSocket) {
    let key = Key::parse_file(&std::fs::read_to_string(key_file).unwrap()).unwrap();
    let (mut raw, udp) = in_netns(ns, move || {
        (Raw::connect(agent), UdpSocket::bind("0.0.0.0:0").unwrap())
    });
    raw.handshake(&key);
    (raw, udp)
}
