//! A small builder so each rule reads as: id, subject, status, values, reason, source, fix.

use super::{Finding, Status};

/// Builds one [`Finding`]; unset text fields stay empty.
#[derive(Debug, Clone)]
pub struct FindingBuilder(Finding);

impl FindingBuilder {
    pub fn new(id: &str, subject: &str) -> FindingBuilder {
        FindingBuilder(Finding {
            id: id.into(),
            subject: subject.into(),
            status: Status::Pass,
            measured: String::new(),
            expected: String::new(),
            why: String::new(),
            source: String::new(),
            fix: String::new(),
        })
    }

    #[must_use]
    pub fn status(mut self, s: Status) -> Self {
        self.0.status = s;
        self
    }

    #[must_use]
    pub fn measured(mut self, s: impl Into<String>) -> Self {
        self.0.measured = s.into();
        self
    }

    #[must_use]
    pub fn expected(mut self, s: impl Into<String>) -> Self {
        self.0.expected = s.into();
        self
    }

    #[must_use]
    pub fn why(mut self, s: impl Into<String>) -> Self {
        self.0.why = s.into();
        self
    }

    #[must_use]
    pub fn source(mut self, s: impl Into<String>) -> Self {
        self.0.source = s.into();
        self
    }

    /// The fix, kept only when the finding is not a PASS or SKIP.
    #[must_use]
    pub fn fix(mut self, s: impl Into<String>) -> Self {
        self.0.fix = s.into();
        self
    }

    pub fn build(mut self) -> Finding {
        if matches!(self.0.status, Status::Pass | Status::Skip) {
            self.0.fix.clear();
        }
        self.0
    }
}

/// One shell command from its words, each quoted with `shlex` (interface names may hold
/// `;`, `$`, `>` and quotes). `None` when a word cannot be quoted safely (a NUL or another
/// control character): the finding then carries no command rather than a wrong one.
pub fn shell_cmd(words: &[&str]) -> Option<String> {
    if words.iter().any(|w| w.chars().any(char::is_control)) {
        return None;
    }
    shlex::try_join(words.iter().copied()).ok()
}

/// `shell_cmd` followed by a trailing comment (which holds no interpolated value), or an
/// empty fix when the command cannot be quoted.
pub fn shell_fix(words: &[&str], comment: &str) -> String {
    shell_cmd(words).map_or_else(String::new, |c| {
        if comment.is_empty() {
            c
        } else {
            format!("{c}  # {comment}")
        }
    })
}

/// The fix for a sysctl: the runtime command plus the file that makes it persistent,
/// one file per sysctl written with `>` so that running the script again (or with
/// another value) leaves one line, not duplicates (empty when the name or value cannot
/// be quoted).
pub fn sysctl_fix(name: &str, value: &str) -> String {
    let set = shell_cmd(&["sysctl", "-w", &format!("{name}={value}")]);
    let keep = shell_cmd(&["echo", &format!("{name} = {value}")]);
    let file = if name.contains('/') {
        None
    } else {
        shell_cmd(&[&format!("/etc/sysctl.d/90-mtuperf-{name}.conf")])
    };
    match (set, keep, file) {
        (Some(set), Some(keep), Some(file)) => format!("{set} && {keep} > {file}"),
        _ => String::new(),
    }
}

/// A SKIP finding saying why a check could not run.
pub fn skip(id: &str, subject: &str, reason: impl Into<String>) -> Finding {
    skip_with(id, subject, "unknown", reason)
}

/// A SKIP finding that still shows what was read.
pub fn skip_with(id: &str, subject: &str, measured: &str, reason: impl Into<String>) -> Finding {
    FindingBuilder::new(id, subject)
        .status(Status::Skip)
        .measured(measured)
        .why(reason)
        .build()
}

#[cfg(test)]
mod tests {
    use super::{shell_cmd, shell_fix, sysctl_fix};

    #[test]
    fn hostile_interface_names_are_quoted_or_refused() {
        assert_eq!(
            shell_cmd(&["ip", "link", "set", "dev", "eth0", "mtu", "9000"]).as_deref(),
            Some("ip link set dev eth0 mtu 9000")
        );
        let c = shell_cmd(&["ip", "link", "set", "dev", "a;id>x", "mtu", "9000"]).unwrap();
        assert_eq!(c, "ip link set dev 'a;id>x' mtu 9000");
        let c = shell_cmd(&["ip", "link", "set", "dev", "$(id)'q", "up"]).unwrap();
        assert!(!c.contains("dev $(id)"), "{c}");
        assert!(shell_cmd(&["ip", "link", "set", "dev", "a\nid", "up"]).is_none());
        assert!(shell_cmd(&["ip", "link", "set", "dev", "a\0b", "up"]).is_none());
        assert_eq!(shell_fix(&["ip", "x\ny"], "comment"), "");
        assert_eq!(shell_fix(&["ip", "x"], "note"), "ip x  # note");
        let s = sysctl_fix("net.ipv4.conf.a;id.rp_filter", "2");
        assert!(
            s.starts_with("sysctl -w 'net.ipv4.conf.a;id.rp_filter=2' && echo "),
            "{s}"
        );
        assert_eq!(sysctl_fix("net.ipv4.conf.a\rb.rp_filter", "2"), "");
        assert_eq!(sysctl_fix("net.ipv4.conf.a/b.rp_filter", "2"), "");
        // Running the script twice leaves one line: the file is written, not appended.
        assert!(!sysctl_fix("net.ipv4.tcp_mtu_probing", "1").contains(">>"));
        assert_eq!(
            sysctl_fix("net.ipv4.tcp_rmem", "4096 131072 6291456"),
            "sysctl -w 'net.ipv4.tcp_rmem=4096 131072 6291456' && echo 'net.ipv4.tcp_rmem = 4096 131072 6291456' > /etc/sysctl.d/90-mtuperf-net.ipv4.tcp_rmem.conf"
        );
    }
}
