//! `--ssh` and its options: start short-lived agents over the user's own OpenSSH client
//! (docs/mesh.md, "From one node over SSH"). Flattened by `mesh` (every NODE) and by
//! `path`, `rr`, `stream` and `doctor --peer` (the one peer).
use std::time::Duration;

use mtuperf_engine::ssh::{CopyPolicy, SshCommand};

use crate::exit::Failure;
use crate::parse;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Copy {
    /// Unless the node's PATH has an mtuperf of this very version.
    Auto,
    /// Always copy this binary (the node's own mtuperf is never run).
    Always,
    /// Never copy: the node must have this version on its PATH.
    Never,
}

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = crate::heading::SSH)]
pub struct SshArgs {
    /// Reach the node(s) with ssh ([NAME=][USER@]HOST[:PORT]: HOST as your ssh knows
    /// it, PORT the SSH port) and start a short-lived agent there for this run: a
    /// one-time key, the interconnect addresses only, removed afterwards.
    #[arg(long)]
    pub ssh: bool,
    /// The ssh client command line, split like a shell's words (like GIT_SSH_COMMAND),
    /// e.g. "ssh -F ./cluster_ssh_config"; BatchMode=yes is added unless it sets
    /// BatchMode.
    #[arg(
        long,
        env = "MTUPERF_SSH_COMMAND",
        default_value = "ssh",
        value_name = "CMD"
    )]
    pub ssh_command: String,
    /// When to copy this binary to a node: auto (unless the same version is on its
    /// PATH), always, never.
    #[arg(long, value_enum, default_value = "auto", requires = "ssh")]
    pub ssh_copy: Copy,
    /// Each node's deadline to be ready (connect, copy, start), 2s to 10m.
    #[arg(long, default_value = "30s", value_parser = parse_timeout, value_name = "DURATION", requires = "ssh")]
    pub ssh_timeout: Duration,
    /// The agents' hard lifetime: they exit by themselves after it, whatever happens
    /// to this host or the connection, 10s to 24h (default: the run's longest
    /// possible length plus 60 s).
    #[arg(long, value_parser = parse_lifetime, value_name = "DURATION", requires = "ssh")]
    pub ssh_lifetime: Option<Duration>,
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    parse::duration_in(s, Duration::from_secs(2), Duration::from_mins(10))
}

fn parse_lifetime(s: &str) -> Result<Duration, String> {
    parse::duration_in(s, Duration::from_secs(10), Duration::from_hours(24))
}

impl SshArgs {
    pub fn copy_policy(&self) -> CopyPolicy {
        match self.ssh_copy {
            Copy::Auto => CopyPolicy::Auto,
            Copy::Always => CopyPolicy::Always,
            Copy::Never => CopyPolicy::Never,
        }
    }

    /// The ssh command, checked.
    pub fn command(&self) -> Result<SshCommand, Failure> {
        SshCommand::parse(&self.ssh_command).map_err(|e| {
            Failure::bad_value(
                "--ssh-command",
                &self.ssh_command,
                "an ssh client command line (program first, words split like a shell's)",
                &format!("{e}; e.g. --ssh-command \"ssh -F ./cluster_ssh_config\""),
            )
        })
    }
}
