//! Why a node could not be used over SSH, typed: the bootstrap step that failed and its
//! cause (the report words it, with the flags to change). Whatever the node itself said
//! (ssh's stderr, the script's or the agent's words) is data, escaped once
//! (`escape_control`) and kept as evidence.
//!
//! The types live here, below both `ssh` (which fails) and `mesh` (whose document stores
//! the failure of a node it could not start): `ssh::failure` builds them from a wait.

use std::net::IpAddr;

use ipnet::IpNet;
use mtuperf_proto::text::escape_control;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
pub(crate) fn words(s: &str) -> Option<String> {
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
}

/// Why the script ended, by its own exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ScriptExit {
    /// No temporary directory where a program may run (the script's `EXIT_NO_DIR`).
    NoDir,
    /// The coordinator's order did not arrive, or was unknown (the script's `EXIT_NO_ORDER`).
    NoOrder,
    /// Writing the copy failed (the script's `EXIT_COPY`).
    CopyFailed,
    /// The copy's SHA-256 did not match (the script's `EXIT_CHECKSUM`).
    Checksum,
    /// mtuperf could not be run on the node (126, 127: the shell's statuses).
    NotRunnable,
}
