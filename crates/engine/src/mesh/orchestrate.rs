//! The orchestrator: discover every node, find the networks, plan the run and its
//! deadline, run the pairs' tests through the agents (third-party), then diagnose
//! the matrix.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mtuperf_proto::failed::Failed;
use mtuperf_proto::msg::mesh::ThirdPartyTest;

use super::cells::SilentNode;
use super::discover::discover;
use super::doc::{NetCheck, NodeKernel};
use super::finding::{MeshFinding, NodeError};
use super::health::Health;
use super::model::{
    Cell, MeshConfig, MeshNetwork, MeshNode, MeshResult, MeshTests, NotMeasured, PairError,
    PairResult, Plan, TestSkipped,
};
use super::pair::{record, Ctx, Job, Outcome};
use super::schedule::{ordered_pairs, run_bounded, tournament};
use super::{cells, checks, doctor, jumbo, kernel, net, plan};
use crate::error::Within;
use crate::EngineError;

/// A path test tried again needs at least this much of its pair's deadline left.
const MIN_RETRY: Duration = Duration::from_secs(2);

/// Progress of a mesh run (the CLI draws a progress bar; tests ignore it).
pub trait MeshObserver: Sync {
    fn discovered(&self, _nodes: &[MeshNode], _networks: &[MeshNetwork]) {}
    /// The plan and the run's deadline, once the nodes are discovered.
    fn plan(&self, _plan: &Plan) {}
    /// A phase starts: path, rr or stream tests, with its number of pair tests.
    fn phase(&self, _test: MeshTests, _total: usize) {}
    fn pair_done(&self, _pair: &PairResult) {}
}

/// An observer that ignores everything.
pub struct QuietMesh;
impl MeshObserver for QuietMesh {}

/// Runs `test` on `jobs` (a node in at most `per_node` at once), each within
/// `budget(job)`, while the nodes' health is watched. Jobs never started (Ctrl-C)
/// come back not measured.
fn run_jobs(
    ctx: &Ctx<'_>,
    jobs: &[Job],
    test: (MeshTests, ThirdPartyTest),
    per_node: usize,
    budget: &(dyn Fn(&Job) -> Duration + Sync),
    obs: &dyn MeshObserver,
) -> Vec<(Job, Outcome, Duration)> {
    let threads = plan::threads(ctx.cfg, ctx.nodes.len(), jobs.len(), per_node);
    let done = AtomicBool::new(false);
    let results = std::thread::scope(|s| {
        s.spawn(|| ctx.health.watch(&done));
        let r = run_bounded(
            jobs,
            |j| (j.from, j.to),
            per_node,
            threads,
            &|| ctx.stop.load(Ordering::Relaxed),
            |&j| {
                let (outcome, took) = ctx.ask(j, test.1, budget(&j));
                let mut p = PairResult::new(j.net, j.from, j.to);
                record(&mut p, test.0, outcome.clone(), took);
                obs.pair_done(&p);
                (outcome, took)
            },
            &|_, _| {},
        );
        done.store(true, Ordering::Relaxed);
        r
    });
    jobs.iter()
        .zip(results)
        .map(|(&j, r)| match r {
            Some((o, took)) => (j, o, took),
            None => (
                j,
                Outcome::NotMeasured(NotMeasured::Interrupted),
                Duration::ZERO,
            ),
        })
        .collect()
}

fn pair_of<'a>(pairs: &'a mut [PairResult], j: &Job) -> Option<&'a mut PairResult> {
    pairs
        .iter_mut()
        .find(|p| (p.net, p.from, p.to) == (j.net, j.from, j.to))
}

/// Errors worth a second try: the asked agent ran the test and it failed (on a
/// loaded host a probe's timeout can pass while dozens of tests share two cores), or
/// its peer refused it once it ran. Not the asked agent's refusal, an unreachable or
/// silent node, nor a deadline.
fn retryable(e: &PairError) -> bool {
    matches!(
        e,
        PairError::Agent { .. } | PairError::PeerRefused { .. } | PairError::Protocol { .. }
    )
}

