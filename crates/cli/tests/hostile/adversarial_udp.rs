//! The rr UDP responder against spoofed and foreign sources, on loopback: a
//! "second host" is 127.0.0.2. Datagrams carrying the right token but coming from an
//! address or port the session did not register get no answer (the agent cannot be
//! used to reflect traffic at a third party); the registered socket is answered.
//! The path responder also counts what it ignored and says so when the session ends.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::adversarial_support;

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use adversarial_support::{LiveAgent, Raw};
use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use mtuperf_proto::msg::rr::RrProto;
use mtuperf_proto::msg::{AgentMsg, ClientMsg, PathOpen, PathServed, RrRequest};

const REQUEST: u32 = 64;

fn request(token: u64, seq: u64) -> Vec<u8> {
    let mut d = vec![0u8; HEADER_LEN + REQUEST as usize];
    let h = Header {
        kind: Kind::RrRequest,
        client: 0,
        token,
        seq,
        stamp: 0,
        aux: 0,
        len: REQUEST,
    };
    assert!(h.write(&mut d));
    d
}

fn answered(sock: &UdpSocket) -> usize {
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = vec![0u8; 65536];
    let mut n = 0;
    while sock.recv_from(&mut buf).is_ok() {
        n += 1;
    }
    n
}

/// The registered client's socket and two impostors: the same port on another
/// address (127.0.0.2), and another port on the client's address.
struct Sources {
    legit: UdpSocket,
    other_host: UdpSocket,
    other_port: UdpSocket,
}

impl Sources {
    fn bind() -> Sources {
        let legit = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = legit.local_addr().unwrap().port();
        Sources {
            other_host: UdpSocket::bind(("127.0.0.2", port)).unwrap(),
            other_port: UdpSocket::bind("127.0.0.1:0").unwrap(),
            legit,
        }
    }

    fn port(&self) -> u16 {
        self.legit.local_addr().unwrap().port()
    }

    /// Sends `valid(seq)` for `impostor` seqs from each impostor and checks nobody
    /// was answered (nor the client, for whatever bad datagrams it sent before);
    /// then sends `good` valid ones from the client and checks each is answered.
    fn check(&self, to: SocketAddr, valid: impl Fn(u64) -> Vec<u8>, impostor: u64, good: u64) {
        for seq in 0..impostor {
            self.other_host.send_to(&valid(seq), to).unwrap();
            self.other_port.send_to(&valid(seq), to).unwrap();
        }
        assert_eq!(answered(&self.other_host), 0, "answered a foreign address");
        assert_eq!(
            answered(&self.other_port),
            0,
            "answered an unregistered port"
        );
        assert_eq!(
            answered(&self.legit),
            0,
            "answered a wrong token or garbage"
        );
        for seq in 0..good {
            self.legit.send_to(&valid(seq), to).unwrap();
        }
        assert_eq!(
            answered(&self.legit) as u64,
            good,
            "the registered client must be answered"
        );
    }
}

#[test]
fn rr_udp_answers_only_the_registered_source() {
    let agent = LiveAgent::start(&[]);
    let mut s = Raw::connect(agent.addr);
    s.handshake(&agent.key);
    let src = Sources::bind();
    let port = src.port();
    s.send(&ClientMsg::Rr(RrRequest {
        proto: RrProto::Udp,
        block: 1024,
        request: REQUEST,
        workers: 1,
        clients: 1,
        duration_ms: 3000,
        rate: None,
        udp_ports: vec![port],
        hooks: None,
        bidir: None,
        cpus: None,
    }));
    let ready = match s.recv() {
        Some(AgentMsg::RrReady(r)) => r,
        other => panic!("expected rr_ready, got {other:?}"),
    };
    s.send(&ClientMsg::Go);
    let to = SocketAddr::from(([127, 0, 0, 1], ready.port));
    for seq in 0..10 {
        // Right source, wrong token.
        src.legit
            .send_to(&request(ready.token ^ 1, seq), to)
            .unwrap();
    }
    src.check(to, |seq| request(ready.token, seq), 10, 5);
    s.send(&ClientMsg::Stop);
    let done = loop {
        match s.recv() {
            Some(AgentMsg::RrDone(d)) => break d,
            Some(_) => {}
            None => panic!("no rr_done"),
        }
    };
    assert_eq!(done.responses, 5);
    assert_eq!(done.rejected, 30, "{done:?}");
}

fn probe(token: u64, seq: u64) -> Vec<u8> {
    let mut d = vec![0u8; 1000];
    let h = Header {
        kind: Kind::PathProbe,
        client: 0,
        token,
        seq,
        stamp: 0,
        aux: 0,
        len: 1000,
    };
    assert!(h.write(&mut d));
    d
}

#[test]
fn path_responder_answers_the_client_only_and_counts_what_it_ignored() {
    let agent = LiveAgent::start(&[]);
    let mut s = Raw::connect(agent.addr);
    s.handshake(&agent.key);
    let src = Sources::bind();
    s.send(&ClientMsg::PathOpen(PathOpen {
        client_port: src.port(),
        reverse_port: None,
    }));
    let ready = match s.recv() {
        Some(AgentMsg::PathReady(r)) => r,
        other => panic!("expected path_ready, got {other:?}"),
    };
    let to = SocketAddr::from(([127, 0, 0, 1], ready.port));
    src.legit.send_to(&probe(ready.token ^ 1, 7), to).unwrap();
    src.legit.send_to(&probe(ready.token ^ 2, 8), to).unwrap();
    src.legit.send_to(b"not a probe", to).unwrap();
    src.check(to, |seq| probe(ready.token, seq), 3, 4);
    s.send(&ClientMsg::Stop);
    assert_eq!(
        s.recv(),
        Some(AgentMsg::PathServed(PathServed {
            answered: 4,
            other_source: 6,
            bad_token: 2,
            malformed: 1,
        }))
    );
}
