//! `Lab::down`: stop the lab's processes, delete its namespaces (their veths, routes
//! and nftables tables go with them) and its state directory. Nothing else.
use std::time::{Duration, Instant};

use mtuperf_sys::netns;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use crate::cmd::Runner;
use crate::env::check_privilege;
use crate::error::LabError;
use crate::scenario::Scenario;
use crate::scenario::Topology;
use crate::state::{netns_name, state_dir, validate_name, Lab};

pub(crate) fn namespace_exists(ns: &str) -> bool {
    netns::exists(ns)
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

/// Sends `sig` to `pids`, echoing it as a `kill` line.
fn signal(run: Runner, pids: &[u32], sig: Signal) {
    if pids.is_empty() {
        return;
    }
    let list: Vec<String> = pids.iter().map(ToString::to_string).collect();
    run.echo(&format!("kill -{} {}", &sig.as_str()[3..], list.join(" ")));
    for &pid in pids {
        let _ = kill(Pid::from_raw(pid as i32), sig);
    }
}

fn ns_pids(namespaces: &[String]) -> Vec<u32> {
    namespaces.iter().flat_map(|ns| netns::pids(ns)).collect()
}

/// Stops every process inside the namespaces (TERM, then KILL after 2 s), then
/// deletes them. Errors are ignored: this is also the clean-up of a failed build.
pub(crate) fn remove_namespaces(run: Runner, namespaces: &[String]) {
    let pids = ns_pids(namespaces);
    if !pids.is_empty() {
        signal(run, &pids, Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && !ns_pids(namespaces).is_empty() {
            std::thread::sleep(Duration::from_millis(50));
        }
        signal(run, &ns_pids(namespaces), Signal::SIGKILL);
    }
    for ns in namespaces {
        run.echo(&format!("ip netns del {ns}"));
        let _ = netns::delete(ns);
    }
}

impl Lab {
    /// Removes lab `name`; `Ok(false)` when there was nothing to remove. Looks for
    /// every host name the lab could have, so a lab whose build was interrupted (no
    /// state file) is removed too.
    pub fn down(name: &str, verbose: bool) -> Result<bool, LabError> {
        validate_name(name)?;
        check_privilege("mtuperf lab down")?;
        let run = Runner::new(verbose);
        let lab = Lab::load(name).ok().flatten();
        let mut hosts: Vec<String> = Topology::of(&Scenario::ALL)
            .hosts
            .into_iter()
            .map(|(h, _)| h)
            .chain(crate::cluster::Cluster::all_host_names())
            .collect();
        if let Some(lab) = &lab {
            hosts.extend(lab.host_names());
            let agents: Vec<u32> = lab
                .agents
                .iter()
                .filter(|a| agent_alive(a.pid))
                .map(|a| a.pid)
                .collect();
            signal(run, &agents, Signal::SIGTERM);
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
