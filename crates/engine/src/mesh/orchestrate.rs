//! The orchestrator: discover every node, find the networks, run the pairs' tests
//! through the agents (third-party), then diagnose the matrix.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mtuperf_proto::msg::mesh::{ThirdPartyRequest, ThirdPartyResult, ThirdPartyTest};
use mtuperf_proto::msg::{ClientMsg, Refusal};

use super::discover::discover;
use super::model::{MeshConfig, MeshNetwork, MeshNode, MeshResult, MeshTests, PairResult};
use super::schedule::{ordered_pairs, run_bounded, tournament, MAX_THREADS};
use super::{doctor, net};
use crate::client::{resolve, Session};
use crate::control::answer_or_stop;
use crate::EngineError;

/// Progress of a mesh run (the CLI draws a progress bar; tests ignore it).
pub trait MeshObserver: Sync {
    fn discovered(&self, _nodes: &[MeshNode], _networks: &[MeshNetwork]) {}
    /// A phase starts: "path", "rr", "stream", with its number of pair tests.
    fn phase(&self, _name: &str, _total: usize) {}
    fn pair_done(&self, _pair: &PairResult) {}
}

/// An observer that ignores everything.
pub struct QuietMesh;
impl MeshObserver for QuietMesh {}

/// One ordered pair's test.
#[derive(Debug, Clone, Copy)]
struct Job {
    net: usize,
    from: usize,
    to: usize,
}

fn third_party(
    cfg: &MeshConfig,
    nodes: &[MeshNode],
    networks: &[MeshNetwork],
    job: Job,
    test: ThirdPartyTest,
    deadline: Duration,
    stop: &AtomicBool,
) -> Result<ThirdPartyResult, EngineError> {
    let net = networks
        .get(job.net)
        .ok_or_else(|| EngineError::Protocol("no such network".into()))?;
    let addr = |n: usize| {
        net.members
            .iter()
            .find(|m| m.node == n)
            .map(|m| m.addr)
            .ok_or_else(|| EngineError::Protocol(format!("node {n} is not on net {}", net.name)))
    };
    let agent = |n: usize| nodes.get(n).map(|x| x.agent.as_str()).unwrap_or_default();
    let port = resolve(agent(job.to))?.port();
    let req = ThirdPartyRequest {
        test,
        from: addr(job.from)?,
        to: SocketAddr::new(addr(job.to)?, port),
    };
    // Busy (every session slot of A or of B taken, often by a session of the last
    // test still closing) is transient: retried with a growing pause until the
    // pair's deadline.
    let until = Instant::now() + deadline;
    let mut pause = Duration::from_millis(50);
    loop {
        let attempt = Session::connect(agent(job.from), &cfg.connect).and_then(|s| {
            let r = s
                .control
                .send(&ClientMsg::ThirdParty(req.clone()))
                .and_then(|()| answer_or_stop(s.control.socket(), until, stop))
                .and_then(|()| {
                    s.control.expect::<ThirdPartyResult>(
                        Some(until.saturating_duration_since(Instant::now())),
                        "the third-party test's result",
                    )
                });
            s.close();
            r
        });
        match attempt {
            Err(EngineError::Refused(Refusal::Busy { .. })) if Instant::now() + pause < until => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_secs(1));
            }
            r => return r,
        }
    }
}

/// One pair's test, as a result (an error is part of it).
#[allow(clippy::too_many_arguments)]
fn one(
    cfg: &MeshConfig,
    nodes: &[MeshNode],
    networks: &[MeshNetwork],
    j: Job,
    test: ThirdPartyTest,
    deadline: Duration,
    stop: &AtomicBool,
) -> PairResult {
    let t0 = Instant::now();
    let r = third_party(cfg, nodes, networks, j, test, deadline, stop);
    let mut p = PairResult {
        net: j.net,
        from: j.from,
        to: j.to,
        elapsed_ms: t0.elapsed().as_millis() as u64,
        ..PairResult::default()
    };
    match r {
        Ok(ThirdPartyResult::Path(s)) => p.path = Some(s),
        Ok(ThirdPartyResult::Rr(s)) => {
            p.error = s
                .interrupted
                .as_ref()
                .map(|w| format!("rr interrupted: {w}"));
            p.rr = Some(s);
        }
        Ok(ThirdPartyResult::Stream(s)) => {
            p.error = s
                .interrupted
                .as_ref()
                .map(|w| format!("stream interrupted: {w}"));
            p.stream = Some(s);
        }
        // The mesh asks for no rr load.
        Ok(ThirdPartyResult::RrLoad(_)) => p.error = Some("rr: unexpected rr load result".into()),
        Err(e) => p.error = Some(format!("{}: {e}", test.name())),
    }
    p
}

