//! A doctor [`Fix`] as the shell command that makes it. Interface and sysctl names are
//! quoted here, when the command is written: Linux allows `;`, `$`, `>` and quotes in
//! interface names, so every interpolated word goes through `shlex`, and a word that
//! cannot be quoted safely (a control character) gives no command rather than a wrong
//! one.

use mtuperf_engine::doctor::{Fix, MtuScope, SysctlSet};

/// The fix as one line of shell (empty when a word cannot be quoted).
pub fn command(fix: &Fix) -> String {
    match fix {
        Fix::SetMtu { iface, mtu, scope } => shell_fix(
            &["ip", "link", "set", "dev", iface, "mtu", &mtu.to_string()],
            &mtu_comment(scope),
        ),
        Fix::LinkUp { iface } => shell_fix(&["ip", "link", "set", "dev", iface, "up"], ""),
        Fix::Autoneg { iface } => shell_fix(
            &["ethtool", "-s", iface, "autoneg", "on"],
            "then check the switch port",
        ),
        Fix::LroOff { iface } => shell_fix(&["ethtool", "-K", iface, "lro", "off"], ""),
        Fix::Sysctl { set } => {
            let each: Option<Vec<String>> = set
                .iter()
                .map(|SysctlSet { name, value }| sysctl_fix(name, value))
                .collect();
            each.map(|c| c.join(" && ")).unwrap_or_default()
        }
        Fix::Investigate => {
            "# investigate: watch -d 'nstat -az' / ip -s link; see the related buffer and MTU findings"
                .into()
        }
        Fix::SameOnBothNodes { sysctl } => format!(
            "# set {sysctl} to the same value on both nodes (see the sysctl findings)"
        ),
    }
}

/// Where an MTU change is to be made, as the command's trailing comment.
fn mtu_comment(scope: &MtuScope) -> String {
    let between = "and every switch port between them";
    match scope {
        MtuScope::Iface => String::new(),
        MtuScope::Interconnect => "and every switch port and the peer".into(),
        MtuScope::Here => format!("on this host, {between}"),
        MtuScope::HereAndPeer { peer, peer_iface } => {
            format!("on this host, the same on the peer ({peer}) for {peer_iface}, {between}")
        }
        MtuScope::Peer { peer } => format!("on the peer ({peer}), {between}"),
    }
}

/// One shell command from its words, each quoted with `shlex`. `None` when a word
/// cannot be quoted safely (a NUL or another control character).
pub fn shell_cmd(words: &[&str]) -> Option<String> {
    if words.iter().any(|w| w.chars().any(char::is_control)) {
        return None;
    }
    shlex::try_join(words.iter().copied()).ok()
}

/// `shell_cmd` followed by a trailing comment, or an empty fix when the command cannot
/// be quoted.
fn shell_fix(words: &[&str], comment: &str) -> String {
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
/// another value) leaves one line, not duplicates (`None` when the name or value
/// cannot be quoted).
fn sysctl_fix(name: &str, value: &str) -> Option<String> {
    let set = shell_cmd(&["sysctl", "-w", &format!("{name}={value}")])?;
    let keep = shell_cmd(&["echo", &format!("{name} = {value}")])?;
    if name.contains('/') {
        return None;
    }
    let file = shell_cmd(&[&format!("/etc/sysctl.d/90-mtuperf-{name}.conf")])?;
    Some(format!("{set} && {keep} > {file}"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{command, shell_cmd, shell_fix, sysctl_fix};
    use mtuperf_engine::doctor::{Fix, MtuScope};

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
        let s = sysctl_fix("net.ipv4.conf.a;id.rp_filter", "2").unwrap();
        assert!(
            s.starts_with("sysctl -w 'net.ipv4.conf.a;id.rp_filter=2' && echo "),
            "{s}"
        );
        assert_eq!(sysctl_fix("net.ipv4.conf.a\rb.rp_filter", "2"), None);
        assert_eq!(sysctl_fix("net.ipv4.conf.a/b.rp_filter", "2"), None);
        // Running the script twice leaves one line: the file is written, not appended.
        assert!(!sysctl_fix("net.ipv4.tcp_mtu_probing", "1")
            .unwrap()
            .contains(">>"));
        assert_eq!(
            sysctl_fix("net.ipv4.tcp_rmem", "4096 131072 6291456").unwrap(),
            "sysctl -w 'net.ipv4.tcp_rmem=4096 131072 6291456' && echo 'net.ipv4.tcp_rmem = 4096 131072 6291456' > /etc/sysctl.d/90-mtuperf-net.ipv4.tcp_rmem.conf"
        );
        // A typed fix naming a hostile interface: quoted, or no command at all.
        let mtu = |iface: &str| Fix::SetMtu {
            iface: iface.into(),
            mtu: 9000,
            scope: MtuScope::Interconnect,
        };
        assert_eq!(
            command(&mtu("a;id>x")),
            "ip link set dev 'a;id>x' mtu 9000  # and every switch port and the peer"
        );
        assert_eq!(command(&mtu("a\nid")), "");
        // One unquotable setting in a chain drops the whole chain.
        let rp = Fix::Sysctl {
            set: [
                "net.ipv4.conf.all.rp_filter",
                "net.ipv4.conf.a\nb.rp_filter",
            ]
            .iter()
            .map(|n| mtuperf_engine::doctor::SysctlSet {
                name: (*n).into(),
                value: "2".into(),
            })
            .collect(),
        };
        assert_eq!(command(&rp), "");
    }
}
