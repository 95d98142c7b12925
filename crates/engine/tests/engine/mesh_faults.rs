//! The orchestrator against faulty and hostile agents, in-process on loopback
//! (issue 28, issue 34 points 5 and 6). The agents are small fakes (`fake_agent`)
//! that complete the keyed handshake and answer discovery and third-party tests as
//! each test scripts: a node that never returns its result, one that freezes mid-run
//! as a SIGSTOPped agent does, one that reports contradictory or impossible values,
//! one whose peers refuse a whole network; and a mesh stopped by Ctrl-C. No test
//! traffic is sent: the fakes only answer.
use crate::fake_agent;

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_agent::{dir, path, FakeAgent, Iface, Reply, Script, KEY};
use mtuperf_engine::client::ConnectOptions;
use mtuperf_engine::mesh::{
    self, CellVerdict, Finding, FindingKind, MeshConfig, MeshObserver, MeshResult, MeshTests,
    NotMeasured, PairError, Plan, Silence,
};
use mtuperf_proto::msg::mesh::{
    RrSummary, StopKind, StreamSummary, ThirdPartyResult, ThirdPartyTest,
};
use mtuperf_proto::msg::rr::{RrCounts, RrProto};
use mtuperf_proto::msg::{PeerAuth, Refusal};

/// Node `i`'s address on network `net` (198.18.NET.0/24, fd00:18:NET::/64).
fn addr(net: u8, i: usize, v6: bool) -> IpAddr {
    if v6 {
        IpAddr::from([0xfd00, 0x18, u16::from(net), 0, 0, 0, 0, i as u16 + 1])
    } else {
        IpAddr::from([198, 18, net, i as u8 + 1])
    }
}

/// The node an address belongs to.
fn node_of(a: IpAddr) -> usize {
    match a {
        IpAddr::V4(v4) => usize::from(v4.octets()[3]) - 1,
        IpAddr::V6(v6) => usize::from(v6.segments()[7]) - 1,
    }
}

fn ifaces(i: usize, v6: bool) -> Vec<Iface> {
    let mut v = vec![("net1", addr(1, i, false), 24, 9000)];
    if v6 {
        v.push(("net2", addr(2, i, true), 64, 9000));
    }
    v
}

/// What an honest node measures: 9000 both ways, and real-looking load figures.
fn honest(test: ThirdPartyTest) -> ThirdPartyResult {
    match test {
        ThirdPartyTest::Rr { .. } | ThirdPartyTest::RrLoad { .. } => {
            ThirdPartyResult::Rr(RrSummary {
                proto: RrProto::Udp,
                block: 8192,
                request: 128,
                rate: None,
                timeout_ms: 500,
                counts: RrCounts {
                    requests_sent: 1000,
                    blocks: 1000,
                    ..RrCounts::default()
                },
                unanswered: 0,
                p50_ns: Some(25_000),
                p99_ns: Some(60_000),
                p999_ns: Some(70_000),
                max_ns: Some(90_000),
                wall_ns: 200_000_000,
                served: 1000,
                fragments: Some(0),
                interrupted_by: Vec::new(),
            })
        }
        ThirdPartyTest::Stream { .. } => ThirdPartyResult::Stream(StreamSummary {
            bytes: 100_000_000,
            wall_ns: 200_000_000,
            interrupted_by: Vec::new(),
        }),
        ThirdPartyTest::Path => path(dir(9000, StopKind::Top), dir(9000, StopKind::Top)),
    }
}

fn honest_script() -> Script {
    Arc::new(|req| Reply::Result(honest(req.test)))
}

/// `n` fake nodes answering after `delay`; node `i` answers by `script(i)`.
fn fleet(n: usize, v6: bool, delay: Duration, script: &dyn Fn(usize) -> Script) -> Vec<FakeAgent> {
    (0..n)
        .map(|i| FakeAgent::start(&format!("fake{i}"), &ifaces(i, v6), delay, script(i)))
        .collect()
}

