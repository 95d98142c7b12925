//! The first thing run on a node: a POSIX `sh` script (passed on ssh's command line;
//! it holds no secret) that
//!
//! 1. makes a private directory (`umask 077`, `mktemp -d`: mode 700) under `$TMPDIR`,
//!    `/tmp`, `/var/tmp`, `/dev/shm` or `$HOME`, the first where a program may run (a
//!    `noexec` /tmp is common on hardened hosts), and removes it whenever the script
//!    ends (`trap ... EXIT`, and HUP/INT/TERM/PIPE end the script);
//! 2. says what the node is (OS, architecture) and whether an `mtuperf` is on its PATH
//!    with which version;
//! 3. reads one line from the coordinator: `use` (run that mtuperf) or
//!    `copy SIZE SHA256`, then exactly SIZE bytes of this binary, written into the
//!    private directory and checked with `sha256sum` before it is made executable;
//! 4. runs `mtuperf serve --ssh-stdio --lifetime L` in the foreground; the agent reads
//!    its one-time key and addresses from the same stdin (never from its command line),
//!    and when it exits the trap removes the directory and prints `mtuperf-ssh-cleaned`.
//!
//! The script is one line (statements joined by spaces) so that a csh login shell, which
//! refuses newlines inside quotes, passes it to `sh` as well.

use std::time::Duration;

/// The first line of the greeting; lines before it (a chatty login script) are skipped.
pub const GREETING: &str = "mtuperf-ssh 1";
/// The last line of the greeting.
pub const GREETING_END: &str = "mtuperf-ssh-end";
/// Printed by the trap once the private directory is removed.
pub const CLEANED: &str = "mtuperf-ssh-cleaned";

/// The script's own exit statuses (ssh's are 255).
pub const EXIT_NO_DIR: i32 = 90;
pub const EXIT_NO_ORDER: i32 = 91;
pub const EXIT_COPY: i32 = 92;
pub const EXIT_CHECKSUM: i32 = 93;

