//! UDP streams over loopback in each `--udp-io` mode: sent = received + lost holds
//! exactly per direction, every socket reports the mode it used, a --bytes run sends
//! exactly its datagrams however they are batched, and with GSO each send carries
//! several datagrams that the GRO receiver gets whole (loopback does not cut them)
//! and splits back one by one.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::test_agent;
use mtuperf_engine::agent::AgentConfig;
use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::config::UdpStreamConfig;
use mtuperf_engine::stream::udp::client::Quiet;
use mtuperf_engine::stream::udp::{self, metrics, UdpStreamResult};
use mtuperf_proto::msg::udp::{IoMode, UdpConnReport, UdpIo};
use mtuperf_proto::msg::{Direction, StreamLimit};

fn agent() -> SocketAddr {
    agent_on("127.0.0.1:0")
}

fn agent_on(bind: &str) -> SocketAddr {
    let (addr, _stop) = test_agent::start(AgentConfig::new(vec![bind.parse().unwrap()]));
    addr
}

fn run(addr: SocketAddr, c: &UdpStreamConfig) -> UdpStreamResult {
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let r = udp::run(&session, c, &Arc::new(AtomicBool::new(false)), &Quiet).unwrap();
    session.close();
    r
}

fn config(io: UdpIo, direction: Direction) -> UdpStreamConfig {
    UdpStreamConfig {
        streams: 1,
        direction,
        block: 1472,
        limit: StreamLimit::Time { ms: 500 },
        // A slot every 39 µs: six datagrams in a batch's 250 µs.
        rate_bps: 300_000_000,
        interval: Some(Duration::from_millis(100)),
        io,
        ..UdpStreamConfig::default()
    }
}

fn conns(r: &UdpStreamResult) -> impl Iterator<Item = &UdpConnReport> {
    r.client.conns.iter().chain(&r.agent.conns)
}

fn assert_exact(what: &str, r: &UdpStreamResult) {
    assert!(!r.interrupted, "{what}: {:?}", r.interrupted_by);
    for d in &metrics::compute(r).directions {
        assert!(d.sent > 0, "{what}: {d:?}");
        assert!(d.exact, "{what}: {d:?}");
        assert_eq!(d.sent, d.received + d.lost, "{what}: {d:?}");
        assert_eq!(d.duplicated, 0, "{what}");
    }
    for end in [&r.client, &r.agent] {
        let sent: u64 = end.conns.iter().map(|c| c.sent).sum();
        let recv: u64 = end.conns.iter().map(|c| c.received).sum();
        assert_eq!(end.intervals.iter().map(|i| i.sent).sum::<u64>(), sent);
        assert_eq!(end.intervals.iter().map(|i| i.received).sum::<u64>(), recv);
    }
}

#[test]
fn every_mode_accounts_exactly_in_every_direction() {
    let addr = agent();
    for (io, send_mode, recv_mode) in [
        (UdpIo::Plain, IoMode::Plain, IoMode::Plain),
        (UdpIo::Batch, IoMode::Batch, IoMode::Batch),
        (UdpIo::Gso, IoMode::Gso, IoMode::Gro),
    ] {
        for dir in [Direction::Forward, Direction::Reverse, Direction::Bidir] {
            let what = format!("{io:?} {dir:?}");
            let r = run(addr, &config(io, dir));
            assert_exact(&what, &r);
            for c in conns(&r) {
                let want = if c.sending { send_mode } else { recv_mode };
                assert_eq!(c.io, Some(want), "{what}: {c:?}");
                assert_eq!(c.fallback, None, "{what}: {c:?}");
                if c.sending {
                    assert!(c.calls > 0 && c.messages > 0, "{what}: {c:?}");
                    if io == UdpIo::Plain {
                        assert_eq!((c.calls, c.messages), (c.sent, c.sent), "{what}");
                    } else {
                        // Six slots to a batch: far fewer calls than datagrams.
                        assert!(c.calls * 3 < c.sent, "{what}: {c:?}");
                    }
                    if io == UdpIo::Gso {
                        assert!(c.messages * 3 < c.sent, "{what}: {c:?}");
                        assert_eq!(c.segments, 44, "{what}: 65507 / 1472 to a send");
                    }
                } else {
                    assert_eq!(c.drops.map(|_| ()), Some(()), "{what}: {c:?}");
                }
            }
        }
    }
}

#[test]
fn gro_receives_are_the_gso_sends_split_back_into_their_datagrams() {
    let addr = agent();
    let r = run(addr, &config(UdpIo::Gso, Direction::Forward));
    assert_exact("gso", &r);
    let sender = &r.client.conns[0];
    let receiver = &r.agent.conns[0];
    // Loopback carries every GSO send whole: each is one GRO receive, or one drop.
    assert_eq!(
        receiver.messages + receiver.drops.unwrap(),
        sender.messages,
        "{sender:?} {receiver:?}"
    );
    assert!(receiver.segments > 1, "{receiver:?}");
    assert!(receiver.messages * 3 < receiver.received, "{receiver:?}");
    // Every datagram counted on its own: its bytes, once.
    assert_eq!(receiver.received_bytes, receiver.received * 1472);
}

#[test]
fn a_bytes_limit_sends_exactly_its_datagrams_in_any_mode() {
    let addr = agent();
    for io in [UdpIo::Plain, UdpIo::Batch, UdpIo::Gso] {
        let c = UdpStreamConfig {
            // 1001 datagrams: not a multiple of any batch.
            limit: StreamLimit::Bytes {
                total: 1472 * 1000 + 1,
            },
            ..config(io, Direction::Forward)
        };
        let r = run(addr, &c);
        assert_exact(&format!("{io:?}"), &r);
        assert_eq!(r.client.conns[0].sent, 1001, "{io:?}");
        assert_eq!(r.client.conns[0].sent_bytes, 1001 * 1472, "{io:?}");
    }
}

#[test]
fn ipv6_datagrams_use_gso_and_gro_too() {
    if std::net::UdpSocket::bind("[::1]:0").is_err() {
        eprintln!("skipped: no IPv6 loopback");
        return;
    }
    let addr = agent_on("[::1]:0");
    let r = run(addr, &config(UdpIo::Gso, Direction::Forward));
    assert_exact("gso over ::1", &r);
    assert_eq!(
        r.client.conns[0].io,
        Some(IoMode::Gso),
        "{:?}",
        r.client.conns[0]
    );
    assert_eq!(
        r.agent.conns[0].io,
        Some(IoMode::Gro),
        "{:?}",
        r.agent.conns[0]
    );
    assert!(r.client.conns[0].messages * 3 < r.client.conns[0].sent);
}
