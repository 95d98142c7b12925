//! Why a node could not be used: the step that failed and what ssh, the script or the
//! agent said (escaped: it comes from the node).

use std::fmt;
use std::time::Duration;

use mtuperf_proto::text::escape_control;

use super::script;
use super::session::{Channel, WaitError};

/// The bootstrap step a node failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Reaching the node (ssh itself, the login, the private directory).
    Connect,
    /// Copying this binary (architecture, transfer, checksum).
    Copy,
    /// Starting the agent (hello, bind, ready).
    Start,
    /// Choosing its addresses (no interconnect found on it).
    Plan,
    /// The run was stopped before the node was ready.
    Interrupted,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::Connect => "ssh",
            Step::Copy => "copy",
            Step::Start => "agent",
            Step::Plan => "addresses",
            Step::Interrupted => "interrupted",
        }
    }
}

/// A node's failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub step: Step,
    pub detail: String,
}

impl fmt::Display for Failure {
    /// "ssh: connect to host 198.19.1.3 port 22: Connection refused", "copy: ...".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = format!("{}: ", self.step.name());
        if self.detail.starts_with(&prefix) {
            f.write_str(&self.detail)
        } else {
            write!(f, "{prefix}{}", self.detail)
        }
    }
}

impl Failure {
    pub fn new(step: Step, detail: impl Into<String>) -> Failure {
        Failure {
            step,
            detail: escape_control(&detail.into()).into_owned(),
        }
    }

    /// The failure of a wait on `ch`: stopped, out of time (the child is killed) or
    /// the child gone (its exit status and last words).
    pub(crate) fn from_wait(
        step: Step,
        w: WaitError,
        ch: &mut Channel,
        timeout: Duration,
    ) -> Failure {
        match w {
            WaitError::Stopped => {
                ch.kill(Duration::from_millis(500));
                Failure::new(Step::Interrupted, "stopped before the node was ready")
            }
            WaitError::Deadline => {
                ch.kill(Duration::from_millis(500));
                let last = last_words(&ch.stderr_tail());
                let mut d = format!("no answer within {} s", timeout.as_secs());
                if !last.is_empty() {
                    d = format!("{d} (last said: {last})");
                }
                Failure::new(step, d)
            }
            WaitError::Ended => {
                let status = ch.wait(Duration::from_secs(2));
                let last = last_words(&ch.stderr_tail());
                let code = status.and_then(|s| s.code());
                // ssh's own failure (255) or an unknown status: the last words say it all.
                let meaning =
                    script::status_meaning(code.unwrap_or(0)).filter(|_| code != Some(255));
                let detail = match (code, meaning) {
                    (_, Some(meaning)) if !last.is_empty() => format!("{meaning}: {last}"),
                    (_, Some(meaning)) => meaning.to_string(),
                    (_, None) if !last.is_empty() => last,
                    (Some(c), None) => format!("the connection ended (exit status {c})"),
                    (None, None) => "the connection ended".to_string(),
                };
                Failure::new(step, detail)
            }
        }
    }
}

/// The last non-empty stderr line, without the script's own prefix.
fn last_words(tail: &[String]) -> String {
    tail.iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .map(|l| l.strip_prefix("mtuperf-ssh: ").unwrap_or(l).to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_like_the_issue_asks() {
        let f = Failure::new(
            Step::Connect,
            "root@198.19.1.3: Permission denied (publickey).",
        );
        assert_eq!(
            f.to_string(),
            "ssh: root@198.19.1.3: Permission denied (publickey)."
        );
        let f = Failure::new(
            Step::Connect,
            "ssh: connect to host 198.19.1.3 port 22: Connection refused",
        );
        assert_eq!(
            f.to_string(),
            "ssh: connect to host 198.19.1.3 port 22: Connection refused"
        );
        let f = Failure::new(Step::Copy, "bad\x1b[31m");
        assert_eq!(f.to_string(), "copy: bad\\x1b[31m");
    }

    #[test]
    fn an_ssh_failure_quotes_ssh_and_a_script_failure_says_what_it_was() {
        let mut ch = Channel::spawn(&[
            "sh".into(),
            "-c".into(),
            "echo 'u@h: Permission denied (publickey).' >&2; exit 255".into(),
        ])
        .unwrap();
        let never = std::sync::atomic::AtomicBool::new(false);
        let w = ch
            .line(std::time::Instant::now() + Duration::from_secs(5), &never)
            .unwrap_err();
        let f = Failure::from_wait(Step::Connect, w, &mut ch, Duration::from_secs(5));
        assert_eq!(f.to_string(), "ssh: u@h: Permission denied (publickey).");
        let mut ch = Channel::spawn(&[
            "sh".into(),
            "-c".into(),
            "echo 'mtuperf-ssh: checksum mismatch: x' >&2; exit 93".into(),
        ])
        .unwrap();
        let w = ch
            .line(std::time::Instant::now() + Duration::from_secs(5), &never)
            .unwrap_err();
        let f = Failure::from_wait(Step::Copy, w, &mut ch, Duration::from_secs(5));
        assert_eq!(
            f.to_string(),
            "copy: the copied mtuperf's SHA-256 did not match: checksum mismatch: x"
        );
    }
}
