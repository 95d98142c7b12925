//! The cluster's own definition of its networks: the output of Oracle Clusterware's
//! `$GRID_HOME/bin/oifcfg getif`, one line per interface and subnet:
//!
//! ```text
//! eth0  10.0.0.0  global  public
//! eth1  192.168.10.0  global  cluster_interconnect
//! eth2  192.168.11.0  global  cluster_interconnect,asm
//! ```
//!
//! (interface name, possibly with `*` wildcards; the subnet's network address, with
//! no mask; `global`, or the one node the line is for; the comma-separated roles).
//! `mesh --oifcfg` tests exactly the `cluster_interconnect` subnets, and the HAIP
//! link-local subnets found on their interfaces.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// What a subnet is used for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OifcfgRole {
    ClusterInterconnect,
    Public,
    Asm,
    Other(String),
}

/// One line of `oifcfg getif`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OifcfgEntry {
    /// The interface name, as oifcfg stores it (may hold `*` wildcards).
    pub iface: String,
    /// The subnet's network address (oifcfg gives no mask: each node's own prefix on
    /// that interface applies).
    pub subnet: IpAddr,
    /// The node the line is for, when it is not `global`.
    pub node: Option<String>,
    pub roles: Vec<OifcfgRole>,
}

impl OifcfgEntry {
    pub fn interconnect(&self) -> bool {
        self.roles.contains(&OifcfgRole::ClusterInterconnect)
    }

    /// Whether interface `name` is this entry's (its `*` wildcards matched).
    pub fn matches_iface(&self, name: &str) -> bool {
        glob(&self.iface, name)
    }

    /// Whether the entry applies to a node called `label` (or with `hostname`).
    pub fn applies_to(&self, label: &str, hostname: Option<&str>) -> bool {
        self.node.as_deref().is_none_or(|n| {
            n == label || hostname.is_some_and(|h| h == n || h.split('.').next() == Some(n))
        })
    }
}

/// `pattern` with `*` matching any run of characters.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return pattern == name;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Why a text is not `oifcfg getif` output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OifcfgError {
    #[error("line {line}: {text:?} is not `IFACE SUBNET global|NODE ROLE[,ROLE]` (e.g. `eth1  192.168.10.0  global  cluster_interconnect`): {why}")]
    BadLine {
        line: usize,
        text: String,
        why: String,
    },
    #[error("no line marks a subnet cluster_interconnect (found {found}): nothing to test; the file should be the output of `$GRID_HOME/bin/oifcfg getif`")]
    NoInterconnect { found: String },
}

fn role(s: &str) -> OifcfgRole {
    match s.to_ascii_lowercase().as_str() {
        "cluster_interconnect" => OifcfgRole::ClusterInterconnect,
        "public" => OifcfgRole::Public,
        "asm" => OifcfgRole::Asm,
        other => OifcfgRole::Other(other.to_string()),
    }
}

/// One line, or None for a line that carries no entry (blank, a comment, oifcfg's
/// `PRIF-` messages).
fn line(n: usize, text: &str) -> Result<Option<OifcfgEntry>, OifcfgError> {
    // "Only in OCR: eth1 ..." / "Only in GPnP: ..." still name the subnet's use.
    let body = text
        .trim()
        .strip_prefix("Only in OCR:")
        .or_else(|| text.trim().strip_prefix("Only in GPnP:"))
        .unwrap_or(text)
        .trim();
    if body.is_empty() || body.starts_with('#') || body.starts_with("PRIF-") {
        return Ok(None);
    }
    let bad = |why: &str| OifcfgError::BadLine {
        line: n,
        text: mtuperf_proto::text::escape_control(text.trim()).into_owned(),
        why: why.into(),
    };
    let words: Vec<&str> = body.split_whitespace().collect();
    let [iface, subnet, scope, roles] = words.as_slice() else {
        return Err(bad(&format!("{} fields, 4 expected", words.len())));
    };
    let subnet: IpAddr = subnet
        .parse()
        .map_err(|_| bad(&format!("{subnet:?} is not a subnet address")))?;
    let node = (!scope.eq_ignore_ascii_case("global")).then(|| (*scope).to_string());
    let roles: Vec<OifcfgRole> = roles
        .split(',')
        .filter(|r| !r.is_empty())
        .map(role)
        .collect();
    if roles.is_empty() {
        return Err(bad("no role"));
    }
    Ok(Some(OifcfgEntry {
        iface: (*iface).to_string(),
        subnet,
        node,
        roles,
    }))
}

