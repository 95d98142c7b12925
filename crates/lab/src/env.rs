//! Checks before touching anything: privilege (CAP_NET_ADMIN and CAP_SYS_ADMIN in the
//! effective set) and the tools some options drive, each named with its Debian package.
//! Namespaces, links, addresses, routes, MTUs, offloads and agents need no program:
//! mtuperf does them itself through netlink, ioctls and /proc. Only rate shaping (`tc`)
//! and the nftables rules of `blackhole` and `--loss` (`nft`) run programs.
use std::path::Path;

use crate::error::LabError;
use crate::options::LabOptions;
use crate::scenario::Scenario;

/// Capability bit numbers (linux/capability.h).
pub const CAP_NET_ADMIN: u32 = 12;
pub const CAP_SYS_ADMIN: u32 = 21;

/// The tools the lab can run and the Debian package providing each (`ip`, `ethtool`
/// and `sysctl` no longer: they stay for [`package_for`] and older callers).
pub const TOOLS: &[(&str, &str)] = &[
    ("ip", "iproute2"),
    ("tc", "iproute2"),
    ("nft", "nftables"),
    ("ethtool", "ethtool"),
    ("sysctl", "procps"),
];

/// The Debian package that provides `tool` (also `ss` and `setsid`, used by serve).
pub fn package_for(tool: &str) -> Option<&'static str> {
    match tool {
        "ss" => Some("iproute2"),
        "setsid" => Some("util-linux"),
        _ => TOOLS.iter().find(|(t, _)| *t == tool).map(|(_, p)| *p),
    }
}

/// The effective capability set from the text of `/proc/self/status` (`CapEff:` hex).
pub fn parse_cap_eff(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
}

/// Which of the needed capabilities `caps` lacks, if any.
pub fn missing_capability(caps: u64) -> Option<&'static str> {
    let has = |bit: u32| caps & (1u64 << bit) != 0;
    match (has(CAP_NET_ADMIN), has(CAP_SYS_ADMIN)) {
        (true, true) => None,
        (false, true) => Some("CAP_NET_ADMIN"),
        (true, false) => Some("CAP_SYS_ADMIN"),
        (false, false) => Some("CAP_NET_ADMIN and CAP_SYS_ADMIN"),
    }
}

/// Fails with one clear line when this process may not build or enter namespaces;
/// `command` ("mtuperf lab down") is what the line tells to run again under sudo (the
/// CLI names the exact command line with [`LabError::for_command`]).
pub fn check_privilege(command: &str) -> Result<(), LabError> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = parse_cap_eff(&status).unwrap_or(0);
    match missing_capability(caps) {
        None => Ok(()),
        Some(missing) => Err(LabError::NoPrivilege {
            missing,
            command: command.to_string(),
        }),
    }
}

/// Whether an executable named `tool` is in PATH.
pub fn tool_in_path(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).any(|dir| is_executable(&dir.join(tool)))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Fails naming every one of `tools` missing from PATH with its package
/// ([`LabError::MissingTool`] for one, [`LabError::MissingTools`] for several).
pub fn check_tools(tools: &[&'static str]) -> Result<(), LabError> {
    let mut missing: Vec<(&'static str, &'static str)> = tools
        .iter()
        .filter(|t| !tool_in_path(t))
        .map(|&t| (t, package_for(t).unwrap_or("(unknown)")))
        .collect();
    missing.dedup();
    match missing.len() {
        0 => Ok(()),
        1 => {
            let (tool, package) = missing[0];
            Err(LabError::MissingTool { tool, package })
        }
        _ => Err(LabError::MissingTools { tools: missing }),
    }
}

/// The programs a lab built with `opts` runs: `tc` for `rate`, `nft` for the
/// blackhole scenario and for `loss_pct`. The demo's lab (std, jumbo) needs none.
pub fn tools_needed(opts: &LabOptions) -> Vec<&'static str> {
    let mut tools = Vec::new();
    if opts.rate.is_some() {
        tools.push("tc");
    }
    let blackhole = opts.scenarios.is_empty() || opts.scenarios.contains(&Scenario::Blackhole);
    if blackhole || opts.loss_pct.is_some() {
        tools.push("nft");
    }
    if let Some(c) = &opts.cluster {
        tools.extend(crate::cluster::tools::tools(c));
        tools.sort_unstable();
        tools.dedup();
    }
    tools
}