/// The script, its lines joined by spaces: each line ends a statement with `;` or
/// opens a compound one.
fn lines(lifetime: &str) -> Vec<String> {
    let mut v: Vec<String> = [
        "umask 077;",
        "d=;",
        r#"trap 'if [ -n "$d" ]; then rm -rf "$d" && echo mtuperf-ssh-cleaned; fi' EXIT;"#,
        "trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 141' PIPE;",
        r#"for b in "${TMPDIR:-/tmp}" /tmp /var/tmp /dev/shm "$HOME"; do"#,
        r#"  t=$(mktemp -d "$b/mtuperf-ssh.XXXXXXXX" 2>/dev/null) || continue;"#,
        r#"  d=$t; echo 'exit 0' >"$d/x" && chmod 700 "$d/x" && "$d/x" 2>/dev/null && { rm -f "$d/x"; break; };"#,
        r#"  rm -rf "$d"; d=;"#,
        "done;",
        r#"if [ -z "$d" ]; then echo "mtuperf-ssh: no temporary directory where a program may run (tried \$TMPDIR, /tmp, /var/tmp, /dev/shm, \$HOME)" >&2; exit 90; fi;"#,
        "v=; m=$(command -v mtuperf 2>/dev/null) && v=$(\"$m\" --version 2>/dev/null | head -n 1);",
        r#"printf 'mtuperf-ssh 1\ndir %s\nos %s\narch %s\nhave %s\nversion %s\nmtuperf-ssh-end\n' "$d" "$(uname -s)" "$(uname -m)" "$m" "$v";"#,
        r#"read -r how size sum || { echo "mtuperf-ssh: no order from the coordinator" >&2; exit 91; };"#,
        "case $how in",
        "  use) ;;",
        r#"  copy) head -c "$size" >"$d/mtuperf" || { echo "mtuperf-ssh: copy failed" >&2; exit 92; };"#,
        r#"    set -- $(sha256sum "$d/mtuperf" 2>/dev/null);"#,
        r#"    if [ "${1:-}" = "$sum" ]; then :; else echo "mtuperf-ssh: checksum mismatch: sha256 ${1:-unknown (no sha256sum)}, expected $sum" >&2; exit 93; fi;"#,
        r#"    chmod 700 "$d/mtuperf"; m=$d/mtuperf;;"#,
        r#"  *) echo "mtuperf-ssh: unknown order" >&2; exit 91;;"#,
        "esac;",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    v.push(format!(
        r#""$m" serve --ssh-stdio --lifetime {lifetime} --log-format text"#
    ));
    v
}

/// The remote command for ssh: `sh -c '<script>'`, quoted for the user's login
/// shell (which ssh hands the command line to).
pub fn remote_command(lifetime: Duration) -> String {
    let script = lines(&format!("{}ms", lifetime.as_millis())).join(" ");
    // Single quotes only (a `'` becomes `'"'"'`): sh, bash, ksh, zsh and csh all read
    // that as one word with nothing expanded.
    format!("sh -c '{}'", script.replace('\'', r#"'"'"'"#))
}

/// What the script says about the node before it is told what to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Greeting {
    /// The private directory.
    pub dir: String,
    pub os: String,
    pub arch: String,
    /// The mtuperf on the node's PATH, if any, and its `--version` line.
    pub have: Option<String>,
    pub version: Option<String>,
}

impl Greeting {
    /// Reads one line of the greeting into `self`; true once it is complete.
    pub fn feed(&mut self, line: &str) -> bool {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let value = value.trim().to_string();
        let some = |v: String| (!v.is_empty()).then_some(v);
        match key {
            "dir" => self.dir = value,
            "os" => self.os = value,
            "arch" => self.arch = value,
            "have" => self.have = some(value),
            "version" => self.version = some(value),
            GREETING_END => return true,
            _ => {}
        }
        false
    }
}

/// `uname -m` of a machine this binary runs on.
pub fn this_arch() -> &'static str {
    match std::env::consts::ARCH {
        "powerpc64" if cfg!(target_endian = "little") => "ppc64le",
        "x86" => "i686",
        a => a,
    }
}

pub use crate::node_failure::ScriptExit;

impl ScriptExit {
    /// The script's meaning of exit status `code` (ssh's own failures, 255, and any
    /// other status: none).
    pub fn from_status(code: i32) -> Option<ScriptExit> {
        match code {
            EXIT_NO_DIR => Some(ScriptExit::NoDir),
            EXIT_NO_ORDER => Some(ScriptExit::NoOrder),
            EXIT_COPY => Some(ScriptExit::CopyFailed),
            EXIT_CHECKSUM => Some(ScriptExit::Checksum),
            126 | 127 => Some(ScriptExit::NotRunnable),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::time::Duration;

    use sha2::{Digest, Sha256};

    use super::*;

    /// The remote command run by a local `sh`, as the node's login shell would.
    fn spawn(tmp: &std::path::Path) -> std::process::Child {
        Command::new("sh")
            .args(["-c", &remote_command(Duration::from_secs(3))])
            .env("TMPDIR", tmp)
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn greeting(out: &mut impl BufRead) -> Greeting {
        let mut g = Greeting::default();
        let mut started = false;
        for line in out.lines() {
            let line = line.unwrap();
            started |= line == GREETING;
            if started && g.feed(&line) {
                return g;
            }
        }
        panic!("no greeting");
    }

    fn temp() -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!(
            "mtuperf-script-test-{}-{}",
            std::process::id(),
            hex::encode(crate::random_bytes::<4>())
        ));
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    #[test]
    fn copies_checks_runs_and_removes_its_directory() {
        let tmp = temp();
        let mut child = spawn(&tmp);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let g = greeting(&mut out);
        assert_eq!(g.os, "Linux");
        assert_eq!(g.arch, this_arch());
        assert!(g.dir.starts_with(tmp.to_str().unwrap()), "{g:?}");
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&g.dir).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o700);
        // A stand-in "mtuperf" that shows its arguments and a line of its stdin.
        let body = b"#!/bin/sh\nread -r l; echo \"ran $* with $l\"\n";
        let sum = hex::encode(Sha256::digest(body));
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "copy {} {sum}", body.len()).unwrap();
        stdin.write_all(body).unwrap();
        stdin.write_all(b"secret-on-stdin\n").unwrap();
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        assert!(child.wait().unwrap().success());
        assert!(
            rest.contains(
                "ran serve --ssh-stdio --lifetime 3000ms --log-format text with secret-on-stdin"
            ),
            "{rest}"
        );
        assert!(rest.trim_end().ends_with(CLEANED), "{rest}");
        assert!(!std::path::Path::new(&g.dir).exists());
        std::fs::remove_dir(&tmp).unwrap();
    }

    #[test]
    fn a_wrong_checksum_stops_before_running_and_cleans_up() {
        let tmp = temp();
        let mut child = spawn(&tmp);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let g = greeting(&mut out);
        let mut stdin = child.stdin.take().unwrap();
        let body = b"#!/bin/sh\necho ran\n";
        writeln!(stdin, "copy {} {}", body.len(), "0".repeat(64)).unwrap();
        stdin.write_all(body).unwrap();
        drop(stdin);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(EXIT_CHECKSUM));
        assert!(!rest.contains("ran"), "{rest}");
        assert!(err.contains("checksum mismatch"), "{err}");
        assert!(!std::path::Path::new(&g.dir).exists());
        std::fs::remove_dir(&tmp).unwrap();
    }

    #[test]
    fn a_lost_coordinator_leaves_no_directory() {
        let tmp = temp();
        let mut child = spawn(&tmp);
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let g = greeting(&mut out);
        drop(child.stdin.take());
        assert_eq!(child.wait().unwrap().code(), Some(EXIT_NO_ORDER));
        assert!(!std::path::Path::new(&g.dir).exists());
        std::fs::remove_dir(&tmp).unwrap();
    }

    #[test]
    fn the_script_is_one_line_without_history_characters() {
        let cmd = remote_command(Duration::from_secs(90));
        assert!(!cmd.contains('\n') && !cmd.contains('!'), "{cmd}");
        assert!(cmd.contains("--lifetime 90000ms"));
    }
}
