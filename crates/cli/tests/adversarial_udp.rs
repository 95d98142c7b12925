//! The rr UDP responder against spoofed and foreign sources, on loopback: a
//! "second host" is 127.0.0.2. Datagrams carrying the right token but coming from an
//! address or port the session did not register get no answer (the agent cannot be
//! used to reflect traffic at a third party); the registered socket is answered.
//! The path responder also counts what it ignored and says so when the session ends.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod adversarial_support;

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

#[test]
fn rr_udp_answers_only_the_registered_source() {
    let agent = LiveAgent::start(&[]);
    let mut s = Raw::connect(agent.addr);
    s.handshake(&agent.key);
    let legit = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = legit.local_addr().unwrap().port();
    // Same port, other address: only the source address differs from the client's.
    let other_host = UdpSocket::bind(("127.0.0.2", port)).unwrap();
    // Same address, unregistered port.
    let other_port = UdpSocket::bind("127.0.0.1:0").unwrap();
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
    }));
    let ready = match s.recv() {
        Some(AgentMsg::RrReady(r)) => r,
        other => panic!("expected rr_ready, got {other:?}"),
    };
    s.send(&ClientMsg::Go);
    let to = SocketAddr::from(([127, 0, 0, 1], ready.port));
    for seq in 0..10 {
        other_host.send_to(&request(ready.token, seq), to).unwrap();
        other_port.send_to(&request(ready.token, seq), to).unwrap();
        // Right source, wrong token.
        legit.send_to(&request(ready.token ^ 1, seq), to).unwrap();
    }
    assert_eq!(answered(&other_host), 0, "answered a foreign address");
    assert_eq!(answered(&other_port), 0, "answered an unregistered port");
    assert_eq!(answered(&legit), 0, "answered a wrong token");
    for seq in 0..5 {
        legit.send_to(&request(ready.token, seq), to).unwrap();
    }
    assert_eq!(
        answered(&legit),
        5,
        "the registered client must be answered"
    );
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
    let legit = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = legit.local_addr().unwrap().port();
    let other_host = UdpSocket::bind(("127.0.0.2", port)).unwrap();
    let other_port = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.send(&ClientMsg::PathOpen(PathOpen { client_port: port }));
    let ready = match s.recv() {
        Some(AgentMsg::PathReady(r)) => r,
        other => panic!("expected path_ready, got {other:?}"),
    };
    let to = SocketAddr::from(([127, 0, 0, 1], ready.port));
    for seq in 0..3 {
        other_host.send_to(&probe(ready.token, seq), to).unwrap();
        other_port.send_to(&probe(ready.token, seq), to).unwrap();
    }
    legit.send_to(&probe(ready.token ^ 1, 7), to).unwrap();
    legit.send_to(&probe(ready.token ^ 2, 8), to).unwrap();
    legit.send_to(b"not a probe", to).unwrap();
    assert_eq!(answered(&other_host), 0, "answered a foreign address");
    assert_eq!(answered(&other_port), 0, "answered an unregistered port");
    assert_eq!(answered(&legit), 0, "answered a wrong token or garbage");
    for seq in 0..4 {
        legit.send_to(&probe(ready.token, seq), to).unwrap();
    }
    assert_eq!(
        answered(&legit),
        4,
        "the registered client must be answered"
    );
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
