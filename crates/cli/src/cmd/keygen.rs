//! `mtuperf keygen`: write a fresh shared key (32 random bytes from the OS) to a file
//! readable only by its owner, for `serve --key-file` and the clients' `--key-file`.
//! Default: `$XDG_CONFIG_HOME/mtuperf/key` (`~/.config/mtuperf/key`), never the current
//! directory (which may be a git checkout); `-o -` prints the key on standard output.
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

use anyhow::Context;
use mtuperf_proto::auth::Key;

use crate::exit::{self, CmdResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the key (created with mode 0600; `-` for standard output).
    /// Default: $XDG_CONFIG_HOME/mtuperf/key, i.e. ~/.config/mtuperf/key.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Replace an existing file.
    #[arg(long)]
    force: bool,
}

pub fn run(a: &Args) -> CmdResult {
    let mut bytes = [0u8; 32];
    // A key must come from the OS's random source; there is no fallback.
    getrandom::fill(&mut bytes)
        .map_err(|e| Failure::new(exit::ENVIRONMENT, anyhow::anyhow!("no OS randomness: {e}")))?;
    let key = Key(bytes);
    let path = match &a.output {
        Some(p) if p.as_os_str() == "-" => {
            out!("{}", key.to_file());
            return Ok(0);
        }
        Some(p) => p.clone(),
        None => default_path()?,
    };
    let path = &path;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("creating {}", dir.display()))?;
        }
    }
    if path.exists() && !a.force {
        return Err(Failure::new(
            exit::USAGE,
            anyhow::anyhow!(
                "{} already exists; refusing to overwrite a key (clients and agents using it would stop working). Pass --force to replace it, or -o to choose another file",
                path.display()
            ),
        ));
    }
    if a.force && path.exists() {
        // Removing first means the new file is created with mode 0600 even when the
        // old one had looser permissions.
        std::fs::remove_file(path)
            .with_context(|| format!("removing old key {}", path.display()))?;
    }
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("creating key file {}", path.display()))?;
    f.write_all(key.to_file().as_bytes())
        .and_then(|()| f.sync_all())
        .with_context(|| format!("writing key file {}", path.display()))?;
    let shown = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
    outln!("wrote a new key to {} (mode 0600)", shown.display());
    outln!("copy it to the agent host and to each client host over a secure channel, then:");
    outln!("  agent:  mtuperf serve --key-file {}", shown.display());
    outln!(
        "  client: mtuperf --key-file {} stream HOST   (or export MTUPERF_KEY_FILE={})",
        shown.display(),
        shown.display()
    );
    Ok(0)
}

/// `$XDG_CONFIG_HOME/mtuperf/key`, else `$HOME/.config/mtuperf/key`.
fn default_path() -> Result<PathBuf, Failure> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or_else(|| {
            Failure::needs(
                "keygen",
                "--output",
                "neither XDG_CONFIG_HOME nor HOME is set, so there is no default ~/.config/mtuperf/key",
                "give -o FILE, or -o - for standard output",
            )
        })?;
    Ok(base.join("mtuperf").join("key"))
}
