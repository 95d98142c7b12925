//! Stream over loopback against an in-process agent: byte accounting must close in
//! every direction and with several streams.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::test_agent;
use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::stream::client::Quiet;
use mtuperf_engine::stream::{self, metrics, StreamParams};
use mtuperf_engine::{EngineError, Shutdown};
use mtuperf_proto::msg::{Direction, Refusal, StreamLimit, StreamRequest};

fn agent() -> (SocketAddr, Shutdown) {
    let (addr, stop) = test_agent::start(test_agent::config());
    (addr, stop)
}

fn request(direction: Direction, streams: u32, limit: StreamLimit) -> StreamRequest {
    StreamRequest {
        streams,
        direction,
        block: 8192,
        limit,
        window: None,
        mss: None,
        interval_ms: 100,
        omit_ms: 0,
        rx_coalesce_us: mtuperf_proto::msg::DEFAULT_RX_COALESCE_US,
        rx_poll_us: 0,
        zerocopy: false,
        cpus: None,
    }
}

/// Both directions, `streams` connections each way, `per_stream` bytes on each.
fn bidir_bytes(streams: u32, per_stream: u64) -> StreamRequest {
    request(
        Direction::Bidir,
        streams,
        StreamLimit::Bytes {
            total: u64::from(streams) * per_stream,
        },
    )
}

fn run(addr: SocketAddr, req: StreamRequest) -> stream::StreamResult {
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let params = StreamParams {
        request: req,
        file: None,
    };
    let r = stream::run(&session, &params, &Arc::new(AtomicBool::new(false)), &Quiet).unwrap();
    session.close();
    r
}

fn assert_balanced(r: &stream::StreamResult, directions: usize) {
    let m = metrics::compute(r);
    assert_eq!(m.directions.len(), directions);
    for d in &m.directions {
        assert!(d.bytes_written > 0, "{d:?}");
        assert_eq!(d.bytes_written, d.bytes_read, "bytes written == bytes read");
        assert!(d.complete);
        assert!(d.reads > 0 && d.writes > 0);
        assert!(d.goodput_first_last_bps.unwrap() > 0.0);
    }
    assert!(!r.interrupted);
    // The interval samples of each end add up to that end's totals.
    for end in [&r.client, &r.agent] {
        let sent: u64 = end
            .conns
            .iter()
            .filter(|c| c.sending)
            .map(|c| c.bytes)
            .sum();
        let recv: u64 = end
            .conns
            .iter()
            .filter(|c| !c.sending)
            .map(|c| c.bytes)
            .sum();
        assert_eq!(
            end.intervals.iter().map(|i| i.bytes_sent).sum::<u64>(),
            sent
        );
        assert_eq!(
            end.intervals.iter().map(|i| i.bytes_received).sum::<u64>(),
            recv
        );
        assert!(end.iface.as_ref().is_some_and(|i| i.name == "lo"));
    }
}

#[test]
fn forward_reverse_and_bidir_balance() {
    let (addr, _stop) = agent();
    let time = StreamLimit::Time { ms: 400 };
    assert_balanced(&run(addr, request(Direction::Forward, 1, time)), 1);
    assert_balanced(&run(addr, request(Direction::Reverse, 1, time)), 1);
    let r = run(addr, request(Direction::Bidir, 2, time));
    assert_eq!(r.client.conns.len(), 4);
    assert_balanced(&r, 2);
}

#[test]
fn four_streams_and_byte_limit_are_exact() {
    let (addr, _stop) = agent();
    let total = 4 * 3_000_001;
    let r = run(
        addr,
        request(Direction::Forward, 4, StreamLimit::Bytes { total }),
    );
    assert_eq!(r.client.conns.len(), 4);
    assert_balanced(&r, 1);
    let m = metrics::compute(&r);
    assert_eq!(m.directions[0].bytes_read, total);
    // Each stream carried its share exactly, including the odd last write.
    for c in &r.agent.conns {
        assert_eq!(c.bytes, 3_000_001);
    }
    // perl-sockets figures are computed from the receiver's reads.
    let p = &m.directions[0].perl;
    assert_eq!(p.bytes_received, total);
    assert!((p.avg_packet_size - total as f64 / p.packets_received as f64).abs() < 1e-6);
    assert!(p.network_elapsed_s <= p.total_elapsed_s + 1e-3);
}