/// Parses `oifcfg getif` output. At least one entry must be `cluster_interconnect`.
pub fn parse(text: &str) -> Result<Vec<OifcfgEntry>, OifcfgError> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if let Some(e) = line(i + 1, l)? {
            out.push(e);
        }
    }
    if !out.iter().any(OifcfgEntry::interconnect) {
        let found: Vec<String> = out
            .iter()
            .map(|e| format!("{} {}", e.iface, e.subnet))
            .collect();
        return Err(OifcfgError::NoInterconnect {
            found: if found.is_empty() {
                "no entry".into()
            } else {
                found.join(", ")
            },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `oifcfg getif` of a two-NIC HAIP cluster with a public network, as 19c prints it.
    const GETIF: &str = "eth0  10.0.0.0  global  public
eth1  192.168.10.0  global  cluster_interconnect
eth2  192.168.11.0  global  cluster_interconnect,asm
";

    #[test]
    fn getif_output_is_read_with_roles() {
        let e = parse(GETIF).unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].iface, "eth0");
        assert_eq!(e[0].roles, vec![OifcfgRole::Public]);
        assert!(!e[0].interconnect());
        assert_eq!(e[1].subnet, "192.168.10.0".parse::<IpAddr>().unwrap());
        assert!(e[1].interconnect() && e[2].interconnect());
        assert_eq!(
            e[2].roles,
            vec![OifcfgRole::ClusterInterconnect, OifcfgRole::Asm]
        );
        assert!(e.iter().all(|x| x.node.is_none()));
    }

    #[test]
    fn node_specific_lines_wildcards_and_noise() {
        let text = "\n# saved from rac1\nPRIF-10: failed to initialize the cluster registry\n\
                    bond1  10.10.0.0  rac2  cluster_interconnect\n\
                    Only in OCR: ib*  172.16.0.0  global  cluster_interconnect\n\
                    eth9 fd00::  global  cluster_interconnect\n";
        let e = parse(text).unwrap();
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].node.as_deref(), Some("rac2"));
        assert!(e[0].applies_to("rac2", None));
        assert!(e[0].applies_to("n2", Some("rac2.example.com")));
        assert!(!e[0].applies_to("rac1", Some("rac1")));
        assert!(e[1].matches_iface("ib0") && e[1].matches_iface("ib12"));
        assert!(!e[1].matches_iface("eth0"));
        assert!(e[2].subnet.is_ipv6());
    }

    #[test]
    fn globs() {
        for (p, n, want) in [
            ("eth1", "eth1", true),
            ("eth1", "eth10", false),
            ("eth*", "eth", true),
            ("*1", "bond1", true),
            ("e*h*1", "eth1", true),
            ("e*x", "eth1", false),
            ("*", "anything", true),
        ] {
            assert_eq!(glob(p, n), want, "{p} {n}");
        }
    }

    #[test]
    fn bad_files_are_refused_with_the_line() {
        let e = parse("eth1 192.168.10.0 global\n").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        assert!(e.to_string().contains("3 fields"), "{e}");
        let e = parse("eth1 192.168.10 global cluster_interconnect\n").unwrap_err();
        assert!(e.to_string().contains("not a subnet address"), "{e}");
        let e = parse("eth0 10.0.0.0 global public\n").unwrap_err();
        assert!(
            matches!(&e, OifcfgError::NoInterconnect { found } if found == "eth0 10.0.0.0"),
            "{e}"
        );
        assert!(matches!(
            parse("").unwrap_err(),
            OifcfgError::NoInterconnect { .. }
        ));
    }
}