fn config(
    agents: &[FakeAgent],
    tests: Vec<MeshTests>,
    per_node: usize,
    pair_timeout: Duration,
) -> MeshConfig {
    MeshConfig {
        block: mtuperf_engine::mesh::BlockTest::default(),
        oifcfg: None,
        max_block_p99: None,
        nodes: agents
            .iter()
            .enumerate()
            .map(|(i, a)| (Some(format!("n{}", i + 1)), a.addr.to_string()))
            .collect(),
        connect: ConnectOptions {
            key: Some(KEY),
            ..ConnectOptions::default()
        },
        nets: Vec::new(),
        expect: None,
        expect_nets: Vec::new(),
        tests,
        per_node,
        parallel: 16,
        pair_timeout,
        load_time: Duration::from_millis(200),
    }
}

/// Keeps the plan the orchestrator announces, and says when (the tests start then).
#[derive(Default)]
struct Announced(Mutex<Option<Plan>>, Arc<AtomicBool>);
impl MeshObserver for Announced {
    fn plan(&self, plan: &Plan) {
        *self.0.lock().unwrap() = Some(*plan);
        self.1.store(true, Ordering::Relaxed);
    }
}

fn run(cfg: &MeshConfig, stop: &AtomicBool) -> (MeshResult, Plan, Duration) {
    run_with(cfg, stop, Arc::default())
}

/// As [`run`], setting `planned` once the plan is announced.
fn run_with(
    cfg: &MeshConfig,
    stop: &AtomicBool,
    planned: Arc<AtomicBool>,
) -> (MeshResult, Plan, Duration) {
    let seen = Announced(Mutex::default(), planned);
    let t0 = Instant::now();
    let r = mesh::run(cfg, stop, &seen).expect("a mesh result");
    let took = t0.elapsed();
    let plan = seen.0.lock().unwrap().expect("the plan was announced");
    assert_eq!(r.deadline_ms, plan.deadline.as_millis() as u64);
    assert!(
        took <= plan.deadline,
        "took {took:?}, past the announced deadline {:?}",
        plan.deadline
    );
    (r, plan, took)
}

fn kinds(r: &MeshResult) -> Vec<FindingKind> {
    r.findings.iter().map(mesh::MeshFinding::kind).collect()
}

/// Node 3 never returns its results: each of its pairs costs one --pair-timeout at
/// most, once (not three times), and the error says how long really passed.
#[test]
fn a_node_that_never_returns_its_result_costs_one_pair_deadline() {
    let agents = fleet(3, false, Duration::ZERO, &|i| {
        if i == 2 {
            Arc::new(|_| Reply::Never)
        } else {
            honest_script()
        }
    });
    let timeout = Duration::from_secs(3);
    let (r, _, took) = run(
        &config(&agents, vec![MeshTests::Path], 4, timeout),
        &AtomicBool::new(false),
    );
    assert!(
        took < timeout * 2,
        "took {took:?}: the pair deadline was multiplied"
    );
    // Its pairs: one failed with the real wait (about the whole deadline, never
    // "0 s"); any other was not waited for twice.
    let mine: Vec<_> = r.pairs.iter().filter(|p| p.from == 2).collect();
    let waits: Vec<u64> = mine
        .iter()
        .flat_map(|p| &p.failed)
        .filter_map(|f| match f.error {
            PairError::NoResult { node: 2, waited_ms } => Some(waited_ms),
            _ => None,
        })
        .collect();
    assert!(!waits.is_empty(), "{mine:#?}");
    for w in &waits {
        assert!(
            (2_900..=took.as_millis() as u64).contains(w),
            "waited {w} ms"
        );
    }
    assert!(mine.iter().all(|p| p.path.is_none() && p.retried.is_none()));
    // The honest nodes measured everything, toward node 3 too.
    for p in r.pairs.iter().filter(|p| p.from != 2) {
        assert!(p.path.is_some(), "{p:?}");
    }
    let silent = r
        .findings
        .iter()
        .find(|f| f.kind() == FindingKind::NodeSilent)
        .expect("node 3 named");
    assert_eq!(silent.node, Some(2));
    assert!(matches!(
        silent.what,
        Finding::NodeSilent {
            silence: Silence::NoResult,
            ..
        }
    ));
}