#[test]
fn zero_copy_sends_from_both_ends_arrive_whole_and_say_so() {
    let (addr, _stop) = agent();
    let per_stream = 2_000_003;
    let mut req = bidir_bytes(2, per_stream);
    req.zerocopy = true;
    let r = run(addr, req);
    assert_balanced(&r, 2);
    for end in [&r.client, &r.agent] {
        assert_eq!(end.conns.len(), 4);
        for c in &end.conns {
            // Senders (the client's and the agent's) sent with sendfile; receivers read.
            assert_eq!(c.zerocopy, c.sending, "{c:?}");
            assert_eq!(c.bytes, per_stream, "{c:?}");
        }
    }
    let m = metrics::compute(&r);
    assert!(m.directions.iter().all(|d| d.sender_zerocopy == 2), "{m:?}");
    // Without the flag nothing is sent that way.
    let r = run(
        addr,
        request(
            Direction::Forward,
            1,
            StreamLimit::Bytes { total: per_stream },
        ),
    );
    assert!(r.client.conns.iter().all(|c| !c.zerocopy));
    assert_eq!(metrics::compute(&r).directions[0].sender_zerocopy, 0);
}

/// Receive polling on both ends' receivers: every byte arrives, the receivers (and
/// only they) count the reads that found the socket empty, inside their read time,
/// and the direction's figures sum them; a request that also asks for coalescing is
/// refused by the agent, naming both. (Whether an empty socket is met at all depends
/// on the host's scheduling here: on a loaded host the senders can finish before the
/// receivers start; `recv::tests` has the receiver that must meet one.)
#[test]
fn polling_receivers_on_both_ends_lose_nothing_and_count_their_empty_reads() {
    let (addr, _stop) = agent();
    let per_stream = 3_000_001;
    let mut req = bidir_bytes(2, per_stream);
    req.rx_coalesce_us = 0;
    req.rx_poll_us = 200;
    let r = run(addr, req.clone());
    assert_balanced(&r, 2);
    let mut empty = 0;
    for end in [&r.client, &r.agent] {
        for c in &end.conns {
            assert_eq!(c.bytes, per_stream, "{c:?}");
            if c.sending {
                assert_eq!((c.empty_reads, c.empty_ns), (0, 0), "{c:?}");
            } else {
                assert!(c.empty_ns <= c.in_call_ns, "{c:?}");
                assert_eq!(c.waits == 0, c.wait_ns == 0, "{c:?}");
                empty += c.empty_reads;
            }
        }
    }
    let m = metrics::compute(&r);
    let summed: u64 = m.directions.iter().map(|d| d.receiver_empty_reads).sum();
    assert_eq!(summed, empty);
    // Without polling, none.
    let r = run(
        addr,
        request(
            Direction::Forward,
            1,
            StreamLimit::Bytes { total: per_stream },
        ),
    );
    assert!(r.agent.conns.iter().all(|c| c.empty_reads == 0));
    // Both asked: refused by the agent.
    req.rx_coalesce_us = 100;
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let params = StreamParams {
        request: req,
        file: None,
    };
    let e = stream::run(&session, &params, &Arc::new(AtomicBool::new(false)), &Quiet).unwrap_err();
    assert!(
        matches!(&e, EngineError::Refused(Refusal::BadRequest { detail }) if detail.contains("exclude each other")),
        "{e:?}"
    );
}

