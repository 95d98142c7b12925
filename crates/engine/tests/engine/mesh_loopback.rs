//! Third-party tests and discovery on loopback against in-process agents (issue 14):
//! a keyed agent runs a path test toward another keyed agent and returns it; an
//! unkeyed agent refuses third-party requests; a keyed agent refuses to test toward
//! an agent that does not authenticate (and sends it no probe); the asker is logged.

use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::test_agent;
use mtuperf_engine::agent::LogLine;
use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::error::Within;
use mtuperf_engine::mesh::{self, BlockTest, MeshConfig, MeshTests, QuietMesh};
use mtuperf_engine::EngineError;
use mtuperf_proto::auth::Key;
use mtuperf_proto::msg::mesh::{
    DiscoverRequest, Discovery, StopKind, ThirdPartyRequest, ThirdPartyResult, ThirdPartyTest,
};
use mtuperf_proto::msg::rr::RrProto;
use mtuperf_proto::msg::{ClientMsg, PeerAuth, Refusal};

const KEY: Key = Key([7u8; 32]);

fn agent(key: Option<Key>) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let mut config = test_agent::config();
    config.key = key;
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    config.log = Arc::new(move |l: &LogLine| {
        sink.lock()
            .unwrap()
            .push(format!("{} {}", l.event, l.message));
    });
    let (addr, _stop) = test_agent::start(config);
    (addr, lines)
}

fn opts(key: Option<Key>) -> ConnectOptions {
    ConnectOptions {
        key,
        ..ConnectOptions::default()
    }
}

fn ask(a: SocketAddr, key: Option<Key>, to: SocketAddr) -> Result<ThirdPartyResult, EngineError> {
    let s = Session::connect(&a.to_string(), &opts(key)).unwrap();
    let r = s.ask::<ThirdPartyResult>(
        &ClientMsg::ThirdParty(ThirdPartyRequest {
            test: ThirdPartyTest::Path,
            from: "127.0.0.1".parse().unwrap(),
            to,
            mss: None,
        }),
        "third-party result",
    );
    s.close();
    r
}

#[test]
fn a_keyed_agent_runs_a_path_test_toward_a_keyed_peer_and_logs_who_asked() {
    let (a, log) = agent(Some(KEY));
    let (b, _) = agent(Some(KEY));
    let Ok(ThirdPartyResult::Path(p)) = ask(a, Some(KEY), b) else {
        panic!("no path result");
    };
    // Loopback carries its whole MTU (65536, read as the largest IP packet) both ways.
    assert_eq!(p.forward.stop, StopKind::Top, "{p:?}");
    assert!(p.forward.largest_ok >= 60_000, "{p:?}");
    assert!(p.reverse.largest_ok >= 60_000, "{p:?}");
    // Nothing fell short: no router was looked for, no vanishing hop located.
    assert_eq!((&p.first_router, &p.vanish_after), (&None, &None), "{p:?}");
    let lines = log.lock().unwrap().join("\n");
    assert!(
        lines.contains(&format!(
            "third-party path test from 127.0.0.1 to {b}, asked by 127.0.0.1:"
        )),
        "{lines}"
    );
}

#[test]
fn an_unkeyed_agent_refuses_third_party_requests() {
    let (a, _) = agent(None);
    let (b, _) = agent(Some(KEY));
    match ask(a, None, b) {
        Err(EngineError::Refused(Refusal::KeyRequired { what })) => {
            assert_eq!(what, "a third-party (mesh) test");
        }
        other => panic!("expected a key_required refusal, got {other:?}"),
    }
}

#[test]
fn a_keyed_agent_refuses_to_test_toward_an_agent_that_does_not_authenticate() {
    let (a, _) = agent(Some(KEY));
    // An open agent (no key), and one holding another key: neither completes the
    // keyed handshake with A, so A sends neither a probe.
    let (open, open_log) = agent(None);
    let (other, _) = agent(Some(Key([9u8; 32])));
    for peer in [open, other] {
        match ask(a, Some(KEY), peer) {
            Err(EngineError::Refused(Refusal::PeerNotAuthenticated { peer: p, why })) => {
                assert_eq!(p, peer.to_string());
                // Why, typed: the open agent holds no key, the other cannot prove
                // it holds A's.
                let want = if peer == open {
                    PeerAuth::PeerOpen
                } else {
                    PeerAuth::PeerProof
                };
                assert_eq!(why, want);
            }
            other => panic!("expected peer_not_authenticated for {peer}, got {other:?}"),
        }
    }
    // The open agent saw a session opened and closed, never a test.
    let lines = open_log.lock().unwrap().join("\n");
    assert!(!lines.contains("path"), "{lines}");
}

