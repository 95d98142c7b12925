//! Placement of a run's two ends, summarised: the CPUs each end's test threads were
//! seen on, where the receive softirqs ran, and whether the ends shared a CPU; in
//! words in `text` (the comparison's HTML section is `compare::html::placement`).

mod text;

use mtuperf_proto::host::HostIdentity;
use mtuperf_proto::placement::Placement;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use text::{end, line};

/// Both ends' placement in one run, as compare and the text line use it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlacementSummary {
    /// CPUs the client's test threads were seen on (sampled during the run).
    pub client_cpus: Vec<u32>,
    /// CPUs the agent's test threads were seen on.
    pub agent_cpus: Vec<u32>,
    /// Both ends report the same hostname and kernel: taken as one host (loopback,
    /// the lab's namespaces), so that their CPUs are the same CPUs.
    pub same_host: bool,
    /// On one host: whether the CPU each end's threads were seen on most is the
    /// same one. Null when the ends are different hosts or a side was not sampled.
    pub shared_cpu: Option<bool>,
    /// The CPU that handled most NET_RX softirqs on the client's host during the run.
    pub client_rx_cpu: Option<u32>,
    pub agent_rx_cpu: Option<u32>,
}

/// Summarises two ends' placements; None when neither end recorded one (runs from
/// before placement was recorded, or an agent older than protocol 5).
pub fn summarize(
    client: Option<&Placement>,
    agent: Option<&Placement>,
    client_host: &HostIdentity,
    agent_host: &HostIdentity,
) -> Option<PlacementSummary> {
    if client.is_none() && agent.is_none() {
        return None;
    }
    let same_host =
        client_host.hostname == agent_host.hostname && client_host.kernel == agent_host.kernel;
    let main = |p: Option<&Placement>| p.and_then(Placement::main_cpu);
    let shared_cpu = match (same_host, main(client), main(agent)) {
        (true, Some(a), Some(b)) => Some(a == b),
        _ => None,
    };
    Some(PlacementSummary {
        client_cpus: client.map(Placement::thread_cpus).unwrap_or_default(),
        agent_cpus: agent.map(Placement::thread_cpus).unwrap_or_default(),
        same_host,
        shared_cpu,
        client_rx_cpu: client.and_then(Placement::main_rx_cpu),
        agent_rx_cpu: agent.and_then(Placement::main_rx_cpu),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_proto::placement::ThreadPlacement;

    pub(super) fn on(cpu: u32) -> Placement {
        Placement {
            pinned: Some(vec![cpu]),
            online: vec![0, 1],
            threads: vec![ThreadPlacement {
                role: mtuperf_proto::placement::ThreadRole::Requester,
                cpus: vec![[cpu, 10]],
                pinned: None,
            }],
            sample_ms: 10,
            net_rx: vec![[1, 40]],
            ..Placement::default()
        }
    }

    #[test]
    fn one_host_shares_a_cpu_only_when_the_main_cpus_match() {
        let h = HostIdentity {
            hostname: "h".into(),
            ..HostIdentity::default()
        };
        let other = HostIdentity {
            hostname: "g".into(),
            ..HostIdentity::default()
        };
        let s = summarize(Some(&on(0)), Some(&on(0)), &h, &h).unwrap();
        assert_eq!(s.shared_cpu, Some(true));
        let s = summarize(Some(&on(0)), Some(&on(1)), &h, &h).unwrap();
        assert_eq!(s.shared_cpu, Some(false));
        assert_eq!((s.client_cpus, s.agent_cpus), (vec![0], vec![1]));
        let t = line(
            Some(&on(0)),
            Some(&on(1)),
            Some(&summarize(Some(&on(0)), Some(&on(1)), &h, &h).unwrap()),
        )
        .unwrap();
        assert!(
            t.contains("client threads on CPU 0 (pinned 0)") && t.contains("cross-CPU"),
            "{t}"
        );
        let s = summarize(Some(&on(0)), Some(&on(0)), &h, &other).unwrap();
        assert_eq!(s.shared_cpu, None);
        assert!(summarize(None, None, &h, &h).is_none());
    }
}