#[test]
fn agent_refuses_beyond_its_limits_and_stays_up() {
    let mut cfg = test_agent::config();
    cfg.limits.max_streams = 2;
    cfg.limits.max_duration_ms = 1000;
    let (addr, _stop) = test_agent::start(cfg);
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    let too_many = StreamParams {
        request: request(Direction::Forward, 3, StreamLimit::Time { ms: 200 }),
        file: None,
    };
    let e = stream::run(&session, &too_many, &flag, &Quiet).unwrap_err();
    assert!(
        matches!(&e, EngineError::Refused(Refusal::Limit { limit, requested: 3, allowed: 2 }) if limit == "max-streams"),
        "{e:?}"
    );
    let too_long = StreamParams {
        request: request(Direction::Forward, 1, StreamLimit::Time { ms: 5000 }),
        file: None,
    };
    let e = stream::run(&session, &too_long, &flag, &Quiet).unwrap_err();
    assert!(
        matches!(&e, EngineError::Refused(Refusal::Limit { limit, requested: 5, allowed: 1 }) if limit == "max-duration"),
        "{e:?}"
    );
    let mut too_coalesced = request(Direction::Forward, 1, StreamLimit::Time { ms: 200 });
    too_coalesced.rx_coalesce_us = mtuperf_proto::msg::MAX_RX_COALESCE_US + 1;
    let too_coalesced = StreamParams {
        request: too_coalesced,
        file: None,
    };
    let e = stream::run(&session, &too_coalesced, &flag, &Quiet).unwrap_err();
    assert!(
        matches!(&e, EngineError::Refused(Refusal::BadRequest { detail }) if detail.contains("receive coalescing")),
        "{e:?}"
    );
    // The same session still runs a test within the limits.
    let ok = StreamParams {
        request: request(Direction::Forward, 2, StreamLimit::Time { ms: 200 }),
        file: None,
    };
    assert_balanced(&stream::run(&session, &ok, &flag, &Quiet).unwrap(), 1);
}

/// Receive coalescing off: no waits. On: the receiver waited after draining the
/// socket, each wait lasted at least the 2 µs floor, and reads plus waits fit in the
/// receiver's loop time. Bytes balance either way.
#[test]
fn receive_coalescing_is_counted_and_loses_nothing() {
    let (addr, _stop) = agent();
    let time = StreamLimit::Time { ms: 400 };
    let mut off = request(Direction::Forward, 1, time);
    off.rx_coalesce_us = 0;
    let r = run(addr, off);
    assert_balanced(&r, 1);
    assert!(r.agent.conns.iter().all(|c| c.waits == 0 && c.wait_ns == 0));
    let mut on = request(Direction::Reverse, 1, time);
    on.rx_coalesce_us = 200;
    let r = run(addr, on);
    assert_balanced(&r, 1);
    let c = &r.client.conns[0];
    assert!(!c.sending);
    assert!(
        c.waits > 0,
        "a 400 ms loopback run never drained its socket: {c:?}"
    );
    assert!(c.wait_ns >= c.waits * 2_000, "{c:?}");
    assert!(c.in_call_ns + c.wait_ns <= c.end_ns, "{c:?}");
    let m = metrics::compute(&r);
    assert_eq!(m.directions[0].receiver_waits, c.waits);
}

/// A `--bytes` run the agent's maximum duration cuts short is interrupted, and says
/// so as a typed cause carrying the agent's limit (report words it).
#[test]
fn a_bytes_run_cut_by_the_agents_max_duration_says_so_typed() {
    let mut cfg = test_agent::config();
    cfg.limits.max_duration_ms = 1000;
    let (addr, _stop) = test_agent::start(cfg);
    let r = run(
        addr,
        request(
            Direction::Forward,
            1,
            StreamLimit::Bytes {
                total: 1 << 50, // far more than a second moves on loopback
            },
        ),
    );
    assert!(r.interrupted);
    assert_eq!(
        r.interrupted_by,
        vec![mtuperf_engine::Interrupt::AgentMaxDuration { secs: 1 }]
    );
}
