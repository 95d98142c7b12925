//! The options every subcommand shares (`--db`, `--no-store`, `--key-file`). A module of
//! its own so that the subcommands depend on it, not on the command line that lists them.
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct Global {
    /// History database (default: $XDG_DATA_HOME/mtuperf/history.db).
    #[arg(long, global = true, env = "MTUPERF_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Do not store this run in the history.
    #[arg(long, global = true)]
    pub no_store: bool,
    /// Shared key for authenticating to the agent (from `mtuperf keygen`).
    #[arg(long, global = true, env = "MTUPERF_KEY_FILE", value_name = "FILE")]
    pub key_file: Option<PathBuf>,
}
