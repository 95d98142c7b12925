//! The arguments of `mtuperf lab`, and `lab up`'s turned into [`LabOptions`].
use clap::{Subcommand, ValueEnum};
use mtuperf_lab::{cluster, LabOptions, Scenario, DEFAULT_NAME};
use mtuperf_proto::units::BitsPerSec;

use crate::exit::Failure;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// The lab (several can exist side by side, each under its own name).
    #[arg(long, default_value = DEFAULT_NAME)]
    pub name: String,
    /// std, jumbo, routed, blackhole, mismatch, switchport or asym (repeatable; default: all),
    /// or cluster alone (with --nodes, --nets, --fault).
    #[arg(long = "scenario", value_name = "NAME")]
    pub scenarios: Vec<String>,
    /// Cluster: node namespaces n1..nN (2 to 64; default 4).
    #[arg(long, value_name = "N", help_heading = crate::heading::CLUSTER)]
    pub nodes: Option<u32>,
    /// Cluster: private networks net1..netK, one bridge (switch) each (1 to 4; default 2).
    #[arg(long, value_name = "K", help_heading = crate::heading::CLUSTER)]
    pub nets: Option<u32>,
    /// Cluster fault (repeatable): nic-mtu=NODE:NET:MTU, port-mtu=NODE:NET:MTU,
    /// routed=NODE:NET[:MTU], blackhole=NODE:NET[:MTU], inbound=NODE:NET[:MTU],
    /// outbound=NODE:NET[:MTU], loss=NODE:NET:PCT (e.g. nic-mtu=n3:1:1500),
    /// reasm=NODE[:BYTES] (the node's ipfrag_high_thresh: its reassembly of fragmented
    /// datagrams fails).
    #[arg(long = "fault", value_name = "KIND=NODE:NET[:VALUE]", help_heading = crate::heading::CLUSTER)]
    pub faults: Vec<String>,
    /// Cluster: HAIP-style link-local addresses (169.254.0.0/18 per network) on the
    /// private NICs, as Oracle Clusterware puts them.
    #[arg(long, help_heading = crate::heading::CLUSTER)]
    pub haip: bool,
    /// Cluster: a public network at MTU 1500 (pub0 on every node, 198.19.100.0/24),
    /// listed as public in the lab's oifcfg getif file.
    #[arg(long, help_heading = crate::heading::CLUSTER)]
    pub public: bool,
    /// TSO/GSO/GRO and UDP segmentation offload (tx-udp-segmentation) on every lab
    /// interface.
    #[arg(long, value_enum, default_value = "on", help_heading = crate::heading::LINKS)]
    pub offload: OnOff,
    /// Shape every link on both ends' egress (tc tbf), e.g. 1gbit, 100M.
    #[arg(long, value_name = "RATE", help_heading = crate::heading::LINKS)]
    pub rate: Option<String>,
    /// Drop this percentage of UDP datagrams and ICMP echoes (never TCP) on every link.
    #[arg(long, value_name = "PCT", help_heading = crate::heading::LINKS)]
    pub loss: Option<f64>,
    /// Print every command as a shell line.
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Build a lab: namespaces joined by veth pairs, one per scenario (all by default),
    /// or a cluster of N nodes on K bridged networks with faults.
    Up(UpArgs),
    /// Remove a lab: its agents, namespaces, veths and nftables tables.
    Down {
        /// The lab (several can exist side by side, each under its own name).
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        #[arg(long, short)]
        verbose: bool,
    },
    /// Hosts, links, MTUs, offloads, rate, loss, cluster networks and faults, agents.
    Status {
        /// The lab (several can exist side by side, each under its own name).
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        #[arg(long)]
        json: bool,
    },
    /// Run a command inside a lab host; its exit code is passed through.
    Exec {
        /// The lab (several can exist side by side, each under its own name).
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        /// client, std, jumbo, routed-router, routed, ..., or a cluster node n1, n2, ...
        host: String,
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            required = true,
            value_name = "CMD"
        )]
        command: Vec<String>,
    },
    /// Start a keyed agent (`mtuperf serve`) in every server host or cluster node.
    Serve {
        /// The lab (several can exist side by side, each under its own name).
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        /// Print the agents, their addresses and the key file as JSON.
        #[arg(long)]
        json: bool,
        /// Extra arguments for the agent, after `--`.
        #[arg(last = true, value_name = "AGENT_ARGS")]
        extra: Vec<String>,
    },
    /// Start an OpenSSH server in every cluster node (keys made for the lab) and print
    /// the `ssh -F` config that reaches them (for `mesh --ssh`).
    Sshd {
        /// The lab (several can exist side by side, each under its own name).
        #[arg(long, default_value = DEFAULT_NAME)]
        name: String,
        /// Print the config and each node's sshd as JSON.
        #[arg(long)]
        json: bool,
    },
}

impl UpArgs {
    /// The options `Lab::up` takes; a cluster when `--scenario cluster` is given.
    pub fn options(self) -> Result<LabOptions, Failure> {
        let lab_err = |e: mtuperf_lab::LabError| Failure::new(crate::exit::USAGE, e);
        let scenarios = self
            .scenarios
            .iter()
            .map(|s| s.parse::<Scenario>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(lab_err)?;
        let is_cluster = scenarios.contains(&Scenario::Cluster);
        if !is_cluster {
            let given = [
                ("--nodes", self.nodes.map(|n| n.to_string())),
                ("--nets", self.nets.map(|n| n.to_string())),
                ("--fault", self.faults.first().cloned()),
                ("--haip", self.haip.then(|| "true".into())),
                ("--public", self.public.then(|| "true".into())),
            ];
            if let Some((flag, Some(value))) = given.into_iter().find(|(_, g)| g.is_some()) {
                return Err(Failure::needs(
                    &format!("{flag} {value}"),
                    "--scenario cluster",
                    "--nodes, --nets, --fault, --haip and --public shape a cluster lab",
                    "add --scenario cluster",
                ));
            }
        }
        let rate = match &self.rate {
            None => None,
            Some(r) => Some(
                BitsPerSec::parse(r)
                    .map_err(|e| {
                        Failure::bad_value(
                            "--rate",
                            r,
                            "a rate such as 1gbit or 100M",
                            &e.to_string(),
                        )
                    })?
                    .0 as u64,
            ),
        };
        let cluster = if is_cluster {
            if scenarios.len() > 1 {
                return Err(Failure::conflict(
                    "--scenario cluster",
                    "other scenarios",
                    &format!(
                        "a cluster lab is built by itself (given: {})",
                        self.scenarios.join(",")
                    ),
                    "build the others under another --name",
                ));
            }
            Some(
                cluster::parse(
                    self.nodes.unwrap_or(4),
                    self.nets.unwrap_or(2),
                    &self.faults,
                )
                .map_err(lab_err)?
                .with(self.haip, self.public),
            )
        } else {
            None
        };
        Ok(LabOptions {
            name: self.name,
            scenarios,
            offload: matches!(self.offload, OnOff::On),
            rate,
            loss_pct: self.loss,
            cluster,
            verbose: self.verbose,
        })
    }
}
