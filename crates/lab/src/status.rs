//! `Lab::status`: what the state says, checked against the live namespaces
//! (present, MTU, offloads, agents), as data for `--json` and as a text table.
use std::fmt::Write as _;
use std::net::IpAddr;

use mtuperf_proto::units::BitsPerSec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use mtuperf_sys::{ethtool, netns, rtnl};

use crate::cluster_view::ClusterStatus;
use crate::down::{agent_alive, namespace_exists};
use crate::scenario::Scenario;
use crate::scenario::{Iface, Role, BRIDGE};
use crate::state::Lab;

/// The `schema` of `lab status --json`.
pub const SCHEMA: &str = "mtuperf.lab.status/2";

/// What `mtuperf lab status --json` prints: a lab as built (from its state) and as it
/// is now (namespaces present, live MTUs and offloads, agents). A cluster lab has no
/// scenarios or targets and a `cluster` object instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LabStatus {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: String,
    pub name: String,
    pub scenarios: Vec<Scenario>,
    /// TSO/GSO/GRO left on (`--offload on`).
    pub offload: bool,
    /// tc tbf rate on every link (bit/s).
    pub rate_bps: Option<u64>,
    /// `--loss` on every link, %.
    pub loss_pct: Option<f64>,
    pub hosts: Vec<HostStatus>,
    pub targets: Vec<TargetStatus>,
    /// The cluster scenario: networks, nodes' addresses, faults.
    pub cluster: Option<ClusterStatus>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HostStatus {
    pub name: String,
    pub role: Role,
    pub netns: String,
    /// The namespace exists.
    pub present: bool,
    pub interfaces: Vec<IfaceStatus>,
    pub agent: Option<AgentStatus>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct IfaceStatus {
    pub name: String,
    /// `host:ifname` at the other end of the veth.
    pub peer: String,
    pub mtu: u32,
    /// The MTU the kernel reports now (None when it could not be read).
    pub mtu_live: Option<u32>,
    pub v4: String,
    pub v6: String,
    /// TSO, GSO and GRO as the ethtool ioctl reports them now (None when it could not
    /// be read).
    pub offload_live: Option<Offloads>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Offloads {
    pub tso: bool,
    pub gso: bool,
    pub gro: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentStatus {
    pub pid: u32,
    pub port: u16,
    pub alive: bool,
    pub log: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetStatus {
    pub scenario: Scenario,
    pub v4: Option<IpAddr>,
    pub v6: Option<IpAddr>,
    pub client_v4: Option<IpAddr>,
}

fn live_mtu(ns: &str, ifname: &str) -> Option<u32> {
    netns::run_in(ns, || rtnl::link_mtu(ifname)).ok()?.ok()
}

fn live_offload(ns: &str, ifname: &str) -> Option<Offloads> {
    let (tso, gso, gro) = netns::run_in(ns, || ethtool::segmentation_offloads(ifname))
        .ok()?
        .ok()?;
    Some(Offloads { tso, gso, gro })
}

/// A bridge port has no address ("-"); every other interface has its planned one.
fn addr(role: Role, planned: String) -> String {
    if role == Role::Switch {
        format!("- ({BRIDGE})")
    } else {
        planned
    }
}

impl Lab {
    /// The lab as built and as it is now.
    pub fn status(&self) -> LabStatus {
        let peers = self.links.iter().flat_map(|l| [(&l.a, &l.b), (&l.b, &l.a)]);
        let ifaces: Vec<(&Iface, &Iface)> = peers.collect();
        let hosts = self
            .hosts
            .iter()
            .map(|h| {
                let present = namespace_exists(&h.netns);
                let interfaces = ifaces
                    .iter()
                    .filter(|(i, _)| i.host == h.name)
                    .map(|(i, p)| IfaceStatus {
                        name: i.name.clone(),
                        peer: format!("{}:{}", p.host, p.name),
                        mtu: i.mtu,
                        mtu_live: present.then(|| live_mtu(&h.netns, &i.name)).flatten(),
                        v4: addr(h.role, format!("{}/{}", i.v4, i.v4_prefix)),
                        v6: addr(h.role, format!("{}/{}", i.v6, i.v6_prefix)),
                        offload_live: present.then(|| live_offload(&h.netns, &i.name)).flatten(),
                    })
                    .collect();
                let agent = self
                    .agents
                    .iter()
                    .find(|a| a.host == h.name)
                    .map(|a| AgentStatus {
                        pid: a.pid,
                        port: a.port,
                        alive: agent_alive(a.pid),
                        log: a.log.display().to_string(),
                    });
                HostStatus {
                    name: h.name.clone(),
                    role: h.role,
                    netns: h.netns.clone(),
                    present,
                    interfaces,
                    agent,
                }
            })
            .collect();
        let targets = self
            .scenarios
            .iter()
            .map(|&s| TargetStatus {
                scenario: s,
                v4: self.target(s),
                v6: self.target_v6(s),
                client_v4: self.client_addr(s),
            })
            .collect();
        LabStatus {
            schema: SCHEMA.into(),
            name: self.name.clone(),
            scenarios: self.scenarios.clone(),
            offload: self.offload,
            rate_bps: self.rate,
            loss_pct: self.loss_pct,
            hosts,
            targets,
            cluster: self.cluster_status(),
        }
    }
}

impl LabStatus {
    /// A table of hosts, interfaces, addresses and MTUs, then the targets. An MTU that
    /// differs from the one the lab set is shown live with a `!`.
    pub fn render_text(&self) -> String {
        let mut s = String::new();
        let rate = self
            .rate_bps
            .map_or("unlimited".into(), |r| BitsPerSec(r as f64).to_string());
        let loss = self
            .loss_pct
            .map_or("none".into(), |p| format!("{p}% of UDP and ICMP echo"));
        let off = if self.offload { "on" } else { "off" };
        let _ = writeln!(
            s,
            "lab {:?}: offloads {off}, rate {rate}, loss {loss}",
            self.name
        );
        let _ = writeln!(
            s,
            "{:<17} {:<11} {:>5}  {:<17} {:<22} {:<11} {:<22} AGENT",
            "HOST", "INTERFACE", "MTU", "IPv4", "IPv6", "TSO/GSO/GRO", "PEER"
        );
        for h in &self.hosts {
            let agent = match (&h.agent, h.present) {
                (_, false) => "namespace missing".to_string(),
                (Some(a), _) if a.alive => format!("pid {} port {}", a.pid, a.port),
                (Some(a), _) => format!("stopped (pid {})", a.pid),
                (None, _) => "-".into(),
            };
            for (k, i) in h.interfaces.iter().enumerate() {
                let name = if k == 0 { h.name.as_str() } else { "" };
                let mtu = match i.mtu_live {
                    Some(live) if live != i.mtu => format!("{live}!"),
                    _ => i.mtu.to_string(),
                };
                let agent = if k == 0 { agent.as_str() } else { "" };
                let onoff = |b: bool| if b { "on" } else { "off" };
                let offload = i.offload_live.map_or("?".into(), |o| {
                    format!("{}/{}/{}", onoff(o.tso), onoff(o.gso), onoff(o.gro))
                });
                let row = format!(
                    "{name:<17} {:<11} {mtu:>5}  {:<17} {:<22} {offload:<11} {:<22} {agent}",
                    i.name, i.v4, i.v6, i.peer
                );
                let _ = writeln!(s, "{}", row.trim_end());
            }
        }
        if let Some(c) = &self.cluster {
            s.push_str(&c.render_text());
        }
        if !self.targets.is_empty() {
            let _ = writeln!(s, "targets (from host client):");
        }
        for t in &self.targets {
            let show = |a: Option<IpAddr>| a.map_or("-".into(), |a| a.to_string());
            let _ = writeln!(
                s,
                "  {:<10} {:<15} {}",
                t.scenario.name(),
                show(t.v4),
                show(t.v6)
            );
        }
        s
    }
}
