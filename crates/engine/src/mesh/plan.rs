//! The run's plan and deadline, known once the nodes are discovered: the time the
//! run would take if every pair test used its whole deadline. The orchestrator
//! prints it at the start and holds the run to it (a test is never started or
//! waited on past it; what it leaves is "not measured").

use std::time::Duration;

use super::model::{MeshConfig, MeshNetwork, MeshTests, Plan};
use super::schedule::{tournament, MAX_THREADS};

/// Room for the last sessions to close, the kernel counters read before and after
/// the tests, and the diagnosis.
pub const MARGIN: Duration = Duration::from_secs(5 + 2 * super::kernel::READ_WAIT.as_secs());

/// Threads that run pair tests at once in a phase of `jobs` tests on `nodes` nodes.
pub fn threads(cfg: &MeshConfig, nodes: usize, jobs: usize, per_node: usize) -> usize {
    jobs.min(MAX_THREADS)
        .min(cfg.parallel.max(1))
        .min(nodes * per_node.max(1))
        .max(1)
}

/// The plan of a run over `networks` among `nodes` nodes, whose discovery took
/// `discovery`.
pub fn plan(cfg: &MeshConfig, nodes: usize, networks: &[MeshNetwork], discovery: Duration) -> Plan {
    let mut load = vec![0usize; nodes];
    let mut pairs = 0;
    let mut load_rounds = 0;
    for n in networks {
        let m = n.members.len();
        pairs += m * m.saturating_sub(1);
        load_rounds += tournament(m).len();
        for x in &n.members {
            if let Some(l) = load.get_mut(x.node) {
                *l += 2 * m.saturating_sub(1);
            }
        }
    }
    let per_node = cfg.per_node.max(1);
    let has = |t: MeshTests| cfg.tests.contains(&t);
    let path_waves = if has(MeshTests::Path) && pairs > 0 {
        let by_node = load.iter().max().copied().unwrap_or(0).div_ceil(per_node);
        let by_threads = pairs.div_ceil(threads(cfg, nodes, pairs, per_node));
        // And one for the path tests tried again.
        by_node.max(by_threads) + 1
    } else {
        0
    };
    let load_tests = [MeshTests::Rr, MeshTests::Stream]
        .into_iter()
        .filter(|&t| has(t))
        .count();
    let load_rounds = if load_tests > 0 { load_rounds } else { 0 };
    let deadline = discovery
        + cfg.pair_timeout * path_waves as u32
        + (cfg.pair_timeout + cfg.load_time) * (load_rounds * load_tests) as u32
        + MARGIN;
    Plan {
        pairs,
        path_waves,
        load_rounds,
        deadline,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::model::NodeAddr;

    fn net(n: usize) -> MeshNetwork {
        MeshNetwork {
            name: "A".into(),
            cidr: "10.1.0.0/24".parse().unwrap(),
            expect: 9000,
            members: (0..n)
                .map(|i| NodeAddr {
                    node: i,
                    addr: std::net::IpAddr::from([10, 1, 0, i as u8 + 1]),
                    iface: "eth1".into(),
                    mtu: 9000,
                })
                .collect(),
            source: crate::mesh::NetSource::Shared,
        }
    }

    fn cfg(tests: Vec<MeshTests>) -> MeshConfig {
        MeshConfig {
            nodes: Vec::new(),
            connect: crate::client::ConnectOptions::default(),
            nets: Vec::new(),
            expect: None,
            expect_nets: Vec::new(),
            tests,
            per_node: 4,
            parallel: 16,
            pair_timeout: Duration::from_secs(30),
            load_time: Duration::from_secs(2),
            block: crate::mesh::BlockTest::default(),
            oifcfg: None,
            max_block_p99: None,
        }
    }

    #[test]
    fn the_deadline_is_every_wave_at_its_whole_pair_deadline() {
        // 6 nodes on 2 networks: each node in 20 path tests, 4 at once: 5 waves,
        // and one for the retries; 60 tests on 16 threads would need only 4.
        let nets = [net(6), net(6)];
        let p = plan(
            &cfg(vec![MeshTests::Path]),
            6,
            &nets,
            Duration::from_secs(1),
        );
        assert_eq!((p.pairs, p.path_waves, p.load_rounds), (60, 6, 0));
        assert_eq!(p.deadline, Duration::from_secs(1 + 6 * 30) + MARGIN);
        // rr and stream: 2(N−1) rounds per network each, at the pair deadline plus
        // the load's length.
        let p = plan(
            &cfg(vec![MeshTests::Path, MeshTests::Rr, MeshTests::Stream]),
            6,
            &nets,
            Duration::ZERO,
        );
        assert_eq!(p.load_rounds, 20);
        assert_eq!(
            p.deadline,
            Duration::from_secs(6 * 30 + 2 * 20 * 32) + MARGIN
        );
    }
}