/// Node 4 freezes 0.3 s into path, rr and stream tests (its agent SIGSTOPped): it is
/// named, its pairs are not measured, no test is called failed, and the rest of the
/// mesh completes in far less than one pair deadline.
#[test]
fn a_node_gone_silent_mid_run_is_named_and_the_rest_completes() {
    let agents = fleet(4, false, Duration::from_millis(400), &|_| honest_script());
    let frozen = agents[3].frozen.clone();
    let planned = Arc::new(AtomicBool::new(false));
    let started = planned.clone();
    let freezer = std::thread::spawn(move || {
        while !started.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(300));
        frozen.store(true, Ordering::Relaxed);
    });
    let timeout = Duration::from_secs(30);
    let tests = vec![MeshTests::Path, MeshTests::Rr, MeshTests::Stream];
    let cfg = config(&agents, tests, 2, timeout);
    let (r, _, took) = run_with(&cfg, &AtomicBool::new(false), planned);
    freezer.join().unwrap();
    eprintln!(
        "a node frozen 0.3 s in: the mesh took {:.1} s",
        took.as_secs_f64()
    );
    assert!(took < timeout, "took {took:?}");
    assert_eq!(
        kinds(&r),
        vec![FindingKind::NodeSilent],
        "{:#?}",
        r.findings
    );
    let f = &r.findings[0];
    assert_eq!(f.node, Some(3));
    let Finding::NodeSilent {
        silence,
        not_measured,
        ..
    } = f.what
    else {
        unreachable!()
    };
    assert_eq!(silence, Silence::NoAnswer);
    assert!(not_measured >= 6, "{not_measured}");
    for p in &r.pairs {
        if p.from == 3 || p.to == 3 {
            assert!(p.failed.is_empty(), "{p:?}");
            if p.path.is_none() {
                assert_eq!(
                    p.not_measured(MeshTests::Path),
                    Some(NotMeasured::NodeSilent { node: 3 }),
                    "{p:?}"
                );
                let c = r.cell(p.net, p.from, p.to).unwrap();
                assert_eq!(c.verdict, CellVerdict::NotMeasured);
            }
        } else {
            assert!(
                p.path.is_some() && p.rr.is_some() && p.stream.is_some(),
                "{p:?}"
            );
        }
    }
}

/// Node 3 holds the key and lies: in its own tests it sends 9000 but receives only
/// 576, "by ICMP", while every peer measures 9000 toward it and from it. The mesh
/// says its results disagree and leaves them out; no confident verdict about its
/// paths, and the honest nodes' cells keep what they measured.
#[test]
fn a_hostile_node_contradicting_every_peer_gets_no_confident_verdict() {
    let agents = fleet(4, false, Duration::ZERO, &|i| {
        if i == 2 {
            Arc::new(|req| match req.test {
                ThirdPartyTest::Path => {
                    Reply::Result(path(dir(9000, StopKind::Top), dir(576, StopKind::Icmp)))
                }
                t => Reply::Result(honest(t)),
            })
        } else {
            honest_script()
        }
    });
    let (r, _, _) = run(
        &config(&agents, vec![MeshTests::Path], 4, Duration::from_secs(10)),
        &AtomicBool::new(false),
    );
    assert_eq!(kinds(&r), vec![FindingKind::Disputed], "{:#?}", r.findings);
    let f = &r.findings[0];
    assert_eq!((f.net, f.node), (Some(0), Some(2)));
    let Finding::Disputed { contradictions } = &f.what else {
        unreachable!()
    };
    assert_eq!(contradictions.len(), 3);
    for c in &r.cells {
        let want = if c.from == 2 {
            CellVerdict::Disputed
        } else {
            CellVerdict::Ok
        };
        assert_eq!(c.verdict, want, "{c:?}");
    }
}

