//! Facts about one interface: MTU, index, kind, VLAN parent, bond members, link speed,
//! duplex and offloads.

use std::fs;
use std::path::Path;

use mtuperf_proto::host::IfaceInfo;

use super::{iface_dir, read_trimmed, read_u64, SYS_CLASS_NET};
use crate::netlink::{self, attrs};
use crate::Error;

/// Size of `struct ifinfomsg`, the family header of link messages.
const IFINFOMSG_LEN: usize = 16;

/// Everything mtuperf reports about `iface`: sysfs facts, the link kind from
/// rtnetlink (IFLA_INFO_KIND: veth, vlan, bond, ...) when the kernel gives one, and
/// offloads from ethtool.
pub fn iface_info(iface: &str) -> Result<IfaceInfo, Error> {
    let mut info = iface_info_at(Path::new(SYS_CLASS_NET), iface)?;
    if let Some(kind) = link_kind(info.index) {
        info.kind = kind;
    }
    info.offloads = crate::ethtool::offloads(iface);
    Ok(info)
}

/// The sysfs part of [`iface_info`], below a root standing for /sys/class/net.
/// Kind comes from uevent DEVTYPE, a bonding/ or bridge/ directory, or the ARPHRD
/// `type`. Offloads are left unknown.
pub fn iface_info_at(root: &Path, iface: &str) -> Result<IfaceInfo, Error> {
    let dir = iface_dir(root, iface)?;
    let mtu_of = |name: &str| {
        read_u64(&root.join(name).join("mtu"))
            .ok()
            .map(|m| m as u32)
    };
    let kind = sysfs_kind(&dir);
    let members: Vec<(String, u32)> = read_trimmed(&dir.join("bonding/slaves"))
        .unwrap_or_default()
        .split_whitespace()
        .map(|m| (m.to_owned(), mtu_of(m).unwrap_or(0)))
        .collect();
    let parent = if matches!(kind.as_str(), "bond" | "bridge") {
        None
    } else {
        single_lower(&dir).map(|p| {
            let mtu = mtu_of(&p).unwrap_or(0);
            (p, mtu)
        })
    };
    Ok(IfaceInfo {
        name: iface.to_owned(),
        index: read_u64(&dir.join("ifindex"))? as u32,
        mtu: read_u64(&dir.join("mtu"))? as u32,
        kind,
        parent,
        members,
        // Reading speed fails (EINVAL) on virtual or down links; -1 means unknown.
        speed_mbps: read_trimmed(&dir.join("speed"))
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
            .filter(|&s| s > 0 && s != u32::MAX),
        duplex: read_trimmed(&dir.join("duplex"))
            .ok()
            .filter(|d| d == "full" || d == "half"),
        offloads: mtuperf_proto::host::Offloads::default(),
    })
}

fn sysfs_kind(dir: &Path) -> String {
    let uevent = read_trimmed(&dir.join("uevent")).unwrap_or_default();
    if let Some(t) = uevent.lines().find_map(|l| l.strip_prefix("DEVTYPE=")) {
        return t.trim().to_owned();
    }
    for sub in ["bonding", "bridge"] {
        if dir.join(sub).is_dir() {
            return if sub == "bonding" { "bond" } else { sub }.to_owned();
        }
    }
    match read_trimmed(&dir.join("type"))
        .ok()
        .and_then(|t| t.parse::<u32>().ok())
    {
        Some(1) => "ether".into(),
        Some(32) => "infiniband".into(),
        Some(772) => "loopback".into(),
        Some(65534) => "none".into(),
        Some(n) => format!("arphrd-{n}"),
        None => "unknown".into(),
    }
}

/// The one lower device (`lower_<name>` link), as for a VLAN or macvlan.
fn single_lower(dir: &Path) -> Option<String> {
    let lowers: Vec<String> = fs::read_dir(dir)
        .ok()?
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_prefix("lower_")
                .map(str::to_owned)
        })
        .collect();
    match lowers.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// IFLA_LINKINFO/IFLA_INFO_KIND of interface `index` over rtnetlink (None for
/// physical NICs and loopback, which have no link info, or on any failure).
fn link_kind(index: u32) -> Option<String> {
    let mut req = vec![0u8; IFINFOMSG_LEN];
    req[0] = libc::AF_UNSPEC as u8;
    req[4..8].copy_from_slice(&index.to_ne_bytes());
    let reply = netlink::request(libc::RTM_GETLINK, &req, libc::RTM_NEWLINK).ok()?;
    parse_link_kind(&reply)
}

