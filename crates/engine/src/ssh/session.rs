//! The coordinator's end of one node's SSH connection: the `ssh` child, its output
//! read on threads (stdout as lines into a channel, the end of stderr kept for error
//! messages), every wait bounded by a deadline and by the run's stop flag.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

use super::script::CLEANED;

/// Lines of stderr kept for error messages.
const TAIL: usize = 20;
/// How often a wait looks at the stop flag.
const SLICE: Duration = Duration::from_millis(100);

/// Why a wait ended without its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WaitError {
    /// The deadline passed.
    Deadline,
    /// The run was stopped (Ctrl-C).
    Stopped,
    /// The ssh child's output ended: it exited (or is exiting).
    Ended,
}

/// One node's `ssh` child.
pub(crate) struct Channel {
    child: Child,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// stderr reached its end (the tail is complete).
    stderr_done: Arc<AtomicBool>,
    /// The remote trap said the private directory is gone.
    pub cleaned: bool,
}

impl Channel {
    /// Starts `argv` (the ssh command) in a process group of its own, so a Ctrl-C on
    /// the terminal reaches only the coordinator, which then stops every node in order.
    pub fn spawn(argv: &[String]) -> std::io::Result<Channel> {
        let (prog, args) = argv
            .split_first()
            .ok_or_else(|| std::io::Error::other("empty ssh command"))?;
        let mut child = Command::new(prog)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()?;
        let (tx, lines) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_done = Arc::new(AtomicBool::new(false));
        if let Some(err) = child.stderr.take() {
            let tail = stderr.clone();
            let done = stderr_done.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines() {
                    let Ok(line) = line else { break };
                    if let Ok(mut t) = tail.lock() {
                        if t.len() == TAIL {
                            t.pop_front();
                        }
                        t.push_back(line);
                    }
                }
                done.store(true, Ordering::Relaxed);
            });
        }
        let stdin = Arc::new(Mutex::new(child.stdin.take()));
        Ok(Channel {
            child,
            stdin,
            lines,
            stderr,
            stderr_done,
            cleaned: false,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next line of stdout, by `deadline`, unless `stop` is set first.
    pub fn line(&mut self, deadline: Instant, stop: &AtomicBool) -> Result<String, WaitError> {
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(WaitError::Stopped);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(WaitError::Deadline);
            }
            match self.lines.recv_timeout(left.min(SLICE)) {
                Ok(l) if l == CLEANED => self.cleaned = true,
                Ok(l) => return Ok(l),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(WaitError::Ended),
            }
        }
    }

    /// Writes `data` to the node's stdin. A write that blocks (the node stopped
    /// reading) is ended by the caller's watchdog killing the child.
    pub fn write(&self, data: &[u8]) -> std::io::Result<()> {
        let mut guard = self
            .stdin
            .lock()
            .map_err(|_| std::io::Error::other("stdin lock poisoned"))?;
        match guard.as_mut() {
            Some(s) => s.write_all(data).and_then(|()| s.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// Copies `reader` to the node's stdin.
    pub fn copy_from(&self, reader: &mut dyn std::io::Read) -> std::io::Result<u64> {
        let mut guard = self
            .stdin
            .lock()
            .map_err(|_| std::io::Error::other("stdin lock poisoned"))?;
        match guard.as_mut() {
            Some(s) => std::io::copy(reader, s),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        }
    }

    /// A handle the keep-alive thread writes `ping` lines through.
    pub fn stdin_handle(&self) -> Arc<Mutex<Option<ChildStdin>>> {
        self.stdin.clone()
    }

    /// Closes the node's stdin (end of input: the agent stops).
    pub fn close_stdin(&self) {
        if let Ok(mut g) = self.stdin.lock() {
            g.take();
        }
    }

    /// The last lines of stderr, oldest first.
    pub fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// The exit status once the child has exited, waiting at most `within` (and
    /// then a little for the end of its stderr, so the tail is complete).
    pub fn wait(&mut self, within: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + within;
        loop {
            match self.child.try_wait() {
                Ok(Some(s)) => {
                    let settle = Instant::now() + Duration::from_millis(500);
                    while !self.stderr_done.load(Ordering::Relaxed) && Instant::now() < settle {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    return Some(s);
                }
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                _ => return None,
            }
        }
    }

    /// Reads what is left of stdout (noting the trap's `cleaned`) until it ends or
    /// `within` passes.
    pub fn drain(&mut self, within: Duration) {
        let until = Instant::now() + within;
        let never = AtomicBool::new(false);
        while self.line(until, &never).is_ok() {}
    }

    /// Ends a channel the coordinator has no use for before the node's agent started:
    /// closes its stdin (the script's order never comes, so it exits and its trap
    /// removes the private directory), reads what is left until it ends or `within`
    /// passes, and only then kills what is still running. A SIGTERM at once could end
    /// the node's side before its trap finished (or, through a stand-in ssh that runs
    /// the script itself, kill it mid-removal).
    pub fn end(&mut self, within: Duration) {
        self.close_stdin();
        let until = Instant::now() + within;
        self.drain(within);
        if self
            .wait(until.saturating_duration_since(Instant::now()))
            .is_none()
        {
            self.kill(Duration::from_secs(1));
        }
    }

    /// Ends the ssh child: SIGTERM, then SIGKILL after `grace`. The node's agent then
    /// sees its channel close and stops; its lifetime bounds it in any case.
    pub fn kill(&mut self, grace: Duration) {
        let pid = Pid::from_raw(self.child.id() as i32);
        let _ = kill(pid, Signal::SIGTERM);
        if self.wait(grace).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Kills process `pid` when `deadline` passes or `stop` is set, unless disarmed
/// (dropped) first: bounds a blocking write to a node that stopped reading.
pub(crate) struct Watchdog {
    done: Option<mpsc::Sender<()>>,
    fired: Arc<AtomicBool>,
}

impl Watchdog {
    pub fn arm(pid: u32, deadline: Instant, stop: Arc<AtomicBool>) -> Watchdog {
        let (tx, rx) = mpsc::channel::<()>();
        let fired = Arc::new(AtomicBool::new(false));
        let f = fired.clone();
        std::thread::spawn(move || loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || stop.load(Ordering::Relaxed) {
                f.store(true, Ordering::Relaxed);
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
                return;
            }
            match rx.recv_timeout(left.min(SLICE)) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
        });
        Watchdog {
            done: Some(tx),
            fired,
        }
    }

    /// Whether it killed the process.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::Relaxed)
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if let Some(tx) = self.done.take() {
            let _ = tx.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Channel {
        Channel::spawn(&["sh".to_string(), "-c".to_string(), script.to_string()]).unwrap()
    }

    #[test]
    fn lines_deadlines_and_the_end_of_output() {
        let never = AtomicBool::new(false);
        let mut c =
            sh("echo one; echo mtuperf-ssh-cleaned; read x; echo \"got $x\"; echo oops >&2");
        let soon = Instant::now() + Duration::from_secs(5);
        assert_eq!(c.line(soon, &never), Ok("one".into()));
        let t0 = Instant::now();
        assert_eq!(
            c.line(Instant::now() + Duration::from_millis(200), &never),
            Err(WaitError::Deadline)
        );
        assert!(t0.elapsed() < Duration::from_secs(2));
        assert!(c.cleaned, "the trap's line is noted, not returned");
        c.write(b"two\n").unwrap();
        assert_eq!(c.line(soon, &never), Ok("got two".into()));
        assert_eq!(c.line(soon, &never), Err(WaitError::Ended));
        assert!(c.wait(Duration::from_secs(5)).is_some_and(|s| s.success()));
        assert_eq!(c.stderr_tail(), ["oops"]);
    }

    #[test]
    fn a_stop_flag_ends_a_wait() {
        let stop = AtomicBool::new(true);
        let mut c = sh("exec sleep 5");
        assert_eq!(
            c.line(Instant::now() + Duration::from_secs(5), &stop),
            Err(WaitError::Stopped)
        );
        c.kill(Duration::from_secs(1));
        assert!(c.wait(Duration::from_secs(1)).is_some());
    }

    #[test]
    fn the_watchdog_kills_a_stuck_writer_and_not_a_quick_one() {
        let mut c = sh("exec sleep 30");
        let dog = Watchdog::arm(
            c.pid(),
            Instant::now() + Duration::from_millis(300),
            Arc::new(AtomicBool::new(false)),
        );
        // The pipe fills (nobody reads) and the write blocks until the kill.
        let big = vec![0u8; 4 << 20];
        assert!(c.write(&big).is_err());
        assert!(dog.fired());
        assert!(c.wait(Duration::from_secs(2)).is_some());
        let mut quick = sh("cat >/dev/null");
        let dog = Watchdog::arm(
            quick.pid(),
            Instant::now() + Duration::from_secs(5),
            Arc::new(AtomicBool::new(false)),
        );
        quick.write(b"x\n").unwrap();
        drop(dog);
        quick.close_stdin();
        assert!(quick
            .wait(Duration::from_secs(5))
            .is_some_and(|s| s.success()));
    }
}
