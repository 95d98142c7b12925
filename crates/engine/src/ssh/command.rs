//! The SSH client command line. mtuperf never speaks SSH itself: it runs the system's
//! OpenSSH client (`--ssh-command`, `MTUPERF_SSH_COMMAND`, default `ssh`), split into
//! words like `GIT_SSH_COMMAND`, so the user's `~/.ssh/config`, keys, agent, ProxyJump
//! and known_hosts apply unchanged.
//!
//! To the user's words it adds what a program driving ssh needs, as `scp` does (no
//! terminal, no forwarding, no local or configured remote command), plus:
//! - `BatchMode=yes`: every node is reached at once, so no prompt (password, passphrase,
//!   unknown host key) could be answered; a node that would prompt fails by name;
//! - `ConnectTimeout` (the bootstrap's deadline) and `ServerAliveInterval=5`
//!   (`ServerAliveCountMax=3`): a node that vanishes ends its connection in ~15 s.
//!
//! Each of these is added only when the user's words do not set it already: ssh takes
//! the first value it reads, and command-line options come before the config files, so
//! `--ssh-command "ssh -o BatchMode=no"` keeps prompting allowed.

use std::time::Duration;

use super::node::SshNode;

/// The user's ssh command, split into words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshCommand {
    words: Vec<String>,
}

/// What the words of `--ssh-command` may not be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("unbalanced quotes")]
    Quotes,
    #[error("no program")]
    Empty,
}

impl SshCommand {
    /// Splits `line` as a POSIX shell would split words (no expansion).
    pub fn parse(line: &str) -> Result<SshCommand, CommandError> {
        let words = shlex::split(line).ok_or(CommandError::Quotes)?;
        if words.first().is_none_or(String::is_empty) {
            return Err(CommandError::Empty);
        }
        Ok(SshCommand { words })
    }

    /// The program run (the first word).
    pub fn program(&self) -> &str {
        self.words.first().map_or("ssh", String::as_str)
    }

    /// Whether the user's words set ssh option `name` (`-o Name=v`, `-oName=v`,
    /// `-o "Name v"`; names are case-insensitive as in ssh_config).
    fn sets(&self, name: &str) -> bool {
        let mut it = self.words.iter().skip(1);
        while let Some(w) = it.next() {
            let opt = match w.strip_prefix("-o") {
                Some("") => it.next().map(String::as_str),
                Some(rest) => Some(rest),
                None => None,
            };
            let key = opt.and_then(|o| o.split(|c: char| c == '=' || c.is_whitespace()).next());
            if key.is_some_and(|k| k.eq_ignore_ascii_case(name)) {
                return true;
            }
        }
        false
    }

    /// The full argument vector (program first) that runs `remote` on `node`.
    pub fn argv(&self, node: &SshNode, remote: &str, connect_timeout: Duration) -> Vec<String> {
        let mut v = self.words.clone();
        v.extend(["-T", "-x", "-a"].map(String::from));
        let secs = connect_timeout.as_secs().max(1).to_string();
        let defaults = [
            ("BatchMode", "yes"),
            ("ConnectTimeout", secs.as_str()),
            ("ServerAliveInterval", "5"),
            ("ServerAliveCountMax", "3"),
            ("ClearAllForwardings", "yes"),
            ("PermitLocalCommand", "no"),
            ("RemoteCommand", "none"),
            ("RequestTTY", "no"),
        ];
        for (name, value) in defaults {
            if !self.sets(name) {
                v.extend(["-o".to_string(), format!("{name}={value}")]);
            }
        }
        v.extend(node.destination());
        v.push(remote.to_string());
        v
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn argv(cmd: &str, node: &str) -> Vec<String> {
        let n = SshNode::parse(node).unwrap();
        SshCommand::parse(cmd)
            .unwrap()
            .argv(&n, "REMOTE", Duration::from_secs(20))
    }

    #[test]
    fn adds_batch_mode_and_the_rest_after_the_users_words() {
        let v = argv("ssh -F '/tmp/my config'", "oracle@db1:2222");
        assert_eq!(&v[..3], ["ssh", "-F", "/tmp/my config"]);
        let line = v.join(" ");
        for want in [
            "-o BatchMode=yes",
            "-o ConnectTimeout=20",
            "-o RemoteCommand=none",
            "-o ClearAllForwardings=yes",
            "-l oracle -p 2222 db1 REMOTE",
        ] {
            assert!(line.contains(want), "{want} missing from {line}");
        }
        assert_eq!(v.last().map(String::as_str), Some("REMOTE"));
    }

    #[test]
    fn the_users_own_options_win() {
        let v = argv(
            "ssh -o batchmode=no -oConnectTimeout=3 -o 'ServerAliveInterval 9'",
            "n1",
        );
        let line = v.join(" ");
        assert!(!line.contains("BatchMode=yes"), "{line}");
        assert!(!line.contains("ConnectTimeout=20"), "{line}");
        assert!(!line.contains("ServerAliveInterval=5"), "{line}");
        assert!(line.contains("ServerAliveCountMax=3"), "{line}");
    }

    #[test]
    fn refuses_empty_or_unbalanced_commands() {
        assert_eq!(SshCommand::parse(""), Err(CommandError::Empty));
        assert_eq!(SshCommand::parse("   "), Err(CommandError::Empty));
        assert_eq!(SshCommand::parse("ssh -F 'x"), Err(CommandError::Quotes));
        assert_eq!(SshCommand::parse("'' -v"), Err(CommandError::Empty));
        assert_eq!(
            SshCommand::parse("/usr/bin/ssh -v").unwrap().program(),
            "/usr/bin/ssh"
        );
    }
}