pub(crate) fn parse_link_kind(payload: &[u8]) -> Option<String> {
    let (_, linkinfo) = attrs(payload.get(IFINFOMSG_LEN..)?)
        .into_iter()
        .find(|(t, _)| *t == libc::IFLA_LINKINFO)?;
    let (_, kind) = attrs(linkinfo)
        .into_iter()
        .find(|(t, _)| *t == libc::IFLA_INFO_KIND)?;
    let kind = String::from_utf8_lossy(kind)
        .trim_end_matches('\0')
        .to_owned();
    (!kind.is_empty()).then_some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netdev::tests::sys_tree;

    fn fixture() -> tempfile::TempDir {
        sys_tree(&[
            ("eth0/ifindex", "2\n"),
            ("eth0/mtu", "9000\n"),
            ("eth0/type", "1\n"),
            ("eth0/uevent", "INTERFACE=eth0\nIFINDEX=2\n"),
            ("eth0/speed", "10000\n"),
            ("eth0/duplex", "full\n"),
            ("eth1/ifindex", "3\n"),
            ("eth1/mtu", "1500\n"),
            ("eth1/type", "1\n"),
            ("bond0/ifindex", "4\n"),
            ("bond0/mtu", "9000\n"),
            ("bond0/type", "1\n"),
            ("bond0/uevent", "DEVTYPE=bond\nINTERFACE=bond0\nIFINDEX=4\n"),
            ("bond0/bonding/slaves", "eth0 eth1\n"),
            ("bond0/lower_eth0/.keep", ""),
            ("bond0/lower_eth1/.keep", ""),
            ("eth0.100/ifindex", "5\n"),
            ("eth0.100/mtu", "9000\n"),
            ("eth0.100/type", "1\n"),
            (
                "eth0.100/uevent",
                "DEVTYPE=vlan\nINTERFACE=eth0.100\nIFINDEX=5\n",
            ),
            ("eth0.100/lower_eth0/.keep", ""),
            ("veth0/ifindex", "6\n"),
            ("veth0/mtu", "1500\n"),
            ("veth0/type", "1\n"),
            ("veth0/speed", "-1\n"),
            ("veth0/duplex", "unknown\n"),
            ("br0/ifindex", "7\n"),
            ("br0/mtu", "1500\n"),
            ("br0/type", "1\n"),
            ("br0/bridge/stp_state", "0\n"),
            ("br0/lower_veth0/.keep", ""),
            ("lo/ifindex", "1\n"),
            ("lo/mtu", "65536\n"),
            ("lo/type", "772\n"),
            ("ib0/ifindex", "8\n"),
            ("ib0/mtu", "2044\n"),
            ("ib0/type", "32\n"),
            ("tun0/ifindex", "9\n"),
            ("tun0/mtu", "1400\n"),
            ("tun0/type", "65534\n"),
        ])
    }

    #[test]
    fn reads_interface_facts_from_a_fixture_tree() {
        let dir = fixture();
        let info = |name: &str| iface_info_at(dir.path(), name).unwrap();
        let eth0 = info("eth0");
        assert_eq!(
            (eth0.index, eth0.mtu, eth0.kind.as_str()),
            (2, 9000, "ether")
        );
        assert_eq!(
            (eth0.speed_mbps, eth0.duplex.as_deref()),
            (Some(10000), Some("full"))
        );
        assert_eq!(eth0.parent, None);

        let bond = info("bond0");
        assert_eq!(bond.kind, "bond");
        assert_eq!(
            bond.members,
            vec![("eth0".to_owned(), 9000), ("eth1".to_owned(), 1500)]
        );
        assert_eq!(bond.parent, None);

        let vlan = info("eth0.100");
        assert_eq!(vlan.kind, "vlan");
        assert_eq!(vlan.parent, Some(("eth0".to_owned(), 9000)));
        assert!(vlan.members.is_empty());

        let veth = info("veth0");
        assert_eq!((veth.speed_mbps, veth.duplex), (None, None));

        let kinds = [
            ("br0", "bridge"),
            ("lo", "loopback"),
            ("ib0", "infiniband"),
            ("tun0", "none"),
        ];
        for (name, kind) in kinds {
            let i = info(name);
            assert_eq!(i.kind, kind, "{name}");
            assert_eq!(i.parent, None, "{name}");
        }
    }

    #[test]
    fn missing_or_broken_interfaces_are_errors() {
        let dir = fixture();
        fs::write(dir.path().join("eth1/mtu"), "big\n").unwrap();
        for name in ["eth1", "nope", "", ".."] {
            assert!(iface_info_at(dir.path(), name).is_err(), "{name:?}");
        }
    }

    #[test]
    fn parses_link_kind_attribute() {
        let mut info = Vec::new();
        crate::netlink::push_attr(&mut info, libc::IFLA_INFO_KIND, b"veth\0");
        let mut payload = vec![0u8; IFINFOMSG_LEN];
        crate::netlink::push_attr(&mut payload, libc::IFLA_IFNAME, b"veth0\0");
        crate::netlink::push_attr(&mut payload, libc::IFLA_LINKINFO | 0x8000, &info);
        assert_eq!(parse_link_kind(&payload).as_deref(), Some("veth"));
        assert_eq!(parse_link_kind(&payload[..IFINFOMSG_LEN]), None);
        assert_eq!(parse_link_kind(&[1, 2]), None);
    }

    #[test]
    fn loopback_is_loopback_with_mtu_65536() {
        let lo = iface_info("lo").unwrap();
        assert_eq!(lo.name, "lo");
        assert_eq!(lo.index, 1);
        assert_eq!(lo.mtu, 65536);
        assert_eq!(lo.kind, "loopback");
        assert_eq!(lo.parent, None);
        assert!(lo.members.is_empty());
        assert!(iface_info("mtuperf-none0").is_err());
    }
}
