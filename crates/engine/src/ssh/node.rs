//! A node reached over SSH, as given on the command line: `[NAME=][USER@]HOST[:PORT]`.
//! HOST is whatever the user's `ssh` reaches (an alias of `~/.ssh/config`, a name, an
//! address; IPv6 with a port in brackets), PORT the SSH port.

use std::fmt;

/// One node to bootstrap over SSH.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshNode {
    /// NAME=, else none (the node is labelled by HOST).
    pub name: Option<String>,
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

impl SshNode {
    /// Parses `[NAME=][USER@]HOST[:PORT]`; the error says what is wrong with it.
    pub fn parse(s: &str) -> Result<SshNode, String> {
        let (name, rest) = match s.split_once('=') {
            Some((n, r)) if !n.is_empty() => (Some(n.to_string()), r),
            Some(_) => return Err("NAME before '=' is empty".into()),
            None => (None, s),
        };
        if let Some(n) = &name {
            if !n
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            {
                return Err(format!(
                    "NAME {n:?} may hold only letters, digits, '-', '_' and '.'"
                ));
            }
        }
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((u, h)) if !u.is_empty() => (Some(u.to_string()), h),
            Some(_) => return Err("USER before '@' is empty".into()),
            None => (None, rest),
        };
        let (host, port) = split_port(hostport)?;
        if host.is_empty() {
            return Err("HOST is empty".into());
        }
        // A leading '-' would be read by ssh as an option.
        if host.starts_with('-') || user.as_deref().is_some_and(|u| u.starts_with('-')) {
            return Err("HOST and USER may not start with '-'".into());
        }
        if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err("no spaces or control characters allowed".into());
        }
        Ok(SshNode {
            name,
            user,
            host: host.to_string(),
            port,
        })
    }

    /// The node's label in results: NAME, else HOST.
    pub fn label(&self) -> &str {
        self.name.as_deref().unwrap_or(&self.host)
    }

    /// The arguments that name the destination for `ssh`: `[-l USER] [-p PORT] HOST`.
    /// Options the user did not give are left to their ssh configuration.
    pub fn destination(&self) -> Vec<String> {
        let mut v = Vec::new();
        if let Some(u) = &self.user {
            v.extend(["-l".to_string(), u.clone()]);
        }
        if let Some(p) = self.port {
            v.extend(["-p".to_string(), p.to_string()]);
        }
        v.push(self.host.clone());
        v
    }
}

impl fmt::Display for SshNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        match self.port {
            Some(p) if self.host.contains(':') => write!(f, "[{}]:{p}", self.host),
            Some(p) => write!(f, "{}:{p}", self.host),
            None => f.write_str(&self.host),
        }
    }
}

/// `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address (no port).
fn split_port(s: &str) -> Result<(&str, Option<u16>), String> {
    let port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .map(Some)
            .ok_or_else(|| format!("PORT {p:?} is not a port number (1 to 65535)"))
    };
    if let Some(inner) = s.strip_prefix('[') {
        let (host, after) = inner
            .split_once(']')
            .ok_or_else(|| "'[' without its ']'".to_string())?;
        return match after {
            "" => Ok((host, None)),
            a => match a.strip_prefix(':') {
                Some(p) => Ok((host, port(p)?)),
                None => Err(format!("unexpected {a:?} after ']'")),
            },
        };
    }
    // No colon: no port; more than one: a bare IPv6 address.
    if s.matches(':').count() == 1 {
        let (h, p) = s.split_once(':').unwrap_or((s, ""));
        return Ok((h, port(p)?));
    }
    Ok((s, None))
}

#[cfg(test)]
mod tests {
    use super::SshNode;

    fn node(name: Option<&str>, user: Option<&str>, host: &str, port: Option<u16>) -> SshNode {
        SshNode {
            name: name.map(Into::into),
            user: user.map(Into::into),
            host: host.into(),
            port,
        }
    }

    #[test]
    fn parses_every_form_of_node() {
        let cases = [
            ("n1", node(None, None, "n1", None)),
            (
                "rac1=oracle@db1.example:2222",
                node(Some("rac1"), Some("oracle"), "db1.example", Some(2222)),
            ),
            (
                "root@198.19.1.3",
                node(None, Some("root"), "198.19.1.3", None),
            ),
            ("n2=10.0.0.2", node(Some("n2"), None, "10.0.0.2", None)),
            ("[fd00::1]:22", node(None, None, "fd00::1", Some(22))),
            ("fd00::1", node(None, None, "fd00::1", None)),
            ("u@[fd00::1]", node(None, Some("u"), "fd00::1", None)),
        ];
        for (text, want) in cases {
            assert_eq!(SshNode::parse(text).as_ref(), Ok(&want), "{text}");
        }
    }

    #[test]
    fn refuses_what_ssh_would_misread() {
        for bad in [
            "",
            "=h",
            "@h",
            "h:0",
            "h:x",
            "-oProxyCommand",
            "u@-h",
            "n=-h",
            "a b",
            "[::1",
            "[::1]x",
            "n!=h",
        ] {
            let e = SshNode::parse(bad);
            assert!(e.is_err(), "{bad:?} accepted as {e:?}");
        }
    }

    #[test]
    fn labels_and_destination_args() {
        let n = SshNode::parse("rac1=oracle@db1:2222").unwrap();
        assert_eq!(n.label(), "rac1");
        assert_eq!(n.destination(), ["-l", "oracle", "-p", "2222", "db1"]);
        assert_eq!(n.to_string(), "oracle@db1:2222");
        let n = SshNode::parse("n3").unwrap();
        assert_eq!(n.label(), "n3");
        assert_eq!(n.destination(), ["n3"]);
        let n = SshNode::parse("[fd00::1]:22").unwrap();
        assert_eq!(n.to_string(), "[fd00::1]:22");
    }
}
