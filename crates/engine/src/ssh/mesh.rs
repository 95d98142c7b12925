//! `mesh --ssh`: the started agents as the mesh's nodes, the agents' lifetime from the
//! mesh's own deadlines, and the nodes SSH could not start as findings of the run.

use std::time::Duration;

use super::fleet::Fleet;
use crate::mesh::{Finding, MeshConfig, MeshFinding, MeshNode, MeshResult, MeshTests, NodeError};

/// Added to the run's longest possible length for the agents' hard lifetime.
pub const LIFETIME_MARGIN: Duration = Duration::from_mins(1);
/// Networks assumed when `--net` does not say (RAC's HAIP uses at most four).
const NETS_ASSUMED: usize = 4;

/// The longest a mesh of `nodes` can run by its own deadlines (discovery, every path
/// pair at its `--pair-timeout` and its one retry, every rr and stream round), plus
/// [`LIFETIME_MARGIN`]: the agents' hard lifetime. `nets` is the number of `--net`
/// filters (0: unknown, [`NETS_ASSUMED`]).
pub fn lifetime(cfg: &MeshConfig, nodes: usize, nets: usize, bootstrap: Duration) -> Duration {
    let nets = if nets == 0 { NETS_ASSUMED } else { nets } as u32;
    let n = nodes.max(2) as u32;
    let pairs = nets * n * (n - 1);
    let at_once = (cfg.parallel.max(1) as u32).min((n * cfg.per_node.max(1) as u32 / 2).max(1));
    let mut t = bootstrap + cfg.connect.connect_timeout + cfg.connect.reply_timeout;
    if cfg.tests.contains(&MeshTests::Path) {
        t += cfg.pair_timeout * pairs.div_ceil(at_once) * 2;
    }
    let rounds = nets * 2 * (n - 1 + n % 2);
    for kind in [MeshTests::Rr, MeshTests::Stream] {
        if cfg.tests.contains(&kind) {
            t += (cfg.pair_timeout + cfg.load_time) * rounds;
        }
    }
    (t + LIFETIME_MARGIN).min(Duration::from_hours(24))
}

/// The ready nodes as the mesh's nodes: (label, the agent's control address).
pub fn nodes(fleet: &Fleet) -> Vec<(Option<String>, String)> {
    fleet
        .ready()
        .map(|r| (Some(r.label.clone()), r.control.to_string()))
        .collect()
}

/// Adds the nodes SSH could not start to `result`: each a node with its typed failure
/// and an `unreachable` finding (worded by the report: "node n3: ssh: Permission
/// denied (publickey)"). Appended after the mesh's own nodes and findings, so their
/// indices stay valid.
pub fn add_failed(result: &mut MeshResult, fleet: &Fleet) {
    for f in fleet.failed() {
        let node = result.nodes.len();
        let agent = format!("ssh {}", f.ssh);
        let error = NodeError::Ssh {
            failure: f.failure.clone(),
        };
        result.nodes.push(MeshNode {
            label: f.label.clone(),
            agent: agent.clone(),
            hostname: None,
            error: Some(error.clone()),
            max_sessions: None,
            discovery: None,
        });
        result.findings.push(MeshFinding::new(
            None,
            Some(node),
            Finding::Unreachable { agent, error },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ConnectOptions;

    fn cfg(tests: Vec<MeshTests>) -> MeshConfig {
        MeshConfig {
            block: crate::mesh::BlockTest::default(),
            oifcfg: None,
            max_block_p99: None,
            nodes: Vec::new(),
            connect: ConnectOptions::default(),
            nets: Vec::new(),
            expect: None,
            expect_nets: Vec::new(),
            tests,
            per_node: 4,
            parallel: 16,
            pair_timeout: Duration::from_mins(1),
            load_time: Duration::from_secs(2),
        }
    }

    #[test]
    fn the_lifetime_covers_every_deadline_of_the_run() {
        let boot = Duration::from_secs(30);
        // 5 nodes, 2 networks: 40 path pairs, 10 at once: 4 × 60 s, twice.
        let path = lifetime(&cfg(vec![MeshTests::Path]), 5, 2, boot);
        assert_eq!(path, Duration::from_secs(30 + 5 + 10 + 480 + 60));
        // rr adds 2 networks × 2 × 5 rounds (odd: one node rests each round) of 62 s.
        let rr = lifetime(&cfg(vec![MeshTests::Path, MeshTests::Rr]), 5, 2, boot);
        assert_eq!(rr.checked_sub(path), Some(Duration::from_secs(20 * 62)));
        // Unknown networks count as four; never more than a day.
        assert!(lifetime(&cfg(vec![MeshTests::Path]), 5, 0, boot) > path);
        assert_eq!(
            lifetime(
                &cfg(vec![MeshTests::Path, MeshTests::Rr, MeshTests::Stream]),
                64,
                0,
                boot
            ),
            Duration::from_hours(24)
        );
    }
}