#[test]
fn a_peer_address_that_is_not_unicast_or_a_source_not_ours_is_refused() {
    let (a, _) = agent(Some(KEY));
    let s = Session::connect(&a.to_string(), &opts(Some(KEY))).unwrap();
    for (from, to) in [
        ("127.0.0.1", "255.255.255.255:7878"),
        ("127.0.0.1", "0.0.0.0:7878"),
        // TEST-NET-3 is never configured on this host.
        ("203.0.113.9", "127.0.0.1:7878"),
    ] {
        let r = s.ask::<ThirdPartyResult>(
            &ClientMsg::ThirdParty(ThirdPartyRequest {
                test: ThirdPartyTest::Path,
                from: from.parse().unwrap(),
                to: to.parse().unwrap(),
                mss: None,
            }),
            "third-party result",
        );
        assert!(
            matches!(r, Err(EngineError::Refused(Refusal::BadRequest { .. }))),
            "{from} -> {to}: {r:?}"
        );
    }
    s.close();
}

#[test]
fn discovery_lists_addresses_with_their_prefixes() {
    let (a, _) = agent(Some(KEY));
    let s = Session::connect(&a.to_string(), &opts(Some(KEY))).unwrap();
    let d: Discovery = s
        .ask(&ClientMsg::Discover(DiscoverRequest {}), "discovery")
        .unwrap();
    s.close();
    assert!(!d.facts.hostname.is_empty());
    // Loopback is not an interconnect: never listed.
    assert!(d.addrs.iter().all(|x| x.iface != "lo"), "{:?}", d.addrs);
    for x in &d.addrs {
        assert!(d.facts.ifaces.iter().any(|i| i.info.name == x.iface));
    }
}

#[test]
fn a_mesh_of_loopback_agents_finds_no_shared_network() {
    // Loopback addresses are not interconnect networks: the orchestrator says so
    // rather than testing nothing and calling it good.
    let (a, _) = agent(Some(KEY));
    let (b, _) = agent(Some(KEY));
    let cfg = MeshConfig {
        block: mtuperf_engine::mesh::BlockTest::default(),
        oifcfg: None,
        max_block_p99: None,
        nodes: vec![(Some("a".into()), a.to_string()), (None, b.to_string())],
        connect: opts(Some(KEY)),
        nets: vec!["127.0.0.0/8".parse().unwrap()],
        expect: None,
        expect_nets: Vec::new(),
        tests: vec![MeshTests::Path],
        per_node: 2,
        parallel: 16,
        pair_timeout: Duration::from_secs(30),
        load_time: Duration::from_secs(1),
    };
    let stop = AtomicBool::new(false);
    match mesh::run(&cfg, &stop, &QuietMesh) {
        Err(EngineError::NoSharedNetwork {
            within: Within::Nets(nets),
        }) => assert_eq!(nets, cfg.nets),
        other => panic!("expected no network, got {other:?}"),
    }
}

