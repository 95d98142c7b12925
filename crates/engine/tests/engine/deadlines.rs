//! Deadlines on loopback against an in-process agent (issue 12): the idle timeout is
//! one deadline on the whole next request, from the end of the last test, so neither
//! a frame trickled a byte at a time nor pings without tests keep a session slot; a
//! live interval under the protocol's minimum is refused by name.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::test_agent;
use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::EngineError;
use mtuperf_proto::codec::Codec;
use mtuperf_proto::msg::{
    AgentMsg, ClientMsg, Direction, Refusal, StreamLimit, StreamRequest, MIN_INTERVAL_MS,
};

const IDLE: Duration = Duration::from_secs(2);

fn agent() -> SocketAddr {
    let mut config = test_agent::config();
    config.idle_timeout = IDLE;
    let (addr, _stop) = test_agent::start(config);
    addr
}

/// Seconds until the agent closes `session`'s control connection (None: not within 10 s).
fn closed_after(session: &Session, from: Instant) -> Option<f64> {
    let mut sock = session.control.socket();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let mut b = [0u8; 256];
    while from.elapsed() < Duration::from_secs(10) {
        match sock.read(&mut b) {
            Ok(0) => return Some(from.elapsed().as_secs_f64()),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => return Some(from.elapsed().as_secs_f64()),
        }
    }
    None
}

#[test]
fn a_trickled_request_does_not_stretch_the_idle_timeout() {
    let addr = agent();
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let from = Instant::now();
    // A Ping frame, one byte every 300 ms: each read is well inside the timeout,
    // the frame as a whole is not.
    let frame = Codec::client().encode(&ClientMsg::Ping);
    let trickle = {
        let mut sock = session.control.socket().try_clone().unwrap();
        thread::spawn(move || {
            for b in frame.iter().cycle().take(60) {
                if sock.write_all(&[*b]).is_err() {
                    break;
                }
                thread::sleep(Duration::from_millis(300));
            }
        })
    };
    let closed = closed_after(&session, from).expect("the agent kept a trickling session open");
    assert!(
        closed < IDLE.as_secs_f64() + 1.5,
        "closed only after {closed:.1} s with an idle timeout of {IDLE:?}"
    );
    let _ = trickle.join();
}

#[test]
fn pings_without_tests_do_not_hold_a_session() {
    let addr = agent();
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let from = Instant::now();
    let mut acked = 0;
    let ended = loop {
        assert!(
            from.elapsed() < Duration::from_secs(10),
            "pings kept the session open for 10 s ({acked} acked)"
        );
        match session.request(&ClientMsg::Ping, "ack") {
            Ok(AgentMsg::Ack) => acked += 1,
            Ok(other) => panic!("unexpected {other:?}"),
            Err(_) => break from.elapsed(),
        }
        thread::sleep(Duration::from_millis(250));
    };
    assert!(acked > 0, "no ping was answered at all");
    assert!(
        ended < IDLE + Duration::from_millis(1500),
        "session held {ended:?} by pings with an idle timeout of {IDLE:?}"
    );
}

#[test]
fn a_test_restarts_the_idle_timeout() {
    let addr = agent();
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    thread::sleep(IDLE / 2);
    // A refused request is not a test; a test (even a short one) is.
    let req = StreamRequest {
        streams: 1,
        direction: Direction::Forward,
        block: 8192,
        limit: StreamLimit::Time { ms: 1500 },
        window: None,
        mss: None,
        interval_ms: 0,
        omit_ms: 0,
        rx_coalesce_us: 0,
        rx_poll_us: 0,
        zerocopy: false,
        cpus: None,
    };
    let params = mtuperf_engine::stream::StreamParams {
        request: req,
        file: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let r = mtuperf_engine::stream::run(
        &session,
        &params,
        &stop,
        &mtuperf_engine::stream::client::Quiet,
    )
    .unwrap();
    assert!(!r.interrupted, "{:?}", r.interrupted_by);
    // The test ended after the first idle period would have: the session is alive.
    match session.request(&ClientMsg::Ping, "ack") {
        Ok(AgentMsg::Ack) => {}
        other => panic!("session closed right after a test: {other:?}"),
    }
}

#[test]
fn an_interval_under_the_minimum_is_refused_by_name() {
    let addr = agent();
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let req = StreamRequest {
        streams: 1,
        direction: Direction::Forward,
        block: 8192,
        limit: StreamLimit::Time { ms: 460_000 },
        window: None,
        mss: None,
        interval_ms: 1,
        omit_ms: 0,
        rx_coalesce_us: 0,
        rx_poll_us: 0,
        zerocopy: false,
        cpus: None,
    };
    match session.request(&ClientMsg::Stream(req.clone()), "stream ready") {
        Err(EngineError::Refused(Refusal::BadRequest { detail })) => {
            assert!(
                detail.contains(&format!("minimum of {MIN_INTERVAL_MS} ms")),
                "{detail}"
            );
        }
        other => panic!("interval_ms=1 not refused: {other:?}"),
    }
    // The minimum itself is accepted (and the session still usable).
    let ok = StreamRequest {
        interval_ms: MIN_INTERVAL_MS,
        limit: StreamLimit::Time { ms: 200 },
        ..req
    };
    let params = mtuperf_engine::stream::StreamParams {
        request: ok,
        file: None,
    };
    let r = mtuperf_engine::stream::run(
        &session,
        &params,
        &Arc::new(AtomicBool::new(false)),
        &mtuperf_engine::stream::client::Quiet,
    )
    .unwrap();
    assert!(!r.interrupted, "{:?}", r.interrupted_by);
    assert!(r.agent.intervals.len() >= 10, "{}", r.agent.intervals.len());
}
