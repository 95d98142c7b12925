//! `mesh --ssh`: the started agents as the mesh's nodes, the agents' lifetime from the
//! mesh's own deadlines, and the nodes SSH could not start as findings of the run.

use std::time::Duration;

use super::fleet::Fleet;
use crate::mesh::diagnose::{FindingKind, MeshFinding};
use crate::mesh::{MeshConfig, MeshNode, MeshResult, MeshTests};

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

/// Adds the nodes SSH could not start to `result`: each a node with its error and an
/// `unreachable` finding naming the step ("node n3: ssh: Permission denied
/// (publickey)"). Appended after the mesh's own nodes and findings, so their indices
/// stay valid.
pub fn add_failed(result: &mut MeshResult, fleet: &Fleet) {
    for f in fleet.failed() {
        let node = result.nodes.len();
        result.nodes.push(MeshNode {
            label: f.label.clone(),
            agent: format!("ssh {}", f.ssh),
            hostname: None,
            error: Some(f.failure.to_string()),
            max_sessions: None,
            discovery: None,
        });
        result.findings.push(MeshFinding {
            kind: FindingKind::Unreachable,
            net: None,
            node: Some(node),
            directions: Vec::new(),
            summary: format!("node {}: {}", f.label, f.failure),
            evidence: format!(
                "its agent could not be started over SSH (step: {}); no pair with this node was tested",
                f.failure.step.name()
            ),
            next: next_step(f.failure.step, &f.ssh),
        });
    }
}

fn next_step(step: super::Step, ssh: &str) -> String {
    match step {
        super::Step::Connect => format!(
            "check that `ssh -o BatchMode=yes {ssh} true` works from this host without a prompt (sshd running, your key in its authorized_keys, its host key in your known_hosts), with the same --ssh-command"
        ),
        super::Step::Copy => format!(
            "install this mtuperf version on {ssh} (on its PATH), or check that a private temporary directory there allows programs to run"
        ),
        super::Step::Start => format!("run `mtuperf serve` on {ssh} by hand to see why the agent does not start"),
        super::Step::Plan => "choose the interconnect with --net (every node needs an address on a network shared with another node)".into(),
        super::Step::Interrupted => "run again".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ConnectOptions;

    fn cfg(tests: Vec<MeshTests>) -> MeshConfig {
        MeshConfig {
            nodes: Vec::new(),
            connect: ConnectOptions::default(),
            nets: Vec::new(),
            expect: None,
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
