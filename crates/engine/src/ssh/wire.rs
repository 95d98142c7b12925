//! What the coordinator and `mtuperf serve --ssh-stdio` say to each other over the SSH
//! channel, one JSON object per line:
//!
//! - node → coordinator: [`Hello`] (version, the node's interfaces and addresses,
//!   where the SSH connection came from and arrived);
//! - coordinator → node: [`Start`] (the one-time key, the addresses to bind, the
//!   clients to allow, the session limit): sent on stdin, so the key is never on a
//!   command line or in a file;
//! - node → coordinator: [`Ready`] (the port it listens on) or [`Failed`];
//! - coordinator → node: `ping` lines while the run goes on, `stop` at its end; the
//!   agent stops at `stop`, at end of input (the coordinator or the connection is
//!   gone), when no line came for [`LEASE`], and at its `--lifetime`.

use std::net::IpAddr;
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_proto::msg::mesh::Discovery;
use serde::{Deserialize, Serialize};

/// The longest silence on stdin the node's agent accepts before it stops by itself.
pub const LEASE: Duration = Duration::from_secs(20);
/// How often the coordinator says it is still there.
pub const PING_EVERY: Duration = Duration::from_secs(3);
/// The coordinator's keep-alive line.
pub const PING: &str = "ping";
/// The coordinator's end-of-run line.
pub const STOP: &str = "stop";

/// The node's first message, once `mtuperf` runs there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// `mtuperf --version` of the program that answers.
    pub version: String,
    /// Interfaces and addresses, as `mesh` discovery reports them (up, non-loopback).
    pub discovery: Discovery,
    /// Every address of the node, loopback included (what `--bind` is matched with).
    pub addrs: Vec<mtuperf_proto::msg::mesh::IfaceAddr>,
    /// The node's end of the SSH connection (from `SSH_CONNECTION`): an address the
    /// coordinator (or its jump host) reached.
    pub ssh_server: Option<IpAddr>,
    /// The coordinator's end as the node saw it.
    pub ssh_client: Option<IpAddr>,
}

/// The coordinator's order: what the agent binds, whom it serves, with which key.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Start {
    /// The one-time key, as the key file's line (`mtuperf-key-v1 <hex>`).
    pub key: String,
    /// The addresses to listen on (one port for all, chosen by the node).
    pub binds: Vec<IpAddr>,
    /// The clients allowed (`serve --allow`): the coordinator's addresses and the other
    /// nodes' (third-party tests).
    pub allow: Vec<IpNet>,
    pub max_sessions: u32,
}

impl std::fmt::Debug for Start {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Start")
            .field("binds", &self.binds)
            .field("allow", &self.allow)
            .field("max_sessions", &self.max_sessions)
            .finish_non_exhaustive()
    }
}

/// The agent listens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ready {
    pub port: u16,
}

/// What the node says, one per line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeMsg {
    Hello(Box<Hello>),
    Ready(Ready),
    Failed(String),
}

/// The SSH connection's two ends from `SSH_CONNECTION` ("client port server port").
pub fn ssh_connection(value: &str) -> (Option<IpAddr>, Option<IpAddr>) {
    let mut f = value.split_whitespace();
    let client = f.next().and_then(|s| s.parse().ok());
    let server = f.nth(1).and_then(|s| s.parse().ok());
    (client, server)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_ends_of_ssh_connection() {
        assert_eq!(
            ssh_connection("198.19.1.1 40122 198.19.1.3 22"),
            (
                Some("198.19.1.1".parse().unwrap()),
                Some("198.19.1.3".parse().unwrap())
            )
        );
        assert_eq!(ssh_connection(""), (None, None));
        assert_eq!(
            ssh_connection("fd00::1 1 x 22").0,
            Some("fd00::1".parse().unwrap())
        );
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let s = Start {
            key: "mtuperf-key-v1 00ff".into(),
            binds: vec![],
            allow: vec![],
            max_sessions: 4,
        };
        assert!(!format!("{s:?}").contains("00ff"));
        let line = serde_json::to_string(&NodeMsg::Ready(Ready { port: 4000 })).unwrap();
        assert_eq!(line, r#"{"ready":{"port":4000}}"#);
    }
}
