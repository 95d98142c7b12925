//! What `Lab::up` is asked to build.
use crate::cluster::Cluster;
use crate::scenario::Scenario;

/// The lab used when no `--name` is given.
pub const DEFAULT_NAME: &str = "default";

/// What `Lab::up` builds.
#[derive(Debug, Clone, PartialEq)]
pub struct LabOptions {
    /// Lab name: letters, digits, `-` and `_`, at most 32 characters.
    pub name: String,
    /// Scenarios to build; empty means all of them.
    pub scenarios: Vec<Scenario>,
    /// `false` turns TSO/GSO/GRO and UDP segmentation offload off on every lab
    /// interface.
    pub offload: bool,
    /// Shape every link to this rate (bit/s) on both ends' egress (tc tbf).
    pub rate: Option<u64>,
    /// Drop this percentage of UDP datagrams and ICMP echoes (see the crate docs).
    pub loss_pct: Option<f64>,
    /// Build the `cluster` scenario instead of `scenarios`.
    pub cluster: Option<Cluster>,
    /// Print every command as a shell line on stderr.
    pub verbose: bool,
}

impl Default for LabOptions {
    fn default() -> Self {
        LabOptions {
            name: DEFAULT_NAME.into(),
            scenarios: Scenario::ALL.to_vec(),
            offload: true,
            rate: None,
            loss_pct: None,
            cluster: None,
            verbose: false,
        }
    }
}

impl LabOptions {
    /// A cluster lab named `name` (scenario `cluster` alone, offloads on).
    pub fn cluster(name: &str, cluster: Cluster) -> LabOptions {
        LabOptions {
            name: name.into(),
            scenarios: vec![Scenario::Cluster],
            cluster: Some(cluster),
            ..LabOptions::default()
        }
    }
}