/// Every ordered pair's path test, in parallel; a failed one tried once more within
/// what is left of its pair's deadline, one per node at a time, once the others
/// are done.
fn path_phase(ctx: &Ctx<'_>, jobs: &[Job], obs: &dyn MeshObserver, pairs: &mut [PairResult]) {
    let test = (MeshTests::Path, ThirdPartyTest::Path);
    obs.phase(MeshTests::Path, jobs.len());
    let timeout = ctx.cfg.pair_timeout;
    let first = run_jobs(ctx, jobs, test, ctx.cfg.per_node, &|_| timeout, obs);
    let mut again: Vec<(Job, Duration)> = Vec::new();
    for (j, outcome, took) in first {
        match (&outcome, pair_of(pairs, &j)) {
            (Outcome::Failed(e), Some(p)) if retryable(e) && took + MIN_RETRY <= timeout => {
                record(p, test.0, outcome.clone(), took);
                again.push((j, timeout.saturating_sub(took)));
            }
            (_, Some(p)) => record(p, test.0, outcome, took),
            (_, None) => {}
        }
    }
    let left = ctx.deadline.saturating_duration_since(Instant::now());
    again.retain(|(_, budget)| *budget <= left);
    if again.is_empty() || ctx.stop.load(Ordering::Relaxed) {
        return;
    }
    let jobs: Vec<Job> = again.iter().map(|a| a.0).collect();
    let budget = |j: &Job| {
        again
            .iter()
            .find(|a| a.0 == *j)
            .map_or(Duration::ZERO, |a| a.1)
    };
    for (j, outcome, took) in run_jobs(ctx, &jobs, test, 1, &budget, &QuietMesh) {
        let Some(p) = pair_of(pairs, &j) else {
            continue;
        };
        if matches!(outcome, Outcome::NotMeasured(_)) {
            continue; // the first failure stands
        }
        let pos = p.failed.iter().position(|f| f.test == MeshTests::Path);
        p.retried = pos.map(|i| p.failed.remove(i));
        record(p, test.0, outcome, took);
    }
}

/// rr or stream over every pair, in rounds of disjoint pairs. A pair whose path
/// test failed, or found its path short of the network's MTU, is not loaded (TCP
/// would only stall on a silent drop of full-size segments): it says so.
fn load_phase(
    ctx: &Ctx<'_>,
    rounds: &[Vec<Job>],
    test: (MeshTests, ThirdPartyTest),
    obs: &dyn MeshObserver,
    pairs: &mut [PairResult],
) {
    // UDP blocks cross a path short of the MTU as IP fragments (or not at all): what
    // happens to them is the evidence, so such a pair is measured all the same.
    let udp_blocks = matches!(
        test.1,
        ThirdPartyTest::Rr { rr } if rr.proto == mtuperf_proto::msg::rr::RrProto::Udp
    );
    let expect_of = |p: &PairResult| ctx.networks.get(p.net).map_or(0, |n| n.expect);
    let skip = |p: &PairResult| {
        let expect = expect_of(p);
        if p.failure(MeshTests::Path).is_some() {
            Some(NotMeasured::PathFailed)
        } else if !udp_blocks
            && p.path
                .as_ref()
                .is_some_and(|s| s.forward.mtu < expect || s.reverse.mtu < expect)
        {
            Some(NotMeasured::PathShort)
        } else {
            None
        }
    };
    let mut kept: Vec<Vec<Job>> = Vec::new();
    for round in rounds {
        let mut go = Vec::new();
        for j in round {
            match pair_of(pairs, j) {
                Some(p) => match skip(p) {
                    Some(why) => p.not_measured.push(TestSkipped { test: test.0, why }),
                    None => go.push(Job {
                        mss: clamp(p, expect_of(p)),
                        ..*j
                    }),
                },
                None => go.push(*j),
            }
        }
        kept.push(go);
    }
    obs.phase(test.0, kept.iter().map(Vec::len).sum());
    let budget = ctx.cfg.pair_timeout + ctx.cfg.load_time;
    for round in &kept {
        for (j, outcome, took) in run_jobs(ctx, round, test, 1, &|_| budget, obs) {
            if let Some(p) = pair_of(pairs, &j) {
                record(p, test.0, outcome, took);
            }
        }
    }
}

/// Room for the IP and TCP headers (IPv6's 40 + 20) below a path's MTU.
const TCP_IP_HEADERS: u32 = 60;
/// The smallest MSS worth setting (IPv4's minimum MTU, 576, less the headers).
const MIN_MSS: u32 = 516;

/// The control connection's MSS for a load test of `p`: the path measured short of
/// the network's MTU `expect` in either direction carries the agent's report only in
/// segments that fit it (on one L2 segment no ICMP tells TCP, which would stall on
/// the first full-size one, and the pair would read "no report" instead of what
/// happened to its blocks).
fn clamp(p: &PairResult, expect: u32) -> Option<u32> {
    let s = p.path.as_ref()?;
    let mtu = s.forward.mtu.min(s.reverse.mtu);
    (mtu < expect).then(|| mtu.saturating_sub(TCP_IP_HEADERS).max(MIN_MSS))
}

