//! The UDP responders (rr, path) against a second host and against malformed or
//! excessive probes (issue 8). In the `routed` lab the client opens a real session
//! to the routed server through routed-router; the router, which has its own address
//! on the server's link (198.18.13.254), then sends datagrams with the session's valid
//! token and a well-formed header to the agent's UDP port, from the client's
//! registered port number and from another. Nothing may come back to the router,
//! the client must still be answered, and rr counts every spoofed datagram as
//! rejected. On loopback, the path responder's own rules: wrong token, wrong port,
//! a probe shorter than the 40-byte header (no ack), acks never larger than the probe,
//! and the cap of 2000 reverse probes refused with the limit named.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::adversarial_lab_support;
use crate::adversarial_support;

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use adversarial_lab_support::{
    client_in, in_netns, path_probe, path_session, received, rr_finish, rr_request, rr_session,
    BLOCK,
};
use adversarial_support::{LiveAgent, Raw, BIN};
use mtuperf_lab::{check_environment, LabGuard, LabOptions, Scenario};
use mtuperf_proto::dgram::{Kind, HEADER_LEN};
use mtuperf_proto::msg::path::MAX_REVERSE_PROBES;
use mtuperf_proto::msg::{AgentMsg, ClientMsg, PathReverseProbe, Refusal};

/// The routed lab with agents serving, or None (test skipped) without privileges.
fn routed_lab() -> Option<LabGuard> {
    if let Err(e) = check_environment() {
        eprintln!("skipped: {e}");
        return None;
    }
    std::env::set_var("MTUPERF_BIN", BIN);
    let mut lab = LabGuard::up(LabOptions {
        scenarios: vec![Scenario::Routed],
        ..LabOptions::default()
    })
    .unwrap();
    lab.serve(&[]).unwrap();
    Some(lab)
}

/// Two UDP sockets in routed-router: one on the client's registered port number,
/// one on another port.
fn router_sockets(lab: &LabGuard, port: u16) -> (UdpSocket, UdpSocket) {
    in_netns(&lab.netns("routed-router").unwrap(), move || {
        (
            UdpSocket::bind(("0.0.0.0", port)).unwrap(),
            UdpSocket::bind("0.0.0.0:0").unwrap(),
        )
    })
}

#[test]
fn rr_ignores_a_second_lab_host_with_the_valid_token() {
    let Some(lab) = routed_lab() else { return };
    let target = lab.target(Scenario::Routed).unwrap();
    let agent = SocketAddr::new(target, mtuperf_proto::DEFAULT_PORT);
    let (mut raw, legit) = client_in(
        &lab.netns("client").unwrap(),
        agent,
        &lab.key_file().unwrap(),
    );
    let ready = rr_session(&mut raw, legit.local_addr().unwrap().port());
    let to = SocketAddr::new(target, ready.port);
    let (same_port, other_port) = router_sockets(&lab, legit.local_addr().unwrap().port());
    for seq in 0..10 {
        same_port
            .send_to(&rr_request(ready.token, seq), to)
            .unwrap();
        other_port
            .send_to(&rr_request(ready.token, seq), to)
            .unwrap();
        legit.send_to(&rr_request(ready.token, seq), to).unwrap();
    }
    assert_eq!(received(&same_port).len(), 0, "answered the router");
    assert_eq!(received(&other_port).len(), 0, "answered the router");
    let blocks = received(&legit);
    assert_eq!(blocks.len(), 10, "the registered client must be answered");
    for (h, n) in &blocks {
        assert_eq!(
            (h.kind, h.token, *n),
            (Kind::RrResponse, ready.token, HEADER_LEN + BLOCK as usize)
        );
    }
    let (requests, responses, rejected) = rr_finish(&mut raw);
    assert_eq!((requests, responses), (10, 10));
    assert_eq!(rejected, 20, "every spoofed datagram counted as rejected");
}

#[test]
fn path_ignores_a_second_lab_host_with_the_valid_token() {
    let Some(lab) = routed_lab() else { return };
    let target = lab.target(Scenario::Routed).unwrap();
    let agent = SocketAddr::new(target, mtuperf_proto::DEFAULT_PORT);
    let (mut raw, legit) = client_in(
        &lab.netns("client").unwrap(),
        agent,
        &lab.key_file().unwrap(),
    );
    let ready = path_session(&mut raw, legit.local_addr().unwrap().port());
    let to = SocketAddr::new(target, ready.port);
    let (same_port, other_port) = router_sockets(&lab, legit.local_addr().unwrap().port());
    for seq in 0..10 {
        same_port
            .send_to(&path_probe(ready.token, seq, 1200), to)
            .unwrap();
        other_port
            .send_to(&path_probe(ready.token, seq, 1200), to)
            .unwrap();
    }
    legit
        .send_to(&path_probe(ready.token, 99, 1200), to)
        .unwrap();
    assert_eq!(received(&same_port).len(), 0, "acked the router");
    assert_eq!(received(&other_port).len(), 0, "acked the router");
    let acks = received(&legit);
    assert_eq!(
        acks.len(),
        1,
        "exactly one ack: for the client's own probe, none for the router's"
    );
    assert_eq!((acks[0].0.kind, acks[0].0.seq), (Kind::PathAck, 99));
    raw.send(&ClientMsg::Stop);
    // The agent's account names what it ignored: the router's 20 probes.
    match raw.recv() {
        Some(AgentMsg::PathServed(s)) => {
            assert_eq!(
                (s.answered, s.other_source, s.bad_token),
                (1, 20, 0),
                "{s:?}"
            );
        }
        other => panic!("expected path_served, got {other:?}"),
    }
}

