//! The lab's shared key. `lab serve` creates `<state dir>/key` once (mode 0600) and
//! starts every agent with `--key-file` on it, so lab agents authenticate their
//! clients like production ones; commands run through `exec_command` receive it as
//! MTUPERF_KEY_FILE, so clients inside the lab need no extra flag.
use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use mtuperf_proto::auth::Key;

use crate::error::LabError;
use crate::state::Lab;

/// Whether the agent arguments already name a key file (then the lab adds none).
pub(crate) fn names_key_file(extra: &[String]) -> bool {
    extra
        .iter()
        .any(|a| a == "--key-file" || a.starts_with("--key-file="))
}

impl Lab {
    /// The key this lab's agents were started with, once `serve` has created it.
    pub fn key_file(&self) -> Option<PathBuf> {
        let p = self.state_dir().join("key");
        p.is_file().then_some(p)
    }

    /// The lab key, created from the OS random source on first use.
    pub(crate) fn ensure_key(&self) -> Result<PathBuf, LabError> {
        let path = self.state_dir().join("key");
        if path.is_file() {
            return Ok(path);
        }
        let io = |source| LabError::State {
            path: path.clone(),
            source,
        };
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .map_err(io)?;
        std::fs::create_dir_all(self.state_dir()).map_err(io)?;
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(io)?;
        f.write_all(Key(bytes).to_file().as_bytes()).map_err(io)?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::names_key_file;

    #[test]
    fn sees_a_key_file_in_agent_args() {
        let s = |v: &[&str]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert!(names_key_file(&s(&["--key-file", "/k"])));
        assert!(names_key_file(&s(&["--port", "1", "--key-file=/k"])));
        assert!(!names_key_file(&s(&["--port", "7878"])));
    }
}