/// The pairs of network `ni` in `order` (member indexes) as jobs.
fn jobs_of(ni: usize, net: &MeshNetwork, order: Vec<(usize, usize)>) -> Vec<Job> {
    order
        .into_iter()
        .filter_map(|(a, b)| {
            Some(Job {
                net: ni,
                from: net.members.get(a)?.node,
                to: net.members.get(b)?.node,
                mss: None,
            })
        })
        .collect()
}

/// Runs a mesh: discovery, networks, the plan and its deadline (given to `obs`),
/// each asked test, diagnosis. `stop` (Ctrl-C) ends it early with what was
/// measured; the rest is marked not measured, never failed.
pub fn run(
    cfg: &MeshConfig,
    stop: &AtomicBool,
    obs: &dyn MeshObserver,
) -> Result<MeshResult, EngineError> {
    let t0 = Instant::now();
    let started_unix_ms = crate::unix_ms();
    let (nodes, networks) = nodes_and_networks(cfg, obs)?;
    let plan = plan::plan(cfg, nodes.len(), &networks, t0.elapsed());
    obs.plan(&plan);
    let health = Health::new(t0, &nodes, &cfg.connect);
    let ctx = Ctx {
        cfg,
        nodes: &nodes,
        networks: &networks,
        stop,
        health: &health,
        deadline: t0 + plan.deadline,
    };
    let (pairs, silent, kernel) = measure_counted(&ctx, obs);
    let (cells, findings, checks) = diagnose(cfg, &nodes, &networks, &pairs, &silent, &kernel);
    let compared = jumbo::compare(&networks, &pairs);
    let deadline_passed = pairs
        .iter()
        .flat_map(|p| &p.not_measured)
        .any(|s| s.why == NotMeasured::Deadline);
    Ok(MeshResult {
        started_unix_ms,
        elapsed_ms: t0.elapsed().as_millis() as u64,
        deadline_ms: plan.deadline.as_millis() as u64,
        tests: cfg.tests.clone(),
        expect: cfg.expect,
        expect_nets: cfg.expect_nets.clone(),
        nodes,
        networks,
        pairs,
        cells,
        findings,
        block: cfg.tests.contains(&MeshTests::Rr).then_some(cfg.block),
        kernel,
        checks,
        jumbo: compared,
        interrupted: stop.load(Ordering::Relaxed),
        deadline_passed,
    })
}

/// Every node discovered (given to `obs` with the networks), and the networks two
/// of them share: an error when no node's agent answered or no network is shared.
fn nodes_and_networks(
    cfg: &MeshConfig,
    obs: &dyn MeshObserver,
) -> Result<(Vec<MeshNode>, Vec<MeshNetwork>), EngineError> {
    let nodes = discover(cfg);
    if nodes.iter().all(|n| n.error.is_some()) {
        // Discovery makes only discovery errors.
        let first = match nodes.first().and_then(|n| n.error.as_ref()) {
            Some(NodeError::Discovery { error }) => error.clone(),
            _ => Failed::error(""),
        };
        return Err(EngineError::NoNodeAnswered { first });
    }
    let select = net::Select {
        nets: &cfg.nets,
        oifcfg: cfg.oifcfg.as_deref(),
    };
    let networks = net::networks(&nodes, &select, cfg.expect, &cfg.expect_nets);
    obs.discovered(&nodes, &networks);
    if networks.is_empty() {
        let within = match (&cfg.oifcfg, cfg.nets.is_empty()) {
            (Some(_), _) => Within::Oifcfg,
            (None, true) => Within::All,
            (None, false) => Within::Nets(cfg.nets.clone()),
        };
        return Err(EngineError::NoSharedNetwork { within });
    }
    Ok((nodes, networks))
}

/// [`measure`] between two readings of the nodes' kernel counters: the pairs, the
/// nodes found silent meanwhile (not read again), and the counters' deltas.
fn measure_counted(
    ctx: &Ctx<'_>,
    obs: &dyn MeshObserver,
) -> (Vec<PairResult>, Vec<SilentNode>, Vec<NodeKernel>) {
    let (nodes, connect) = (ctx.nodes, &ctx.cfg.connect);
    let ifaces = kernel::ifaces(nodes.len(), ctx.networks);
    let reachable = |n: usize| nodes.get(n).is_some_and(|x| x.error.is_none());
    let before = kernel::read(nodes, &ifaces, &reachable, connect);
    let pairs = measure(ctx, obs);
    let silent = ctx.health.silenced();
    let answers = |n: usize| reachable(n) && !silent.iter().any(|s| s.node == n);
    let after = kernel::read(nodes, &ifaces, &answers, connect);
    (pairs, silent, kernel::deltas(&before, &after))
}

