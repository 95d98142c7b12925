//! `rr --from` on loopback against in-process keyed agents (issue 20): two client
//! agents drive one target's agent at once; the parts add up to the total, the merged
//! histogram holds every answered block, and the target's accounts sum to what it
//! served. A --from host that is not there ends the step with its name, in time; one
//! whose load fails once the sessions are open leaves the others' result, marked.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::test_agent;
use mtuperf_engine::client::ConnectOptions;
use mtuperf_engine::config::RrConfig;
use mtuperf_engine::rr;
use mtuperf_engine::{EngineError, Interrupt};
use mtuperf_proto::auth::Key;
use mtuperf_proto::failed::Failed;
use mtuperf_proto::msg::rr::RrProto;
use mtuperf_proto::msg::Refusal;

const KEY: Key = Key([9u8; 32]);

fn agent(max_clients: Option<u32>) -> SocketAddr {
    agent_with(max_clients, None)
}

fn agent_with(max_clients: Option<u32>, max_sessions: Option<u32>) -> SocketAddr {
    let mut config = test_agent::config();
    config.key = Some(KEY);
    if let Some(m) = max_clients {
        config.limits.max_clients = m;
    }
    if let Some(m) = max_sessions {
        config.limits.max_sessions = m;
    }
    let (addr, _stop) = test_agent::start(config);
    addr
}

fn opts() -> ConnectOptions {
    ConnectOptions {
        key: Some(KEY),
        ..ConnectOptions::default()
    }
}

/// One default step of `clients` clients over `ms` from `hosts` toward `target`.
fn step(
    hosts: &[String],
    target: SocketAddr,
    clients: u32,
    ms: u64,
) -> Result<rr::RrResult, EngineError> {
    let cfg = RrConfig {
        clients,
        time: Duration::from_millis(ms),
        ..RrConfig::default()
    };
    rr::run_from(
        hosts,
        &target.to_string(),
        &opts(),
        &cfg,
        &AtomicBool::new(false),
    )
}

#[test]
fn two_hosts_add_up_to_the_total_and_to_what_the_target_served() {
    let target = agent(None);
    let hosts = vec![agent(None).to_string(), agent(None).to_string()];
    for proto in [RrProto::Udp, RrProto::Tcp] {
        let cfg = RrConfig {
            proto,
            block: 4096,
            clients: 5,
            threads: Some(1),
            workers: Some(1),
            time: Duration::from_millis(500),
            ..RrConfig::default()
        };
        let stop = AtomicBool::new(false);
        let r = rr::run_from(&hosts, &target.to_string(), &opts(), &cfg, &stop).unwrap();
        assert_eq!(r.from.len(), 2);
        assert_eq!(r.from.iter().map(|h| h.clients).collect::<Vec<_>>(), [3, 2]);
        let sum = |f: &dyn Fn(&rr::RrFromHost) -> u64| r.from.iter().map(f).sum::<u64>();
        let c = &r.client.counts;
        assert!(c.blocks > 0, "{proto:?}: {c:?}");
        assert_eq!(c.blocks, sum(&|h| h.result.requester.counts.blocks));
        assert_eq!(
            c.requests_sent,
            sum(&|h| h.result.requester.counts.requests_sent)
        );
        assert_eq!(r.client.unanswered, sum(&|h| h.result.requester.unanswered));
        for h in &r.from {
            assert!(
                h.accounted,
                "{proto:?} {}: {:?}",
                h.agent, h.result.requester.counts
            );
            assert!(h.result.requester.counts.blocks > 0 && h.blocks_per_s > 0.0);
        }
        assert_eq!(c.requests_sent, c.blocks + c.lost + r.client.unanswered);
        // The merged histogram holds every answered block.
        assert_eq!(r.client.latency.count, c.blocks);
        assert_eq!(
            r.client.latency.buckets.iter().map(|b| b[1]).sum::<u64>(),
            c.blocks
        );
        // The target's accounts of the two sessions, summed.
        assert_eq!(r.agent.responses, sum(&|h| h.result.served.responses));
        assert!(r.agent.responses >= c.blocks, "{:?}", r.agent);
        assert_eq!(r.request.clients, 5);
        assert!(!r.interrupted, "{:?}", r.interrupted_by);
    }
}

