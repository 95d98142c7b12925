//! rr --bidir over loopback against an in-process agent: in both directions requests
//! sent == served == blocks received (UDP and TCP), corruption is still caught in the
//! forward direction, and the client's responder drops a datagram from a third socket
//! (wrong token, unregistered port) without answering it.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::test_agent;
use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::config::RrConfig;
use mtuperf_engine::rr::{self, Quiet, RrObserver, RrResult};
use mtuperf_proto::dgram::{Header, Kind};
use mtuperf_proto::msg::rr::{RrHooks, RrProto};
use mtuperf_proto::msg::Limits;

fn agent(hooks: bool) -> SocketAddr {
    let mut cfg = test_agent::config();
    cfg.limits = Limits::default();
    cfg.test_hooks = hooks;
    let (addr, _stop) = test_agent::start(cfg);
    addr
}

fn params(proto: RrProto, clients: u32) -> RrConfig {
    RrConfig {
        proto,
        block: 8192,
        request: 128,
        workers: Some(2),
        clients,
        time: Duration::from_millis(700),
        rate: None,
        hooks: None,
        bidir: true,
        timeout: Duration::from_millis(200),
        verify: true,
        threads: None,
        interval: Duration::from_millis(100),
        cpus: None,
        agent_cpus: None,
        explain: false,
    }
}

fn run(addr: SocketAddr, p: &RrConfig, obs: &dyn RrObserver) -> RrResult {
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let r = rr::run(&session, p, &Arc::new(AtomicBool::new(false)), obs).unwrap();
    session.close();
    r
}

/// Both directions closed loop without loss: every request sent was served once and
/// its block received once.
fn assert_both_directions_close(r: &RrResult) {
    let c = &r.client.counts;
    assert!(c.blocks > 50, "forward: too few blocks: {c:?}");
    assert_eq!(c.requests_sent, r.agent.requests, "forward: sent vs served");
    assert_eq!(r.agent.requests, r.agent.responses);
    assert_eq!(c.blocks, r.agent.responses, "forward: served vs received");
    assert_eq!((c.lost, c.invalid, c.duplicate), (0, 0, 0), "{c:?}");
    assert_eq!(r.client.unanswered, 0);
    let rev = r
        .reverse
        .as_ref()
        .expect("a --bidir run has a reverse section");
    let (q, s) = (&rev.requester, &rev.responder);
    assert!(q.counts.blocks > 50, "reverse: too few blocks: {q:?}");
    assert_eq!(
        q.counts.requests_sent, s.requests,
        "reverse: sent vs served"
    );
    assert_eq!(s.requests, s.responses);
    assert_eq!(q.counts.blocks, s.responses, "reverse: served vs received");
    assert_eq!(
        (q.counts.lost, q.counts.invalid, q.counts.corrupt),
        (0, 0, 0)
    );
    assert_eq!(q.unanswered, 0);
    assert!(q.errors.is_empty(), "{:?}", q.errors);
    assert_eq!(q.latency.count, q.counts.blocks);
    assert!(q.latency.min.unwrap() > 0 && q.latency.p50.unwrap() <= q.latency.p99.unwrap());
    assert!(r.agent.reverse.is_none(), "moved into result.reverse");
}

#[test]
fn udp_bidir_closes_in_both_directions() {
    let r = run(agent(false), &params(RrProto::Udp, 4), &Quiet);
    assert_both_directions_close(&r);
    assert_eq!(r.reverse.unwrap().responder.rejected, 0);
}

#[test]
fn tcp_bidir_closes_in_both_directions() {
    let r = run(agent(false), &params(RrProto::Tcp, 3), &Quiet);
    assert_both_directions_close(&r);
    assert!(r.client.errors.is_empty(), "{:?}", r.client.errors);
}

#[test]
fn bidir_verify_catches_corruption_in_the_forward_direction() {
    let mut p = params(RrProto::Udp, 2);
    p.hooks = Some(RrHooks {
        corrupt_response: 20,
        ..RrHooks::default()
    });
    let r = run(agent(true), &p, &Quiet);
    assert_eq!(r.client.counts.corrupt, 1);
    let rev = r.reverse.unwrap();
    assert_eq!(
        rev.requester.counts.corrupt, 0,
        "the hook is the agent's only"
    );
    assert!(rev.requester.counts.blocks > 50);
}

/// Sends, from a third socket, one datagram with a wrong token and one with the
/// right shape but a token guessed as 0, to the client's responder; both must be
/// rejected and neither answered.
struct Intruder {
    sock: UdpSocket,
    sent: Mutex<u32>,
}

impl RrObserver for Intruder {
    fn responder(&self, addr: SocketAddr) {
        let mut buf = vec![0u8; 40 + 128];
        for token in [0xdead_beef_u64, 0] {
            Header {
                kind: Kind::RrRequest,
                client: 0,
                token,
                seq: 1,
                stamp: 0,
                aux: 0,
                len: 128,
            }
            .write(&mut buf);
            self.sock.send_to(&buf, addr).unwrap();
            *self.sent.lock().unwrap() += 1;
        }
    }
}

#[test]
fn client_responder_rejects_a_third_socket_and_does_not_answer() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let intruder = Intruder {
        sock,
        sent: Mutex::new(0),
    };
    let r = run(agent(false), &params(RrProto::Udp, 1), &intruder);
    assert_eq!(
        *intruder.sent.lock().unwrap(),
        2,
        "the responder was announced"
    );
    let rev = r.reverse.as_ref().unwrap();
    assert_eq!(rev.responder.rejected, 2, "{:?}", rev.responder);
    let mut buf = vec![0u8; 65_536];
    assert!(
        intruder.sock.recv_from(&mut buf).is_err(),
        "the client's responder answered a datagram it should have dropped"
    );
    assert_both_directions_close(&r);
}