/// The matrix's cells and every finding (the pairs' diagnosis, absent `--oifcfg`
/// interfaces, kernel counters, doctor's settings, the failed checks), and the
/// checks per network.
fn diagnose(
    cfg: &MeshConfig,
    nodes: &[MeshNode],
    networks: &[MeshNetwork],
    pairs: &[PairResult],
    silent: &[SilentNode],
    kernel: &[NodeKernel],
) -> (Vec<Cell>, Vec<MeshFinding>, Vec<NetCheck>) {
    let (cells, mut findings) = cells::diagnose(nodes, networks, pairs, silent);
    if let Some(entries) = &cfg.oifcfg {
        findings.extend(net::absent(nodes, entries));
    }
    let net_of = |node: usize, iface: &str| {
        networks
            .iter()
            .position(|n| n.members.iter().any(|m| m.node == node && m.iface == iface))
    };
    let faulty = |node: usize, net: usize| {
        findings.iter().any(|f| {
            f.kind() == super::FindingKind::Fault
                && f.net == Some(net)
                && (f.node == Some(node)
                    || f.directions.iter().any(|d| d.from == node || d.to == node))
        })
    };
    let from_kernel = kernel::findings(kernel, &net_of, &faulty);
    findings.extend(from_kernel);
    if cfg.tests.contains(&MeshTests::Doctor) {
        findings.extend(doctor::compare(
            nodes,
            networks,
            !cfg.tests.contains(&MeshTests::Path),
        ));
    }
    let checks = checks::checks(&checks::Inputs {
        tests: &cfg.tests,
        networks,
        pairs,
        cells: &cells,
        findings: &findings,
        kernel,
        max_block_p99: cfg.max_block_p99,
    });
    findings.extend(checks::findings(&checks));
    (cells, findings, checks)
}

/// Every planned pair with what its tests measured (or why they did not).
fn measure(ctx: &Ctx<'_>, obs: &dyn MeshObserver) -> Vec<PairResult> {
    let has = |t: MeshTests| ctx.cfg.tests.contains(&t);
    if !(has(MeshTests::Path) || has(MeshTests::Rr) || has(MeshTests::Stream)) {
        return Vec::new();
    }
    let all: Vec<Job> = ctx
        .networks
        .iter()
        .enumerate()
        .flat_map(|(ni, n)| jobs_of(ni, n, ordered_pairs(n.members.len())))
        .collect();
    let mut pairs: Vec<PairResult> = all
        .iter()
        .map(|j| PairResult::new(j.net, j.from, j.to))
        .collect();
    if has(MeshTests::Path) {
        path_phase(ctx, &all, obs, &mut pairs);
    }
    let ms = ctx.cfg.load_time.as_millis() as u64;
    let rr = ctx.cfg.block.load(ctx.cfg.load_time);
    let rounds: Vec<Vec<Job>> = ctx
        .networks
        .iter()
        .enumerate()
        .flat_map(|(ni, n)| {
            tournament(n.members.len())
                .into_iter()
                .map(move |r| jobs_of(ni, n, r))
        })
        .collect();
    for test in [
        (MeshTests::Rr, ThirdPartyTest::Rr { rr }),
        (
            MeshTests::Stream,
            ThirdPartyTest::Stream { duration_ms: ms },
        ),
    ] {
        if has(test.0) {
            load_phase(ctx, &rounds, test, obs, &mut pairs);
        }
    }
    pairs.sort_by_key(|p| (p.net, p.from, p.to));
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_proto::msg::mesh::{DirSummary, PathSummary, StopKind};

    fn measured(forward: u32, reverse: u32) -> PairResult {
        let dir = |mtu| DirSummary {
            largest_ok: mtu,
            mtu,
            stop: StopKind::Silent,
            icmp_from: None,
            probes: 10,
            lost: 0,
            rtt_us: None,
            wait_us: None,
        };
        PairResult {
            path: Some(PathSummary {
                forward: dir(forward),
                reverse: dir(reverse),
                local_mtu: 9000,
                peer_mtu: Some(9000),
                same_segment: true,
                first_router: None,
                vanish_after: None,
                elapsed_ms: 1,
            }),
            ..PairResult::new(0, 0, 1)
        }
    }

    /// A load test's control connection is clamped to a path measured short, in
    /// either direction; a path that carries the MTU, or none measured, is left alone.
    #[test]
    fn the_mss_is_clamped_on_a_short_path_only() {
        assert_eq!(clamp(&measured(1500, 1500), 9000), Some(1440));
        assert_eq!(clamp(&measured(9000, 1504), 9000), Some(1444));
        assert_eq!(clamp(&measured(9000, 9000), 9000), None);
        assert_eq!(clamp(&measured(200, 9000), 9000), Some(MIN_MSS));
        assert_eq!(clamp(&PairResult::new(0, 0, 1), 9000), None);
    }
}
