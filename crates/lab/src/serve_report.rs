//! What `lab serve` prints: every agent (host, pid, port, log, the addresses it
//! binds; for a cluster node its address on each network) and the lab's key file,
//! as text or as `mtuperf.lab.serve/2` JSON (schemas/lab-serve.schema.json).
use std::fmt::Write as _;
use std::net::IpAddr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cluster_view::NodeAddr;
use crate::down::agent_alive;
use crate::state::Lab;

/// The `schema` of `lab serve --json`.
pub const SCHEMA: &str = "mtuperf.lab.serve/2";

/// What `mtuperf lab serve --json` prints: the agents of a lab, one per scenario's
/// server host or one per cluster node with its address on every network, and the key
/// file every agent was started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServeReport {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    /// The lab name (`--name`).
    pub name: String,
    /// The key every agent was started with (clients need it), once created.
    pub key_file: Option<String>,
    pub agents: Vec<ServedAgent>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServedAgent {
    /// Lab host (std, jumbo, ... or a cluster node n1, n2, ...).
    pub host: String,
    /// Its network namespace (`ip netns exec NETNS ...`).
    pub netns: String,
    pub pid: u32,
    pub port: u16,
    /// The process runs now.
    pub alive: bool,
    /// Addresses the agent listens on.
    pub binds: Vec<IpAddr>,
    /// The agent's stdout/stderr.
    pub log: String,
    /// A cluster node's address on each network (empty for other labs).
    pub nets: Vec<NodeAddr>,
}

impl Lab {
    /// The lab's agents as `lab serve` reports them.
    pub fn serve_report(&self) -> ServeReport {
        ServeReport {
            schema: SCHEMA.into(),
            name: self.name.clone(),
            key_file: self.key_file().map(|k| k.display().to_string()),
            agents: self
                .agents
                .iter()
                .map(|a| ServedAgent {
                    host: a.host.clone(),
                    netns: self.netns(&a.host).unwrap_or_default(),
                    pid: a.pid,
                    port: a.port,
                    alive: agent_alive(a.pid),
                    binds: a.binds.clone(),
                    log: a.log.display().to_string(),
                    nets: self.node_addrs(&a.host),
                })
                .collect(),
        }
    }
}

impl ServeReport {
    /// One line per agent (per network for a cluster node), then the key.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        for a in &self.agents {
            let state = if a.alive { "" } else { " (not running)" };
            let binds: Vec<String> = a.binds.iter().map(ToString::to_string).collect();
            if a.nets.is_empty() {
                let _ = writeln!(
                    s,
                    "{:<10} agent pid {:<7} listening on {} port {} (log {}){state}",
                    a.host,
                    a.pid,
                    binds.join(", "),
                    a.port,
                    a.log
                );
                continue;
            }
            let _ = writeln!(
                s,
                "{:<6} agent pid {:<7} port {} (log {}){state}",
                a.host, a.pid, a.port, a.log
            );
            for n in &a.nets {
                let _ = writeln!(
                    s,
                    "         {:<5} {:<15} {:<22} mtu {}",
                    n.ifname, n.v4, n.v6, n.mtu
                );
            }
        }
        if let Some(key) = &self.key_file {
            let _ = writeln!(
                s,
                "key        {key} (clients run with `mtuperf lab exec` get it as MTUPERF_KEY_FILE)"
            );
        }
        s
    }
}