/// Runs `test` on `jobs`, bounded per node, merging results into `pairs`.
#[allow(clippy::too_many_arguments)]
fn run_jobs(
    cfg: &MeshConfig,
    nodes: &[MeshNode],
    networks: &[MeshNetwork],
    jobs: &[Job],
    test: ThirdPartyTest,
    per_node: usize,
    stop: &AtomicBool,
    obs: &dyn MeshObserver,
    pairs: &mut Vec<PairResult>,
) {
    let deadline = match test {
        ThirdPartyTest::Path => cfg.pair_timeout,
        ThirdPartyTest::Rr { .. }
        | ThirdPartyTest::Stream { .. }
        | ThirdPartyTest::RrLoad { .. } => cfg.pair_timeout + cfg.load_time,
    };
    let done = |_: usize, r: &PairResult| obs.pair_done(r);
    let threads = jobs
        .len()
        .min(MAX_THREADS)
        .min(cfg.parallel.max(1))
        .min(nodes.len() * per_node);
    let results = run_bounded(
        jobs,
        |j| (j.from, j.to),
        per_node,
        threads,
        &|| stop.load(Ordering::Relaxed),
        |&j| one(cfg, nodes, networks, j, test, deadline, stop),
        &done,
    );
    let mut results: Vec<PairResult> = results.into_iter().flatten().collect();
    // A path test that failed (not one that found a short path) is tried once more,
    // one test per node at a time, once the others are done: on a loaded host a
    // probe's 100 ms timeout can pass while dozens of tests share two cores. The
    // first failure is kept in `retried`.
    if test == ThirdPartyTest::Path && !stop.load(Ordering::Relaxed) {
        let again: Vec<Job> = results
            .iter()
            .filter(|r| r.error.is_some())
            .map(|r| Job {
                net: r.net,
                from: r.from,
                to: r.to,
            })
            .collect();
        if !again.is_empty() {
            let retried = run_bounded(
                &again,
                |j| (j.from, j.to),
                1,
                again.len().min(MAX_THREADS).min(cfg.parallel.max(1)),
                &|| stop.load(Ordering::Relaxed),
                |&j| one(cfg, nodes, networks, j, test, deadline, stop),
                &|_, _| {},
            );
            for r in retried.into_iter().flatten() {
                if let Some(old) = results
                    .iter_mut()
                    .find(|p| (p.net, p.from, p.to) == (r.net, r.from, r.to))
                {
                    let first = old.error.take();
                    *old = PairResult {
                        retried: first,
                        ..r
                    };
                }
            }
        }
    }
    for r in results {
        match pairs
            .iter_mut()
            .find(|p| (p.net, p.from, p.to) == (r.net, r.from, r.to))
        {
            Some(p) => {
                p.rr = p.rr.take().or(r.rr);
                p.stream = p.stream.take().or(r.stream);
                if let Some(e) = r.error {
                    p.error = Some(
                        p.error
                            .take()
                            .map_or(e.clone(), |old| format!("{old}; {e}")),
                    );
                }
                p.elapsed_ms += r.elapsed_ms;
            }
            None => pairs.push(r),
        }
    }
}

