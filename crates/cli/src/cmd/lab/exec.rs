//! `lab exec`: run a command in a lab host, passing its exit code through as a shell
//! does (127 not found, 126 not executable, 128 + signal). SIGINT, SIGTERM and SIGHUP
//! sent to `lab exec` go on to the command, which it waits for
//! (`mtuperf_lab::forward`): stopping the wrapper never leaves the command running.

use anyhow::anyhow;
use mtuperf_lab::Lab;

use crate::exit::{self, CmdResult, Failure};

/// `lab exec` of a program that does not exist / cannot be executed (as POSIX shells).
const NOT_FOUND: u8 = 127;
const NOT_EXECUTABLE: u8 = 126;

pub fn exec(lab: &Lab, host: &str, command: &[String]) -> CmdResult {
    let name = &lab.name;
    let ns = lab.netns(host).unwrap_or_default();
    if !mtuperf_sys::netns::exists(&ns) {
        return Err(Failure::new(
            exit::FAILED,
            anyhow!("lab {name:?}: the namespace {ns} of host {host} is gone; rebuild the lab (mtuperf lab down --name {name}, then lab up)"),
        ));
    }
    match mtuperf_lab::forward::run(&mut lab.exec_command(host, command)) {
        Ok(status) => Ok(exit_code_of(status)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            errln!("mtuperf lab exec: {}: command not found", command[0]);
            Ok(NOT_FOUND)
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            errln!("mtuperf lab exec: {}: {e}", command[0]);
            Ok(NOT_EXECUTABLE)
        }
        Err(e) => Err(Failure::new(
            exit::FAILED,
            anyhow!(e).context(format!("running {} in lab host {host}", command[0])),
        )),
    }
}

/// The child's exit code, or 128 + signal as a shell reports it.
fn exit_code_of(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c as u8,
        (None, Some(sig)) => 128u8.saturating_add(sig as u8),
        _ => exit::FAILED,
    }
}
