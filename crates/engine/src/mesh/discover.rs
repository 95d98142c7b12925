//! The first step of a mesh: ask every node's agent for its interfaces and
//! addresses (in parallel), and name the nodes.
use mtuperf_proto::msg::mesh::{DiscoverRequest, Discovery};
use mtuperf_proto::msg::ClientMsg;

use super::finding::NodeError;
use super::model::{MeshConfig, MeshNode};
use super::schedule::{run_bounded, MAX_THREADS};
use crate::client::Session;
use crate::EngineError;

fn discover_node(cfg: &MeshConfig, target: &str) -> Result<(Discovery, u32), EngineError> {
    let s = Session::connect(target, &cfg.connect)?;
    let max_sessions = s.info.limits.max_sessions;
    let d = s.ask(&ClientMsg::Discover(DiscoverRequest {}), "discovery");
    s.close();
    Ok((d?, max_sessions))
}

/// Asks every node's agent for its interfaces, in parallel.
pub fn discover(cfg: &MeshConfig) -> Vec<MeshNode> {
    let jobs: Vec<usize> = (0..cfg.nodes.len()).collect();
    let done = |_: usize, _: &MeshNode| {};
    let nodes = run_bounded(
        &jobs,
        |&i| (i, i),
        1,
        jobs.len().min(MAX_THREADS),
        &|| false,
        |&i| {
            let (name, agent) = cfg.nodes.get(i).cloned().unwrap_or_default();
            let (discovery, max_sessions, error) = match discover_node(cfg, &agent) {
                Ok((d, m)) => (Some(d), Some(m), None),
                Err(e) => (None, None, Some(NodeError::Discovery { error: e.failed() })),
            };
            MeshNode {
                label: name.unwrap_or_default(),
                agent,
                hostname: discovery.as_ref().map(|d| d.facts.hostname.clone()),
                error,
                max_sessions,
                discovery,
            }
        },
        &done,
    );
    let mut nodes: Vec<MeshNode> = nodes.into_iter().flatten().collect();
    let mut hostnames: Vec<&str> = nodes.iter().filter_map(|n| n.hostname.as_deref()).collect();
    hostnames.sort_unstable();
    hostnames.dedup();
    let distinct = hostnames.len() == nodes.len();
    for n in nodes.iter_mut().filter(|n| n.label.is_empty()) {
        n.label = match (&n.hostname, distinct) {
            (Some(h), true) => h.clone(),
            _ => n.agent.clone(),
        };
    }
    nodes
}
