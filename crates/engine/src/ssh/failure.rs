//! Why a node could not be used: the step that failed and its cause, typed (the report
//! words it, with the flags to change). Whatever the node itself said (ssh's stderr,
//! the script's or the agent's words) is data, escaped here once (`escape_control`)
//! and kept as evidence.

use std::net::IpAddr;
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_proto::text::escape_control;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::script::ScriptExit;
use super::session::{Channel, WaitError};

/// The bootstrap step a node failed at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
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

/// A network a node shares with this host, and the node's address on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SharedNet {
    /// As a CIDR ("192.168.1.0/24").
    #[schemars(with = "String")]
    pub cidr: IpNet,
    pub addr: IpAddr,
}

/// Why the step failed: what the engine decided, with its numbers and names, or the
/// node's own words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// What the node said and nothing more to add: ssh's own error (a refused
    /// connection, a refused login), the agent's failure (a bind refused). Escaped.
    Said { text: String },
    /// The ssh command could not be run on this host.
    NoSsh { program: String, error: String },
    /// Writing to ssh's stdin (the order, the copy) failed.
    Write { error: String },
    /// The run was stopped (Ctrl-C) before the node was ready.
    Stopped,
    /// The node gave no answer within `secs` (its ssh was ended); `said`: the last
    /// line it wrote on stderr, escaped.
    Deadline { secs: u64, said: Option<String> },
    /// The script on the node ended with one of its own statuses; `said`: its last
    /// words, escaped.
    Script {
        exit: ScriptExit,
        said: Option<String>,
    },
    /// ssh ended without a word: its exit status (none: ended by a signal).
    Ended { status: Option<i32> },
    /// The node's PATH has no mtuperf of `version` (`found`: the version it has, if
    /// any, escaped) and copying was not allowed.
    NotOnPath {
        version: String,
        found: Option<String>,
    },
    /// The node is `os` `arch`; this binary runs on Linux `ours` only.
    Platform {
        os: String,
        arch: String,
        ours: String,
        version: String,
    },
    /// This binary could not be read to be copied.
    Unreadable { path: String, error: String },
    /// This binary changed while it was copied: `sent` of `size` bytes.
    Changed { path: String, sent: u64, size: u64 },
    /// The thread bootstrapping the node panicked.
    Panicked,
    /// No address in a cluster_interconnect subnet of the oifcfg list (on the
    /// interface it names) shared with another node.
    NoOifcfgInterconnect,
    /// No address on a network shared with another node (within `nets`, the asked
    /// networks, when any).
    NoSharedNetwork {
        /// CIDRs ("192.168.0.0/16").
        #[schemars(with = "Vec<String>")]
        nets: Vec<IpNet>,
    },
    /// `node` has no address in the subnet of this host's `bind`.
    NotOnBindNetwork { node: String, bind: IpAddr },
    /// `node` shares no network with this host and its SSH_CONNECTION is unset.
    NoPeerNetwork { node: String },
    /// `node` shares several networks with this host: one must be chosen.
    ManyNetworks {
        node: String,
        networks: Vec<SharedNet>,
    },
    /// The node said no hello, so it has no addresses to choose from.
    NotGreeted,
}

/// A node's failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Failure {
    pub step: Step,
    pub cause: Cause,
}

/// `s` escaped, or none when it is empty.
fn words(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| escape_control(s).into_owned())
}

impl Cause {
    /// The node's own words, escaped.
    pub fn said(text: &str) -> Cause {
        Cause::Said {
            text: escape_control(text).into_owned(),
        }
    }
}

impl Failure {
    pub fn new(step: Step, cause: Cause) -> Failure {
        Failure { step, cause }
    }

    /// The run was stopped before the node was ready.
    pub fn stopped() -> Failure {
        Failure::new(Step::Interrupted, Cause::Stopped)
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
