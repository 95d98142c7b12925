//! `Lab::down`: stop the lab's processes, delete its namespaces (their veths, routes
//! and nftables tables go with them) and its state directory. Nothing else.
use std::path::Path;
use std::time::{Duration, Instant};

use crate::cmd::Runner;
use crate::env::{check_privilege, check_tools};
use crate::scenario::Topology;
use crate::state::{netns_name, state_dir, validate_name, Lab};
use crate::{LabError, Scenario};

pub(crate) fn namespace_exists(ns: &str) -> bool {
    Path::new("/run/netns").join(ns).exists()
}

/// Whether `pid` is a live (not zombie) process.
pub(crate) fn process_running(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let state = stat
        .rsplit(')')
        .next()
        .and_then(|s| s.split_whitespace().next());
    !matches!(state, None | Some("Z" | "X"))
}

/// Whether `pid` is a live (not zombie) process whose command line mentions `serve`
/// (so a recorded pid that was reused by another program does not count).
pub(crate) fn agent_alive(pid: u32) -> bool {
    if !process_running(pid) {
        return false;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    cmdline.split(|&b| b == 0).any(|w| w == b"serve")
}

fn ns_pids(ns: &str) -> Vec<String> {
    Runner::query(&["ip", "netns", "pids", ns])
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Stops every process inside the namespaces (TERM, then KILL after 2 s), then
/// deletes them. Errors are ignored: this is also the clean-up of a failed build.
pub(crate) fn remove_namespaces(run: Runner, namespaces: &[String]) {
    let pids: Vec<String> = namespaces.iter().flat_map(|ns| ns_pids(ns)).collect();
    if !pids.is_empty() {
        let mut argv = vec!["kill".to_string(), "-TERM".into()];
        argv.extend(pids);
        let _ = run.run(&argv);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && namespaces.iter().any(|ns| !ns_pids(ns).is_empty()) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let left: Vec<String> = namespaces.iter().flat_map(|ns| ns_pids(ns)).collect();
        if !left.is_empty() {
            let mut argv = vec!["kill".to_string(), "-KILL".into()];
            argv.extend(left);
            let _ = run.run(&argv);
        }
    }
    for ns in namespaces {
        let _ = run.run(&["ip", "netns", "del", ns]);
    }
}

impl Lab {
    /// Removes lab `name`; `Ok(false)` when there was nothing to remove. Looks for
    /// every host name the lab could have, so a lab whose build was interrupted (no
    /// state file) is removed too.
    pub fn down(name: &str, verbose: bool) -> Result<bool, LabError> {
        validate_name(name)?;
        check_privilege()?;
        check_tools(&["ip"])?;
        let run = Runner::new(verbose);
        let lab = Lab::load(name).ok().flatten();
        let mut hosts: Vec<String> = Topology::of(&Scenario::ALL)
            .hosts
            .into_iter()
            .map(|(h, _)| h)
            .collect();
        if let Some(lab) = &lab {
            hosts.extend(lab.host_names());
            let agents: Vec<String> = lab
                .agents
                .iter()
                .filter(|a| agent_alive(a.pid))
                .map(|a| a.pid.to_string())
                .collect();
            if !agents.is_empty() {
                let _ = run.run(&[&["kill".to_string(), "-TERM".into()][..], &agents].concat());
            }
        }
        hosts.sort();
        hosts.dedup();
        let present: Vec<String> = hosts
            .iter()
            .map(|h| netns_name(name, h))
            .filter(|ns| namespace_exists(ns))
            .collect();
        remove_namespaces(run, &present);
        let dir = state_dir(name);
        let had_state = dir.exists();
        if had_state {
            run.echo(&format!("rm -r {}", dir.display()));
            std::fs::remove_dir_all(&dir)
                .map_err(|source| LabError::State { path: dir, source })?;
        }
        Ok(had_state || !present.is_empty())
    }
}