/// What every lab needs: the privilege to build namespaces (no program is needed;
/// see [`tools_needed`] for the options that run some).
pub fn check_environment() -> Result<(), LabError> {
    check_privilege("mtuperf lab up")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cap_eff() {
        let status = "Name:\tcat\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n";
        assert_eq!(parse_cap_eff(status), Some(0x01ff_ffff_ffff));
        assert_eq!(parse_cap_eff("Name: x\n"), None);
        assert_eq!(parse_cap_eff("CapEff:\tzz\n"), None);
    }

    #[test]
    fn names_the_missing_capability() {
        let net = 1u64 << CAP_NET_ADMIN;
        let sys = 1u64 << CAP_SYS_ADMIN;
        let cases = [
            (0x01ff_ffff_ffff, None),
            (net | sys, None),
            (sys, Some("CAP_NET_ADMIN")),
            (net, Some("CAP_SYS_ADMIN")),
            (0, Some("CAP_NET_ADMIN and CAP_SYS_ADMIN")),
        ];
        for (caps, want) in cases {
            assert_eq!(missing_capability(caps), want, "caps {caps:#x}");
        }
        let msg = LabError::NoPrivilege {
            missing: "CAP_NET_ADMIN",
            command: "mtuperf lab up".into(),
        }
        .to_string();
        assert!(msg.contains("sudo mtuperf lab up"), "{msg}");
        let msg = LabError::NoPrivilege {
            missing: "CAP_NET_ADMIN",
            command: "mtuperf lab up".into(),
        }
        .for_command(crate::cmd::shell_line(&[
            "mtuperf", "lab", "down", "--name", "a b",
        ]))
        .to_string();
        assert!(
            msg.ends_with(
                "(CAP_NET_ADMIN missing); run it as root: sudo mtuperf lab down --name 'a b'"
            ),
            "{msg}"
        );
    }

    #[test]
    fn maps_tools_to_debian_packages() {
        let cases = [
            ("ip", Some("iproute2")),
            ("tc", Some("iproute2")),
            ("nft", Some("nftables")),
            ("ethtool", Some("ethtool")),
            ("sysctl", Some("procps")),
            ("setsid", Some("util-linux")),
            ("ss", Some("iproute2")),
            ("frobnicate", None),
        ];
        for (tool, want) in cases {
            assert_eq!(package_for(tool), want, "{tool}");
        }
    }

    #[test]
    fn only_shaping_and_nftables_need_programs() {
        let demo = LabOptions {
            scenarios: vec![Scenario::Std, Scenario::Jumbo],
            offload: false,
            ..LabOptions::default()
        };
        assert!(tools_needed(&demo).is_empty());
        assert_eq!(tools_needed(&LabOptions::default()), ["nft"]);
        let shaped = LabOptions {
            rate: Some(1_000_000),
            loss_pct: Some(1.0),
            ..demo
        };
        assert_eq!(tools_needed(&shaped), ["tc", "nft"]);
    }

    #[test]
    fn every_missing_tool_is_named_at_once() {
        let err = check_tools(&["mtuperf-no-such-a", "sh", "mtuperf-no-such-b"]).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, LabError::MissingTools { .. }), "{text}");
        assert!(
            text.contains("`mtuperf-no-such-a`, `mtuperf-no-such-b` not found"),
            "{text}"
        );
        let err = LabError::MissingTools {
            tools: vec![("tc", "iproute2"), ("nft", "nftables")],
        }
        .to_string();
        assert!(err.contains("apt-get install iproute2 nftables"), "{err}");
        assert!(check_tools(&["sh"]).is_ok());
    }

    #[test]
    fn missing_tool_message_names_the_package() {
        let err = check_tools(&["mtuperf-no-such-tool"]).unwrap_err();
        assert!(matches!(err, LabError::MissingTool { .. }));
        let err = LabError::MissingTool {
            tool: "nft",
            package: "nftables",
        }
        .to_string();
        assert!(err.contains("apt-get install nftables"), "{err}");
    }
}