/// An MTU above the node's own NIC MTU, and 4294967295: refused as evidence, named,
/// and nothing diagnosed from them.
#[test]
fn an_impossible_mtu_is_refused_as_evidence() {
    let agents = fleet(3, false, Duration::ZERO, &|i| {
        if i == 1 {
            Arc::new(|req| match req.test {
                ThirdPartyTest::Path => {
                    Reply::Result(path(dir(u32::MAX, StopKind::Top), dir(9216, StopKind::Top)))
                }
                t => Reply::Result(honest(t)),
            })
        } else {
            honest_script()
        }
    });
    let (r, _, _) = run(
        &config(&agents, vec![MeshTests::Path], 4, Duration::from_secs(10)),
        &AtomicBool::new(false),
    );
    assert_eq!(
        kinds(&r),
        vec![FindingKind::Implausible],
        "{:#?}",
        r.findings
    );
    let Finding::Implausible { claims } = &r.findings[0].what else {
        unreachable!()
    };
    assert_eq!(r.findings[0].node, Some(1));
    assert_eq!(claims.len(), 4);
    assert!(claims.iter().all(|c| c.limit == 9000 && c.by == 1));
    assert!(claims.iter().any(|c| c.mtu == u32::MAX));
    assert!(claims.iter().any(|c| c.mtu == 9216));
    for c in r.cells.iter().filter(|c| c.from != 1) {
        assert_eq!(c.verdict, CellVerdict::Ok, "{c:?}");
    }
}

/// Ctrl-C a moment in: the result says it was interrupted, keeps what was measured,
/// and marks the rest not measured; no interrupted pair becomes a finding.
#[test]
fn an_interrupted_mesh_keeps_what_it_measured_and_finds_nothing_in_the_rest() {
    let agents = fleet(4, false, Duration::from_millis(300), &|_| honest_script());
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let ctrl_c = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(900));
        s.store(true, Ordering::Relaxed);
    });
    let (r, _, took) = run(
        &config(&agents, vec![MeshTests::Path], 1, Duration::from_secs(10)),
        &stop,
    );
    ctrl_c.join().unwrap();
    assert!(took < Duration::from_secs(5), "took {took:?}");
    assert!(r.interrupted && !r.ok());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    let measured = r.pairs.iter().filter(|p| p.path.is_some()).count();
    assert!((1..12).contains(&measured), "{measured} of 12 measured");
    for p in r.pairs.iter().filter(|p| p.path.is_none()) {
        assert!(p.failed.is_empty(), "{p:?}");
        assert_eq!(
            p.not_measured(MeshTests::Path),
            Some(NotMeasured::Interrupted)
        );
        assert_eq!(
            r.cell(p.net, p.from, p.to).unwrap().verdict,
            CellVerdict::NotMeasured
        );
    }
}