/// Runs a mesh: discovery, networks, each asked test, diagnosis. `stop` (Ctrl-C)
/// ends it early with what was measured, marked interrupted.
pub fn run(
    cfg: &MeshConfig,
    stop: &AtomicBool,
    obs: &dyn MeshObserver,
) -> Result<MeshResult, EngineError> {
    let t0 = Instant::now();
    let started_unix_ms = crate::unix_ms();
    let nodes = discover(cfg);
    if nodes.iter().all(|n| n.error.is_some()) {
        let why = nodes
            .first()
            .and_then(|n| n.error.clone())
            .unwrap_or_default();
        return Err(EngineError::Agent(format!(
            "no node's agent could be asked for its interfaces (first: {why})"
        )));
    }
    let networks = net::networks(&nodes, &cfg.nets, cfg.expect);
    obs.discovered(&nodes, &networks);
    if networks.is_empty() {
        return Err(EngineError::Agent(
            "no network is shared by two of the nodes (within --net, when given)".into(),
        ));
    }
    let member_pairs = |ni: usize, net: &MeshNetwork, order: Vec<(usize, usize)>| {
        order
            .into_iter()
            .filter_map(|(a, b)| {
                Some(Job {
                    net: ni,
                    from: net.members.get(a)?.node,
                    to: net.members.get(b)?.node,
                })
            })
            .collect::<Vec<Job>>()
    };
    let mut pairs = Vec::new();
    if cfg.tests.contains(&MeshTests::Path) {
        let jobs: Vec<Job> = networks
            .iter()
            .enumerate()
            .flat_map(|(ni, n)| member_pairs(ni, n, ordered_pairs(n.members.len())))
            .collect();
        obs.phase("path", jobs.len());
        run_jobs(
            cfg,
            &nodes,
            &networks,
            &jobs,
            ThirdPartyTest::Path,
            cfg.per_node,
            stop,
            obs,
            &mut pairs,
        );
    }
    let ms = cfg.load_time.as_millis() as u64;
    for (kind, test) in [
        (MeshTests::Rr, ThirdPartyTest::Rr { duration_ms: ms }),
        (
            MeshTests::Stream,
            ThirdPartyTest::Stream { duration_ms: ms },
        ),
    ] {
        if !cfg.tests.contains(&kind) {
            continue;
        }
        // A pair whose path does not carry its network's MTU would only stall TCP
        // (a silent drop of full-size segments): its load tests are skipped, saying so.
        let path_fails = |j: &Job| {
            pairs.iter().any(|p: &PairResult| {
                (p.net, p.from, p.to) == (j.net, j.from, j.to)
                    && (p.error.is_some()
                        || p.path.as_ref().is_some_and(|s| {
                            let e = networks.get(j.net).map_or(0, |n| n.expect);
                            s.forward.mtu < e || s.reverse.mtu < e
                        }))
            })
        };
        let mut skipped = Vec::new();
        let rounds: Vec<Vec<Job>> = networks
            .iter()
            .enumerate()
            .flat_map(|(ni, n)| {
                tournament(n.members.len())
                    .into_iter()
                    .map(move |r| member_pairs(ni, n, r))
            })
            .map(|round| {
                let (bad, good): (Vec<Job>, Vec<Job>) =
                    round.into_iter().partition(|j| path_fails(j));
                skipped.extend(bad);
                good
            })
            .collect();
        for j in skipped {
            if let Some(p) = pairs
                .iter_mut()
                .find(|p| (p.net, p.from, p.to) == (j.net, j.from, j.to))
            {
                p.skipped = Some(
                    "rr and stream not run: the path test found this pair's path short of the network's MTU, which would stall TCP".into(),
                );
            }
        }
        obs.phase(
            if kind == MeshTests::Rr {
                "rr"
            } else {
                "stream"
            },
            rounds.iter().map(Vec::len).sum(),
        );
        for round in &rounds {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            run_jobs(
                cfg, &nodes, &networks, round, test, 1, stop, obs, &mut pairs,
            );
        }
    }
    pairs.sort_by_key(|p| (p.net, p.from, p.to));
    let (cells, mut findings) = super::cells::diagnose(&nodes, &networks, &pairs);
    if cfg.tests.contains(&MeshTests::Doctor) {
        findings.extend(doctor::compare(
            &nodes,
            &networks,
            !cfg.tests.contains(&MeshTests::Path),
        ));
    }
    Ok(MeshResult {
        started_unix_ms,
        elapsed_ms: t0.elapsed().as_millis() as u64,
        tests: cfg.tests.clone(),
        expect: cfg.expect,
        nodes,
        networks,
        pairs,
        cells,
        findings,
        interrupted: stop.load(Ordering::Relaxed),
    })
}