#[test]
fn rr_and_stream_third_party_tests_report_what_they_measured() {
    let (a, _) = agent(Some(KEY));
    let (b, _) = agent(Some(KEY));
    let s = Session::connect(&a.to_string(), &opts(Some(KEY))).unwrap();
    let run = |test| {
        s.ask::<ThirdPartyResult>(
            &ClientMsg::ThirdParty(ThirdPartyRequest {
                test,
                from: "127.0.0.1".parse().unwrap(),
                to: b,
                mss: None,
            }),
            "third-party result",
        )
    };
    // The mesh's block test: Cache Fusion's pattern, one 8 KiB UDP block per 128 B
    // request, one in flight, a block lost after 500 ms.
    let rr = BlockTest::default().load(Duration::from_millis(300));
    assert_eq!(
        (rr.proto, rr.block, rr.request, rr.clients, rr.timeout_ms),
        (RrProto::Udp, 8192, 128, 1, 500)
    );
    match run(ThirdPartyTest::Rr { rr }) {
        Ok(ThirdPartyResult::Rr(r)) => {
            let c = r.counts;
            assert!(c.blocks > 0, "{r:?}");
            assert_eq!(c.requests_sent, c.blocks + c.lost + r.unanswered, "{r:?}");
            assert_eq!(r.served, c.requests_sent, "{r:?}");
            let (p50, p99, p999, max) = (
                r.p50_ns.unwrap(),
                r.p99_ns.unwrap(),
                r.p999_ns.unwrap(),
                r.max_ns.unwrap(),
            );
            assert!(p50 > 0 && p50 <= p99 && p99 <= p999 && p999 <= max, "{r:?}");
            assert!(r.wall_ns >= 200_000_000, "{r:?}");
            // Loopback carries 8 KiB in one datagram: the server created no fragment.
            assert_eq!(r.fragments, Some(0), "{r:?}");
            assert_eq!((r.block, r.request, r.timeout_ms), (8192, 128, 500));
        }
        other => panic!("rr: {other:?}"),
    }
    match run(ThirdPartyTest::Stream { duration_ms: 300 }) {
        Ok(ThirdPartyResult::Stream(r)) => {
            assert!(r.bytes > 0, "{r:?}");
            assert!(r.wall_ns >= 200_000_000, "{r:?}");
        }
        other => panic!("stream: {other:?}"),
    }
    // Beyond the agent's --max-duration: refused by name.
    match run(ThirdPartyTest::Stream {
        duration_ms: 7_200_000,
    }) {
        Err(EngineError::Refused(Refusal::Limit { limit, .. })) => {
            assert_eq!(limit, "max-duration");
        }
        other => panic!("limit: {other:?}"),
    }
    s.close();
}

#[test]
fn an_agent_reports_its_kernel_counters_and_refuses_too_many_interfaces() {
    use mtuperf_proto::msg::mesh::{CountersRequest, NodeCounters, MAX_COUNTER_IFACES};
    let (a, _) = agent(Some(KEY));
    let s = Session::connect(&a.to_string(), &opts(Some(KEY))).unwrap();
    let c: NodeCounters = s
        .ask(
            &ClientMsg::Counters(CountersRequest {
                ifaces: vec!["lo".into(), "no-such-nic0".into()],
            }),
            "kernel counters",
        )
        .unwrap();
    assert!(c.snmp.is_some(), "{c:?}");
    assert_eq!(c.nics.len(), 2);
    assert!(c.nics[0].counters.is_some(), "{c:?}");
    assert!(c.nics[1].counters.is_none(), "{c:?}");
    let r = s.ask::<NodeCounters>(
        &ClientMsg::Counters(CountersRequest {
            ifaces: vec!["lo".into(); MAX_COUNTER_IFACES + 1],
        }),
        "kernel counters",
    );
    assert!(
        matches!(r, Err(EngineError::Refused(Refusal::BadRequest { .. }))),
        "{r:?}"
    );
    s.close();
}

/// Issue 30: a session asked to clamp its MSS (a mesh load test on a path measured
/// short of its network's MTU) connects with it, so the agent's report crosses in
/// segments that fit the path.
#[test]
fn a_clamped_session_connects_with_its_mss() {
    let (a, _) = agent(None);
    let s = Session::connect(
        &a.to_string(),
        &ConnectOptions {
            mss: Some(1440),
            ..ConnectOptions::default()
        },
    )
    .unwrap();
    let mss = mtuperf_sys::sockopt::tcp_maxseg(s.control.socket()).unwrap();
    assert!(mss <= 1440, "{mss}");
    s.close();
    let s = Session::connect(&a.to_string(), &ConnectOptions::default()).unwrap();
    let mss = mtuperf_sys::sockopt::tcp_maxseg(s.control.socket()).unwrap();
    assert!(mss > 1440, "loopback's own MSS: {mss}");
    s.close();
}