/// Every peer refuses the IPv6 network's senders (their --allow list): one finding
/// for the cause, with the count and three examples, not one per pair.
#[test]
fn failures_of_one_cause_are_one_finding() {
    let agents = fleet(3, true, Duration::ZERO, &|_| {
        Arc::new(|req| {
            if req.to.is_ipv6() {
                Reply::Refuse(Refusal::PeerNotAuthenticated {
                    peer: req.to.to_string(),
                    why: PeerAuth::Refused {
                        refusal: Box::new(Refusal::NotAllowed {
                            peer: req.from.to_string(),
                        }),
                    },
                })
            } else {
                assert_ne!(node_of(req.from), node_of(req.to.ip()));
                Reply::Result(honest(req.test))
            }
        })
    });
    let (r, _, _) = run(
        &config(&agents, vec![MeshTests::Path], 4, Duration::from_secs(10)),
        &AtomicBool::new(false),
    );
    assert_eq!(r.networks.len(), 2);
    assert_eq!(
        kinds(&r),
        vec![FindingKind::TestsFailed],
        "{:#?}",
        r.findings
    );
    let f = &r.findings[0];
    assert_eq!(f.net, Some(1));
    let Finding::TestsFailed { count, examples } = &f.what else {
        unreachable!()
    };
    assert_eq!((*count, examples.len()), (6, mesh::EXAMPLES));
    assert!(examples.iter().all(|x| matches!(
        x.failure.error,
        PairError::Refused {
            refusal: Refusal::PeerNotAuthenticated { .. },
            ..
        }
    )));
    // No retry of a refusal: each pair asked once.
    assert!(r.pairs.iter().all(|p| p.retried.is_none()));
}

/// A peer refusing the asked agent's test mid-run (its --max-block, say) reaches the
/// orchestrator typed (protocol 19): each pair keeps the peer's refusal with the peer's
/// name, is tried once more (as the agent error it replaces was), and the failures are
/// one finding. A peer refusal too large for the decode check is a protocol error,
/// never a refusal.
#[test]
fn a_peer_refusal_relayed_by_the_asked_agent_is_kept_typed() {
    let limit = Refusal::Limit {
        limit: "max-block".into(),
        requested: 9000,
        allowed: 8000,
    };
    let refused = limit.clone();
    let agents = fleet(3, false, Duration::ZERO, &move |_| {
        let refused = refused.clone();
        Arc::new(move |_req| Reply::PeerRefused(refused.clone()))
    });
    let (r, _, _) = run(
        &config(&agents, vec![MeshTests::Path], 4, Duration::from_secs(10)),
        &AtomicBool::new(false),
    );
    let failures: Vec<&PairError> = r
        .pairs
        .iter()
        .flat_map(|p| &p.failed)
        .map(|f| &f.error)
        .collect();
    assert!(!failures.is_empty(), "{:#?}", r.pairs);
    for (p, e) in r
        .pairs
        .iter()
        .flat_map(|p| p.failed.iter().map(move |f| (p, &f.error)))
    {
        match e {
            PairError::PeerRefused {
                node,
                peer,
                refusal,
            } => {
                assert_eq!(*node, p.from);
                assert_eq!(node_of(peer.parse::<SocketAddr>().unwrap().ip()), p.to);
                assert_eq!(*refusal, limit);
            }
            other => panic!("expected the peer's refusal, got {other:?}"),
        }
    }
    assert!(
        r.pairs.iter().all(|p| p.retried.is_some()),
        "{:#?}",
        r.pairs
    );
    assert_eq!(
        kinds(&r),
        vec![FindingKind::TestsFailed],
        "{:#?}",
        r.findings
    );

    // Beyond the decode check: the asker calls it a broken protocol.
    let agents = fleet(3, false, Duration::ZERO, &|_| {
        Arc::new(|_req| {
            Reply::PeerRefused(Refusal::BadRequest {
                detail: "x".repeat(mtuperf_proto::msg::MAX_REFUSAL_TEXT + 1),
            })
        })
    });
    let (r, _, _) = run(
        &config(&agents, vec![MeshTests::Path], 4, Duration::from_secs(10)),
        &AtomicBool::new(false),
    );
    let errors: Vec<&PairError> = r
        .pairs
        .iter()
        .flat_map(|p| &p.failed)
        .map(|f| &f.error)
        .collect();
    assert!(!errors.is_empty());
    assert!(
        errors.iter().all(|e| matches!(e, PairError::Protocol { detail, .. } if detail.contains("peer refusal") && detail.contains("at most 512"))),
        "{errors:#?}"
    );
}
