//! The lab's state (what was built, which agents run) as JSON in
//! `/run/mtuperf/lab/<name>/state.json`, and the accessors other crates use.
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::cluster::Cluster;
use crate::error::LabError;
use crate::scenario::{Iface, Link, Role, Route, Scenario, CLIENT};

/// Where lab state lives (tmpfs: gone after a reboot, as the namespaces are).
pub const STATE_ROOT: &str = "/run/mtuperf/lab";
const SCHEMA: &str = "mtuperf.lab/2";

/// One namespace of the lab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub name: String,
    pub role: Role,
    pub netns: String,
}

/// An agent started by `serve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agent {
    pub host: String,
    pub pid: u32,
    pub port: u16,
    pub binds: Vec<IpAddr>,
    pub log: PathBuf,
}

/// A built lab: options, hosts, links, routes and agents. Serialized as the state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lab {
    pub schema: String,
    pub name: String,
    pub scenarios: Vec<Scenario>,
    pub offload: bool,
    pub rate: Option<u64>,
    pub loss_pct: Option<f64>,
    pub hosts: Vec<Host>,
    pub links: Vec<Link>,
    pub routes: Vec<Route>,
    pub agents: Vec<Agent>,
    /// The cluster scenario's sizes and faults (its `scenarios` is empty).
    pub cluster: Option<Cluster>,
}

/// The namespace name of `host` in lab `lab`.
pub fn netns_name(lab: &str, host: &str) -> String {
    format!("mtlab-{lab}-{host}")
}

/// The state directory of lab `name`.
pub fn state_dir(name: &str) -> PathBuf {
    Path::new(STATE_ROOT).join(name)
}

/// Lab names become namespace and directory names: keep them plain.
pub(crate) fn validate_name(name: &str) -> Result<(), LabError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(LabError::Invalid {
            what: "lab name (--name)".into(),
            value: name.into(),
            allowed: "1 to 32 letters, digits, '-' or '_'".into(),
        })
    }
}

impl Lab {
    pub(crate) fn new_schema() -> String {
        SCHEMA.into()
    }

    pub fn state_dir(&self) -> PathBuf {
        state_dir(&self.name)
    }

    /// A cluster lab's `oifcfg getif` output, written by `lab up` (for `mesh --oifcfg`).
    pub fn oifcfg_path(&self) -> Option<PathBuf> {
        self.cluster
            .as_ref()
            .map(|_| self.state_dir().join("oifcfg-getif.txt"))
    }

    /// The state of lab `name`, or `None` when no such lab was built.
    pub fn load(name: &str) -> Result<Option<Lab>, LabError> {
        validate_name(name)?;
        let path = state_dir(name).join("state.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(LabError::State { path, source }),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| LabError::StateFormat { path, source })
    }

    /// Writes the state (atomically: temp file then rename).
    pub(crate) fn save(&self) -> Result<(), LabError> {
        let dir = self.state_dir();
        let path = dir.join("state.json");
        let io = |source| LabError::State {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let text = serde_json::to_string_pretty(self).expect("lab state serializes");
        let tmp = dir.join("state.json.tmp");
        std::fs::write(&tmp, text + "\n").map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }

    /// The namespace name of a host (`client`, `std`, `routed-router`, ...).
    pub fn netns(&self, host: &str) -> Option<String> {
        self.hosts
            .iter()
            .find(|h| h.name == host)
            .map(|h| h.netns.clone())
    }

    /// Host names, client first.
    /// The role of a host.
    pub fn role(&self, host: &str) -> Option<Role> {
        self.hosts.iter().find(|h| h.name == host).map(|h| h.role)
    }

    pub fn host_names(&self) -> Vec<String> {
        self.hosts.iter().map(|h| h.name.clone()).collect()
    }

    /// The server's interface of a scenario (the far end of its last link).
    pub fn server_iface(&self, scenario: Scenario) -> Option<&Iface> {
        self.links
            .iter()
            .rev()
            .find(|l| l.scenario == scenario)
            .map(|l| &l.b)
    }

    /// The client's interface of a scenario.
    pub fn client_iface(&self, scenario: Scenario) -> Option<&Iface> {
        self.links
            .iter()
            .find(|l| l.scenario == scenario && l.a.host == CLIENT)
            .map(|l| &l.a)
    }

    /// The server address of a scenario (IPv4): the target for stream/rr/path.
    pub fn target(&self, scenario: Scenario) -> Option<IpAddr> {
        self.server_iface(scenario).map(|i| i.v4.into())
    }

    /// The server address of a scenario (IPv6).
    pub fn target_v6(&self, scenario: Scenario) -> Option<IpAddr> {
        self.server_iface(scenario).map(|i| i.v6.into())
    }

    /// The client's IPv4 address on the scenario's link.
    pub fn client_addr(&self, scenario: Scenario) -> Option<IpAddr> {
        self.client_iface(scenario).map(|i| i.v4.into())
    }

    /// The client's IPv6 address on the scenario's link.
    pub fn client_addr_v6(&self, scenario: Scenario) -> Option<IpAddr> {
        self.client_iface(scenario).map(|i| i.v6.into())
    }

    /// `argv` started inside a host, as `ip netns exec NS argv...` would (mtuperf
    /// enters the namespace itself: no `ip` needed); a missing program is a spawn
    /// error of kind `NotFound`. An unknown host gets a command that fails with a
    /// message naming the known hosts.
    pub fn exec_command(&self, host: &str, argv: &[String]) -> Command {
        if let Some(ns) = self.netns(host) {
            let (prog, args) = argv
                .split_first()
                .map_or(("", &[][..]), |(p, a)| (p.as_str(), a));
            let mut cmd = Command::new(prog);
            cmd.args(args);
            mtuperf_sys::netns::enter_on_spawn(&mut cmd, &ns, false);
            // Clients started in the lab authenticate to its agents with its key.
            if let Some(key) = self.key_file() {
                cmd.env("MTUPERF_KEY_FILE", key);
            }
            cmd
        } else {
            let mut cmd = Command::new("sh");
            let msg = format!(
                "mtuperf lab: no host {host:?} in lab {:?} (hosts: {})",
                self.name,
                self.host_names().join(", ")
            );
            cmd.args(["-c", "echo \"$1\" >&2; exit 2", "sh", &msg]);
            cmd
        }
    }

    /// Checks that `host` exists, for callers that want an error instead.
    pub fn check_host(&self, host: &str) -> Result<(), LabError> {
        match self.netns(host) {
            Some(_) => Ok(()),
            None => Err(LabError::Invalid {
                what: "host".into(),
                value: host.into(),
                allowed: format!("in lab {:?}: {}", self.name, self.host_names().join(", ")),
            }),
        }
    }
}
