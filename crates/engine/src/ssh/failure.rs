//! A node's failure from a wait on its SSH channel: stopped, out of time, or the child
//! gone with its last words. The types are `crate::node_failure`'s.

use std::time::Duration;

use super::script::ScriptExit;
use super::session::{Channel, WaitError};
use crate::node_failure::words;
pub use crate::node_failure::{Cause, Failure, SharedNet, Step};

impl Failure {
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
                Failure::stopped()
            }
            WaitError::Deadline => {
                ch.kill(Duration::from_millis(500));
                let said = words(&last_words(&ch.stderr_tail()));
                Failure::new(
                    step,
                    Cause::Deadline {
                        secs: timeout.as_secs(),
                        said,
                    },
                )
            }
            WaitError::Ended => {
                let status = ch.wait(Duration::from_secs(2));
                let said = words(&last_words(&ch.stderr_tail()));
                let code = status.and_then(|s| s.code());
                // ssh's own failure (255) or an unknown status: the last words say it all.
                let exit = code.and_then(ScriptExit::from_status);
                let cause = match (exit, said) {
                    (Some(exit), said) => Cause::Script { exit, said },
                    (None, Some(text)) => Cause::Said { text },
                    (None, None) => Cause::Ended { status: code },
                };
                Failure::new(step, cause)
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
    use std::time::Instant;

    use super::*;

    fn ended(script: &str, step: Step, timeout: Duration) -> Failure {
        let mut ch = Channel::spawn(&["sh".into(), "-c".into(), script.into()]).unwrap();
        let never = std::sync::atomic::AtomicBool::new(false);
        let w = ch.line(Instant::now() + timeout, &never).unwrap_err();
        Failure::from_wait(step, w, &mut ch, timeout)
    }

    #[test]
    fn the_nodes_words_are_kept_escaped() {
        assert_eq!(
            Cause::said("bad\x1b[31m"),
            Cause::Said {
                text: "bad\\x1b[31m".into()
            }
        );
    }

    #[test]
    fn an_ssh_failure_keeps_its_words_and_a_script_failure_says_which() {
        let f = ended(
            "echo 'u@h: Permission denied (publickey).' >&2; exit 255",
            Step::Connect,
            Duration::from_secs(5),
        );
        assert_eq!(
            f,
            Failure::new(
                Step::Connect,
                Cause::Said {
                    text: "u@h: Permission denied (publickey).".into()
                }
            )
        );
        let f = ended(
            "echo 'mtuperf-ssh: checksum mismatch: x' >&2; exit 93",
            Step::Copy,
            Duration::from_secs(5),
        );
        assert_eq!(
            f.cause,
            Cause::Script {
                exit: ScriptExit::Checksum,
                said: Some("checksum mismatch: x".into())
            }
        );
        let f = ended("exit 3", Step::Start, Duration::from_secs(5));
        assert_eq!(f.cause, Cause::Ended { status: Some(3) });
        let f = ended("exit 127", Step::Start, Duration::from_secs(5));
        assert_eq!(
            f.cause,
            Cause::Script {
                exit: ScriptExit::NotRunnable,
                said: None
            }
        );
    }

    #[test]
    fn a_silent_node_is_out_of_time_with_its_last_words() {
        let f = ended(
            "echo 'still \x1b thinking' >&2; sleep 10",
            Step::Connect,
            Duration::from_millis(1500),
        );
        assert_eq!(
            f,
            Failure::new(
                Step::Connect,
                Cause::Deadline {
                    secs: 1,
                    said: Some("still \\x1b thinking".into())
                }
            )
        );
    }

    #[test]
    fn a_failure_round_trips_as_json() {
        let f = Failure::new(
            Step::Plan,
            Cause::ManyNetworks {
                node: "n2".into(),
                networks: vec![SharedNet {
                    cidr: "192.168.1.0/24".parse().unwrap(),
                    addr: "192.168.1.2".parse().unwrap(),
                }],
            },
        );
        let j = serde_json::to_value(&f).unwrap();
        assert_eq!(j["step"], "plan");
        assert_eq!(j["cause"]["kind"], "many_networks");
        assert_eq!(serde_json::from_value::<Failure>(j).unwrap(), f);
    }
}
