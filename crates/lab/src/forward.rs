//! Running a command in a lab host for `lab exec`: the wrapper forwards the stop
//! signals it receives (SIGINT, SIGTERM, SIGHUP) to the command and waits for the
//! command to end, so `kill -INT`, `timeout` or a service manager stop the command
//! itself (which prints and stores what it measured), its exit code comes back, and
//! nothing is left running in the namespace.
//!
//! - On a terminal, in its foreground, the command stays in this process group: a
//!   Ctrl-C (sent by the kernel to the whole group) reaches it and its children
//!   directly, so it is not forwarded, or the command would get it twice (and a second
//!   Ctrl-C stops mtuperf without its result). The signal's origin (`si_code`) tells
//!   them apart: `SI_KERNEL` for the terminal, `SI_USER` for kill(2). A signal another
//!   process sent goes to the command.
//! - Otherwise (a script, a pipeline in the background, a service) the command leads
//!   its own process group and every stop signal goes to that group: the command and
//!   the children it started (`sh -c 'sleep 30; true'`: the shell would wait for its
//!   `sleep`).
//!
//! Children the command leaves behind when it ends are this process's (it is their
//! subreaper, `PR_SET_CHILD_SUBREAPER`): once the command has ended after a forwarded
//! signal, they get the same signal, then SIGKILL after [`GRACE`].
use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use signal_hook::consts::{SIGCHLD, SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::exfiltrator::origin::WithOrigin;
use signal_hook::iterator::SignalsInfo;
use signal_hook::low_level::siginfo::{Cause, Origin};

/// The signals `lab exec` passes on to its command.
pub const FORWARDED: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// How long the command's leftover children have to end after the forwarded signal
/// before they are killed.
pub const GRACE: Duration = Duration::from_secs(2);

/// Whether a received signal is passed on to the command: a stop signal, unless the
/// command shares this process's foreground group on a terminal and the kernel sent
/// it on the terminal's behalf (the command got that one too).
fn forwarded(o: &Origin, foreground: bool) -> bool {
    FORWARDED.contains(&o.signal) && !(foreground && matches!(o.cause, Cause::Kernel))
}

/// Whether this process is in the foreground process group of its controlling
/// terminal (false without one).
fn in_terminal_foreground() -> bool {
    std::fs::File::open("/dev/tty")
        .ok()
        .and_then(|tty| nix::unistd::tcgetpgrp(tty).ok())
        .is_some_and(|fg| fg == nix::unistd::getpgrp())
}

/// Starts `cmd` and waits for it, forwarding the stop signals this process receives
/// (see the module). The handlers are installed before the
/// command starts, so no signal is lost between the two. Installing them also means
/// the command starts with these signals at their default action even when this
/// process was started with them ignored (as a shell starts a background job).
///
/// The wait for the command has no deadline: the command is the user's, and it runs
/// as long as it runs. Only its leftovers after a forwarded signal are bounded.
pub fn run(cmd: &mut Command) -> io::Result<ExitStatus> {
    let mut signals = SignalsInfo::<WithOrigin>::new(FORWARDED.iter().copied().chain([SIGCHLD]))?;
    // Orphans of the command become this process's children, not init's.
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let foreground = in_terminal_foreground();
    if !foreground {
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let mut sent = None;
    let status = loop {
        // Reaped only here, on this thread: a signal is never sent to a reused pid.
        if let Some(status) = child.try_wait()? {
            break status;
        }
        // Wakes on a forwarded signal or SIGCHLD (a child ended or stopped).
        for o in signals.wait() {
            if !forwarded(&o, foreground) {
                continue;
            }
            if let Ok(sig) = Signal::try_from(o.signal) {
                let _ = if foreground {
                    kill(pid, sig)
                } else {
                    killpg(pid, sig)
                };
                sent = Some(sig);
            }
        }
    };
    if let Some(sig) = sent {
        end_leftovers(sig);
    }
    Ok(status)
}

/// This process's children: after the command was reaped, the orphans it left.
fn children() -> Vec<Pid> {
    let me = std::process::id().to_string();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses.
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                s.rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    == Some(me.as_str())
            })
        })
        .map(Pid::from_raw)
        .collect()
}

/// Sends `sig` to the command's leftover children, reaps them, and kills those still
/// there after [`GRACE`] (then waits up to [`GRACE`] more for them to go).
fn end_leftovers(sig: Signal) {
    let left = children();
    for &p in &left {
        let _ = kill(p, sig);
    }
    let mut alive = left;
    for (deadline, last) in [(GRACE, Some(Signal::SIGKILL)), (GRACE, None)] {
        let until = Instant::now() + deadline;
        while !alive.is_empty() && Instant::now() < until {
            alive.retain(|&p| {
                matches!(
                    waitpid(p, Some(WaitPidFlag::WNOHANG)),
                    Ok(WaitStatus::StillAlive)
                )
            });
            if !alive.is_empty() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if let Some(s) = last {
            for &p in &alive {
                let _ = kill(p, s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn the_exit_code_and_signal_of_the_command_pass_through() {
        let st = run(Command::new("sh").args(["-c", "exit 7"])).unwrap();
        assert_eq!(st.code(), Some(7));
        let st = run(Command::new("sh").args(["-c", "kill -TERM $$"])).unwrap();
        assert_eq!(st.signal(), Some(SIGTERM));
    }

    #[test]
    fn a_missing_program_is_a_spawn_error() {
        let e = run(&mut Command::new("/nonexistent/mtuperf-x")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
