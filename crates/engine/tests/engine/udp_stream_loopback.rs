//! UDP streams over loopback against an in-process agent: the accounting identity
//! sent = received + lost must hold exactly per direction, the interval samples must
//! add up to the totals, and the agent's --max-rate must apply.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::test_agent;
use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::config::UdpStreamConfig;
use mtuperf_engine::stream::udp::client::Quiet;
use mtuperf_engine::stream::udp::{self, metrics, UdpStreamResult};
use mtuperf_engine::EngineError;
use mtuperf_engine::Shutdown;
use mtuperf_proto::msg::{Direction, Refusal, StreamLimit};

fn agent(max_rate_bps: Option<u64>) -> (SocketAddr, Shutdown) {
    let mut config = test_agent::config();
    if let Some(r) = max_rate_bps {
        config.limits.max_rate_bps = r;
    }
    let (addr, stop) = test_agent::start(config);
    (addr, stop)
}

fn run(addr: SocketAddr, c: &UdpStreamConfig) -> Result<UdpStreamResult, EngineError> {
    let session = Session::connect(&addr.to_string(), &ConnectOptions::default()).unwrap();
    let r = udp::run(&session, c, &Arc::new(AtomicBool::new(false)), &Quiet);
    session.close();
    r
}

fn config(direction: Direction, streams: u32, rate_bps: u64) -> UdpStreamConfig {
    UdpStreamConfig {
        streams,
        direction,
        block: 8192,
        limit: StreamLimit::Time { ms: 600 },
        rate_bps,
        window: None,
        interval: Some(Duration::from_millis(100)),
        cpus: None,
        agent_cpus: None,
        ..UdpStreamConfig::default()
    }
}

fn assert_exact(r: &UdpStreamResult, directions: usize) {
    let m = metrics::compute(r);
    assert_eq!(m.directions.len(), directions, "{m:?}");
    assert!(!r.interrupted, "{:?}", r.interrupted_by);
    for d in &m.directions {
        assert!(d.sent > 0, "{d:?}");
        assert!(d.exact, "the sender's count reached the receiver: {d:?}");
        assert_eq!(d.sent, d.received + d.lost, "{d:?}");
        assert_eq!(d.duplicated, 0);
    }
    // Each end's intervals add up to its totals; interval losses add up to the loss
    // the receiver saw in sequence gaps (the tail after its last arrival excepted).
    for end in [&r.client, &r.agent] {
        let sent: u64 = end.conns.iter().map(|c| c.sent).sum();
        let recv: u64 = end.conns.iter().map(|c| c.received).sum();
        assert_eq!(end.intervals.iter().map(|i| i.sent).sum::<u64>(), sent);
        assert_eq!(end.intervals.iter().map(|i| i.received).sum::<u64>(), recv);
        let gaps: u64 = end
            .conns
            .iter()
            .filter(|c| !c.sending)
            .map(|c| c.next_seq - c.received)
            .sum();
        assert_eq!(
            end.intervals.iter().map(|i| i.lost).sum::<i64>(),
            gaps as i64
        );
    }
}

#[test]
fn forward_reverse_and_bidir_account_exactly() {
    let (addr, _stop) = agent(None);
    // 200 Mbit/s is far below what loopback carries: no loss expected, but the
    // identity must hold whatever the loss.
    for (dir, n) in [
        (Direction::Forward, 1),
        (Direction::Reverse, 1),
        (Direction::Bidir, 2),
    ] {
        let r = run(addr, &config(dir, 2, 200_000_000)).unwrap();
        assert_exact(&r, n);
    }
}

#[test]
fn bytes_limit_sends_whole_datagrams_and_the_rate_is_held() {
    let (addr, _stop) = agent(None);
    let c = UdpStreamConfig {
        limit: StreamLimit::Bytes { total: 8192 * 1000 },
        ..config(Direction::Forward, 1, 100_000_000)
    };
    let r = run(addr, &c).unwrap();
    assert_exact(&r, 1);
    let m = metrics::compute(&r);
    assert_eq!(m.directions[0].sent, 1000);
    // 1000 × 64 kbit at 100 Mbit/s is 655 ms: paced, not sent in one burst.
    let d = &m.directions[0];
    assert!(d.offered_bps < 130e6 && d.offered_bps > 70e6, "{d:?}");
}

#[test]
fn the_agent_refuses_a_rate_above_its_max_rate() {
    let (addr, _stop) = agent(Some(50_000_000));
    let err = run(addr, &config(Direction::Forward, 1, 100_000_000)).unwrap_err();
    assert!(
        matches!(&err, EngineError::Refused(Refusal::Limit { limit, .. }) if limit == "max-rate"),
        "{err}"
    );
    // "max" runs at the agent's --max-rate.
    let r = run(addr, &config(Direction::Reverse, 1, 0)).unwrap();
    assert_eq!(r.paced_rate_bps, 50_000_000);
    assert_exact(&r, 1);
}
