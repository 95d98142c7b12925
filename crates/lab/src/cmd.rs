//! Running nftables/tc, and netlink/ioctl/sysctl steps inside a namespace: each step
//! is echoed (with `verbose`) as the shell line a user can redo by hand (for the
//! steps mtuperf does itself, the iproute2/ethtool/sysctl command doing the same), and
//! a command's stderr is kept for the error.
use std::io::Write;
use std::process::{Command, Stdio};

use crate::error::LabError;

/// Runs commands, echoing them on stderr when `verbose`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Runner {
    pub verbose: bool,
}

impl Runner {
    pub fn new(verbose: bool) -> Runner {
        Runner { verbose }
    }

    /// Runs `argv`, returns its stdout; a non-zero exit is an error with its stderr.
    pub fn run<S: AsRef<str>>(self, argv: &[S]) -> Result<String, LabError> {
        self.echo(&shell_line(argv));
        exec(argv, None, None)
    }

    /// Runs `argv` inside namespace `ns` (entered by mtuperf, not by `ip netns exec`,
    /// which is only how the step is shown), feeding `input` on stdin (shown as a
    /// here-document).
    pub fn run_stdin_in<S: AsRef<str>>(
        self,
        ns: &str,
        argv: &[S],
        input: &str,
    ) -> Result<String, LabError> {
        self.echo(&format!(
            "{} <<'EOF'\n{input}EOF",
            shell_line(&in_ns(ns, argv))
        ));
        exec(argv, Some(input), Some(ns))
    }

    /// Runs without echoing: for read-only queries.
    #[cfg(test)]
    pub fn query<S: AsRef<str>>(argv: &[S]) -> Result<String, LabError> {
        exec(argv, None, None)
    }

    /// Does `f` on a thread inside namespace `ns`, echoing `line`: the command that
    /// does the same by hand. A failure is reported with that line.
    pub fn kernel<T: Send>(
        self,
        ns: &str,
        line: &str,
        f: impl FnOnce() -> std::io::Result<T> + Send,
    ) -> Result<T, LabError> {
        self.echo(line);
        let err = |source| LabError::Kernel {
            line: line.to_string(),
            source,
        };
        mtuperf_sys::netns::run_in(ns, f).map_err(err)?.map_err(err)
    }

    pub fn echo(self, line: &str) {
        if self.verbose {
            eprintln!("+ {line}");
        }
    }
}

fn exec<S: AsRef<str>>(
    argv: &[S],
    input: Option<&str>,
    ns: Option<&str>,
) -> Result<String, LabError> {
    let line = match ns {
        Some(ns) => shell_line(&in_ns(ns, argv)),
        None => shell_line(argv),
    };
    let (prog, args) = argv.split_first().expect("a command has a program");
    let mut cmd = Command::new(prog.as_ref());
    if let Some(ns) = ns {
        mtuperf_sys::netns::enter_on_spawn(&mut cmd, ns, false);
    }
    cmd.args(args.iter().map(AsRef::as_ref))
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let spawn_err = |source| LabError::Spawn {
        line: line.clone(),
        source,
    };
    let mut child = cmd.spawn().map_err(spawn_err)?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        stdin.write_all(text.as_bytes()).map_err(spawn_err)?;
    }
    let out = child.wait_with_output().map_err(spawn_err)?;
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    Err(LabError::Command {
        line,
        status: out.status.to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// The command as a line for a POSIX shell: words with anything but safe characters
/// are single-quoted.
pub fn shell_line<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|a| quote(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `ip netns exec NS argv...` as an argument vector (for showing a step: mtuperf
/// enters namespaces itself).
pub(crate) fn in_ns<S: AsRef<str>>(ns: &str, argv: &[S]) -> Vec<String> {
    ["ip", "netns", "exec", ns]
        .iter()
        .map(ToString::to_string)
        .chain(argv.iter().map(|a| a.as_ref().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_a_shell_would_split() {
        let cases: &[(&[&str], &str)] = &[
            (&["ip", "-n", "ns", "link"], "ip -n ns link"),
            (&["echo", "a b"], "echo 'a b'"),
            (&["echo", "it's"], r"echo 'it'\''s'"),
            (&["echo", ""], "echo ''"),
            (
                &["ip", "addr", "add", "fd6d:7475:0:1::1/64"],
                "ip addr add fd6d:7475:0:1::1/64",
            ),
            (&["nft", "a;b"], "nft 'a;b'"),
        ];
        for (argv, want) in cases {
            assert_eq!(shell_line(argv), *want);
        }
    }

    #[test]
    fn failing_command_reports_line_and_stderr() {
        let err = Runner::query(&["sh", "-c", "echo oops >&2; exit 3"]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("sh -c 'echo oops >&2; exit 3'"), "{text}");
        assert!(text.contains("oops"), "{text}");
    }

    #[test]
    fn in_ns_prefixes_ip_netns_exec() {
        assert_eq!(
            in_ns("mtlab-x-client", &["ping", "-c", "1"]).join(" "),
            "ip netns exec mtlab-x-client ping -c 1"
        );
    }
}