/// Acks every reverse probe that reaches `sock` until 1 s passes without one.
fn acker(sock: UdpSocket, agent: SocketAddr, token: u64) -> std::thread::JoinHandle<usize> {
    std::thread::spawn(move || {
        sock.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut buf = vec![0u8; 65536];
        let mut acked = 0;
        while let Ok((n, _)) = sock.recv_from(&mut buf) {
            let h = mtuperf_proto::dgram::Header::read(&buf[..n]).unwrap();
            assert_eq!((h.kind, h.token), (Kind::PathProbe, token));
            let ack = adversarial_lab_support::dgram(Kind::PathAck, token, h.seq, 40, 40);
            sock.send_to(&ack, agent).unwrap();
            acked += 1;
        }
        acked
    })
}

#[test]
fn path_responder_rules_on_loopback() {
    let agent = LiveAgent::start(&[]);
    let mut raw = Raw::connect(agent.addr);
    raw.handshake(&agent.key);
    let legit = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = legit.local_addr().unwrap().port();
    let other_host = UdpSocket::bind(("127.0.0.2", port)).unwrap();
    let other_port = UdpSocket::bind("127.0.0.1:0").unwrap();
    let ready = path_session(&mut raw, port);
    let to = SocketAddr::from(([127, 0, 0, 1], ready.port));
    for seq in 0..5 {
        legit
            .send_to(&path_probe(ready.token ^ 1, seq, 1000), to)
            .unwrap();
        other_host
            .send_to(&path_probe(ready.token, seq, 1000), to)
            .unwrap();
        other_port
            .send_to(&path_probe(ready.token, seq, 1000), to)
            .unwrap();
        // Shorter than the header the ack would carry: answering would amplify.
        legit
            .send_to(&path_probe(ready.token, seq, HEADER_LEN - 1), to)
            .unwrap();
    }
    assert_eq!(
        received(&legit).len(),
        0,
        "acked a wrong token, a short probe, or another source's probe"
    );
    assert_eq!(received(&other_host).len(), 0, "acked a foreign address");
    assert_eq!(received(&other_port).len(), 0, "acked an unregistered port");
    for (seq, size) in [(10, HEADER_LEN), (11, 1000), (12, 9000)] {
        legit
            .send_to(&path_probe(ready.token, seq, size), to)
            .unwrap();
        let acks = received(&legit);
        assert_eq!(acks.len(), 1, "probe of {size} bytes not acked once");
        let (h, n) = &acks[0];
        assert_eq!((h.kind, h.token, h.seq), (Kind::PathAck, ready.token, seq));
        assert!(*n <= size, "ack of {n} bytes for a probe of {size}");
    }
    let ack_thread = acker(legit.try_clone().unwrap(), to, ready.token);
    for seq in 0..MAX_REVERSE_PROBES {
        raw.send(&ClientMsg::PathReverseProbe(PathReverseProbe {
            seq,
            size: 100,
            wait_ms: 1000,
        }));
        match raw.recv() {
            Some(AgentMsg::PathProbeResult(r)) => assert!(r.sent && r.acked, "{r:?}"),
            other => panic!("reverse probe {seq}: {other:?}"),
        }
    }
    raw.send(&ClientMsg::PathReverseProbe(PathReverseProbe {
        seq: MAX_REVERSE_PROBES,
        size: 100,
        wait_ms: 1000,
    }));
    match raw.recv() {
        Some(AgentMsg::Refused(Refusal::Limit {
            limit,
            requested,
            allowed,
        })) => {
            assert_eq!(limit, "path-reverse-probes");
            assert_eq!(
                (requested, allowed),
                (MAX_REVERSE_PROBES + 1, MAX_REVERSE_PROBES)
            );
        }
        other => panic!("probe {} not refused: {other:?}", MAX_REVERSE_PROBES + 1),
    }
    assert_eq!(
        ack_thread.join().unwrap() as u64,
        MAX_REVERSE_PROBES,
        "the refused probe must not be sent"
    );
}