#[test]
fn an_absent_host_is_named_and_ends_the_step_in_time() {
    let target = agent(None);
    // A port nobody listens on: refused at once; the host is named.
    let gone = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let hosts = vec![agent(None).to_string(), gone.clone()];
    let t0 = Instant::now();
    let r = step(&hosts, target, 2, 300);
    match r {
        Err(e @ EngineError::FromHost { .. }) => {
            assert!(e.to_string().contains(&gone), "{e}");
            assert!(e.is_unreachable(), "{e}");
        }
        other => panic!("expected the host named, got {other:?}"),
    }
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_host_beyond_its_own_limit_refuses_naming_it() {
    let target = agent(None);
    let hosts = vec![agent(Some(2)).to_string()];
    match step(&hosts, target, 8, 300) {
        Err(EngineError::FromHost { host, source }) => {
            assert_eq!(host, hosts[0]);
            assert!(
                matches!(&*source, EngineError::Refused(Refusal::Limit { limit, requested: 8, allowed: 2 }) if limit == "max-clients"),
                "{source}"
            );
        }
        other => panic!("expected a max-clients refusal, got {other:?}"),
    }
}

#[test]
fn a_stop_ends_every_host_early_with_what_it_measured() {
    let target = agent(None);
    let hosts = vec![agent(None).to_string(), agent(None).to_string()];
    let cfg = RrConfig {
        clients: 2,
        time: Duration::from_secs(20),
        ..RrConfig::default()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(500));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let t0 = Instant::now();
    let r = rr::run_from(&hosts, &target.to_string(), &opts(), &cfg, &stop).unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    assert!(r.interrupted, "{r:?}");
    assert!(r.client.counts.blocks > 0);
    for h in &r.from {
        assert!(h.accounted && !h.result.interrupted_by.is_empty(), "{h:?}");
        // The host's own causes, typed, nested under its name in the step's.
        let nested = Interrupt::FromHost {
            host: h.agent.clone(),
            causes: h.result.interrupted_by.clone(),
        };
        assert!(r.interrupted_by.contains(&nested), "{:?}", r.interrupted_by);
    }
}

/// The target refuses every host's session: each host's share of the clients is beyond
/// its --max-clients. The step is the first host's error, naming the host, the target
/// and the limit.
#[test]
fn a_target_refusing_every_host_is_the_first_hosts_error() {
    let target = agent(Some(2));
    let hosts = vec![agent(None).to_string(), agent(None).to_string()];
    match step(&hosts, target, 6, 500) {
        Err(EngineError::FromHost { host, source }) => {
            assert_eq!(host, hosts[0]);
            // The target's refusal reaches this end typed through the host (report
            // words it in the binary); the engine's text names the target and the limit.
            assert!(
                matches!(&*source, EngineError::PeerRefused { peer, refusal: Refusal::Limit { limit, requested: 3, allowed: 2 } }
                    if *peer == target.to_string() && limit == "max-clients"),
                "{source:?}"
            );
            let m = source.to_string();
            assert!(
                m.contains(&format!("the peer agent {target} refused"))
                    && m.contains("max-clients"),
                "{m}"
            );
        }
        other => panic!("expected the target's --max-clients refusal, got {other:?}"),
    }
}

/// One host's load fails once every session is open (the target refuses it for a
/// limit): the other host's result is kept, the failed host listed with its share and
/// error, and the step marked interrupted. The target's refusal, relayed typed by the
/// host, is kept typed (`refused` says which it must be).
fn assert_partial(
    r: &rr::RrResult,
    measured: &str,
    failed: &str,
    refused: fn(&Refusal) -> bool,
    target: SocketAddr,
) {
    assert_eq!(r.from.len(), 1, "{r:?}");
    let h = &r.from[0];
    assert_eq!(h.agent, measured);
    let c = &r.client.counts;
    assert!(c.blocks > 0, "{c:?}");
    // The totals are the measured host's alone.
    assert_eq!(*c, h.result.requester.counts);
    assert_eq!(r.client.unanswered, h.result.requester.unanswered);
    assert_eq!(c.requests_sent, c.blocks + c.lost + r.client.unanswered);
    assert!(h.accounted);
    assert_eq!(r.client.latency.count, c.blocks);
    assert_eq!(r.agent.responses, h.result.served.responses);
    assert_eq!(r.request.clients, h.clients);
    assert_eq!(r.local_addr, measured);
    assert_eq!(r.from_failed.len(), 1, "{r:?}");
    let f = &r.from_failed[0];
    assert_eq!(f.agent, failed);
    assert!(
        matches!(&f.error, Failed::PeerRefused { peer, refusal } if *peer == target.to_string() && refused(refusal)),
        "{:?}",
        f.error
    );
    assert!(r.interrupted);
    assert_eq!(
        r.interrupted_by,
        vec![
            Interrupt::FromHostsMissing {
                measured: 1,
                hosts: 2
            },
            Interrupt::FromHostFailed {
                host: failed.to_string(),
                error: f.error.clone(),
            },
        ]
    );
}

#[test]
fn a_host_the_target_refuses_is_listed_and_the_others_result_kept() {
    // 5 clients over two hosts: 3 and 2; the target allows 2 per session.
    let target = agent(Some(2));
    let hosts = vec![agent(None).to_string(), agent(None).to_string()];
    let r = step(&hosts, target, 5, 500).unwrap();
    assert_partial(
        &r,
        &hosts[1],
        &hosts[0],
        |r| matches!(r, Refusal::Limit { limit, .. } if limit == "max-clients"),
        target,
    );
    assert_eq!(r.from[0].clients, 2);
    assert_eq!(r.from_failed[0].clients, 3);
}

#[test]
fn a_host_beyond_the_targets_sessions_is_listed_and_the_others_result_kept() {
    // One session allowed, two hosts: whichever comes second is refused.
    let target = agent_with(None, Some(1));
    let hosts = vec![agent(None).to_string(), agent(None).to_string()];
    let r = step(&hosts, target, 2, 500).unwrap();
    let (measured, failed) = match r.from.first() {
        Some(h) if h.agent == hosts[0] => (&hosts[0], &hosts[1]),
        _ => (&hosts[1], &hosts[0]),
    };
    assert_partial(
        &r,
        measured,
        failed,
        |r| matches!(r, Refusal::Busy { .. }),
        target,
    );
}
