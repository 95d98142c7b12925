//! `--ssh`: short-lived agents started over the user's own OpenSSH client, as
//! `cluvfy` runs from one node over SSH user equivalence and leaves nothing behind.
//!
//! For each node, all nodes in parallel, every step with a deadline:
//! 1. `ssh NODE sh -c '<script>'` ([`script`]): a private temporary directory (mode
//!    700, removed by a trap whenever the script ends), the node's OS and architecture
//!    and the version of any mtuperf on its PATH;
//! 2. that mtuperf is run when it is this very version, else this binary is copied over
//!    the same connection and its SHA-256 checked on the node ([`bootstrap`]);
//! 3. `mtuperf serve --ssh-stdio --lifetime L` says hello with its interfaces
//!    ([`wire`]); once every node has, the coordinator chooses each node's listening
//!    addresses ([`plan`]: the interconnect) and sends the one-time key, the addresses
//!    and the allowed clients on the channel's stdin (never on a command line);
//! 4. the agent listens on a port the kernel picks and says ready ([`remote`]);
//! 5. at the end the coordinator says `stop`; the agent also stops when the channel
//!    closes (the coordinator was killed, the connection dropped), when the
//!    coordinator's `ping` lines stop for 20 s, and at its hard lifetime.
//!
//! The remote agent needs no privilege: path, rr, stream and doctor's facts all run
//! as the SSH user (no raw sockets, no CAP_NET_RAW).

pub mod bootstrap;
pub mod command;
pub mod failure;
pub mod fleet;
pub mod mesh;
pub mod node;
pub mod plan;
pub mod remote;
pub mod script;
mod session;
pub mod wire;

pub use bootstrap::CopyPolicy;
pub use command::{CommandError, SshCommand};
pub use failure::{Cause, Failure, SharedNet, Step};
pub use fleet::{
    start, FailedNode, Fleet, Outcome, QuietSsh, ReadyNode, SshConfig, SshObserver, Stopped,
};
pub use node::SshNode;
pub use plan::Plan;
