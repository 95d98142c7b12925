//! Offload and pause settings through the SIOCETHTOOL ioctl (the legacy per-offload
//! gets, and the feature-string interface for what `ethtool -k`/`-K` show and set).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use mtuperf_proto::host::Offloads;

// From linux/ethtool.h; the legacy "get" commands exist on every kernel mtuperf runs on.
const ETHTOOL_GPAUSEPARAM: u32 = 0x12;
const ETHTOOL_GRXCSUM: u32 = 0x14;
const ETHTOOL_GTXCSUM: u32 = 0x16;
const ETHTOOL_GTSO: u32 = 0x1e;
const ETHTOOL_GGSO: u32 = 0x23;
const ETHTOOL_GFLAGS: u32 = 0x25;
const ETHTOOL_GGRO: u32 = 0x2b;
const ETH_FLAG_LRO: u32 = 1 << 15;
const ETHTOOL_GSTRINGS: u32 = 0x1b;
const ETHTOOL_GSSET_INFO: u32 = 0x37;
const ETHTOOL_GFEATURES: u32 = 0x3a;
const ETHTOOL_SFEATURES: u32 = 0x3b;
const ETH_SS_FEATURES: u32 = 4;
const ETH_GSTRING_LEN: usize = 32;

/// TSO, GSO, GRO, LRO and checksum offloads of `iface`; each `None` when the ioctl
/// fails (no such interface, EOPNOTSUPP).
pub fn offloads(iface: &str) -> Offloads {
    let Ok(sock) = control_socket() else {
        return Offloads::default();
    };
    let get = |cmd: u32| value(&sock, iface, cmd).ok();
    Offloads {
        tso: get(ETHTOOL_GTSO).map(|v| v != 0),
        gso: get(ETHTOOL_GGSO).map(|v| v != 0),
        gro: get(ETHTOOL_GGRO).map(|v| v != 0),
        lro: get(ETHTOOL_GFLAGS).map(|v| v & ETH_FLAG_LRO != 0),
        rx_csum: get(ETHTOOL_GRXCSUM).map(|v| v != 0),
        tx_csum: get(ETHTOOL_GTXCSUM).map(|v| v != 0),
    }
}

/// ETHTOOL_GPAUSEPARAM: (autoneg, rx_pause, tx_pause), if the driver supports it.
pub fn pause(iface: &str) -> Option<(bool, bool, bool)> {
    let sock = control_socket().ok()?;
    let mut p = [ETHTOOL_GPAUSEPARAM, 0, 0, 0]; // struct ethtool_pauseparam
    ioctl(&sock, iface, p.as_mut_ptr().cast()).ok()?;
    Some((p[1] != 0, p[2] != 0, p[3] != 0))
}

/// The feature groups `ethtool -K` calls tso, gso and gro, by feature name (ethtool's
/// own patterns: "tx-tcp*-segmentation", so every TCP segmentation kind a kernel
/// adds is included, as `ethtool -K tso off` does).
fn group_of(feature: &str) -> Option<usize> {
    if feature.starts_with("tx-tcp") && feature.ends_with("-segmentation") {
        Some(0)
    } else if feature == "tx-generic-segmentation" {
        Some(1)
    } else if feature == "rx-gro" {
        Some(2)
    } else {
        None
    }
}

/// Names of the device features (ETH_SS_FEATURES strings), in bit order.
fn feature_names(sock: &OwnedFd, iface: &str) -> io::Result<Vec<String>> {
    // struct ethtool_sset_info { u32 cmd; u32 reserved; u64 sset_mask; u32 data[1]; }
    let mut info = [0u8; 20];
    info[..4].copy_from_slice(&ETHTOOL_GSSET_INFO.to_ne_bytes());
    info[8..16].copy_from_slice(&(1u64 << ETH_SS_FEATURES).to_ne_bytes());
    ioctl(sock, iface, info.as_mut_ptr().cast())?;
    let count = u32::from_ne_bytes(info[16..20].try_into().unwrap_or_default()) as usize;
    if count == 0 || count > 4096 {
        return Err(io::ErrorKind::InvalidData.into());
    }
    // struct ethtool_gstrings { u32 cmd; u32 string_set; u32 len; u8 data[]; }
    let mut buf = vec![0u8; 12 + count * ETH_GSTRING_LEN];
    buf[..4].copy_from_slice(&ETHTOOL_GSTRINGS.to_ne_bytes());
    buf[4..8].copy_from_slice(&ETH_SS_FEATURES.to_ne_bytes());
    buf[8..12].copy_from_slice(&(count as u32).to_ne_bytes());
    ioctl(sock, iface, buf.as_mut_ptr().cast())?;
    Ok(buf[12..]
        .chunks(ETH_GSTRING_LEN)
        .map(|c| {
            let end = c.iter().position(|&b| b == 0).unwrap_or(c.len());
            String::from_utf8_lossy(&c[..end]).into_owned()
        })
        .collect())
}

/// ETHTOOL_GFEATURES: per 32-bit block, (available, requested, active, never_changed).
fn feature_blocks(sock: &OwnedFd, iface: &str, blocks: usize) -> io::Result<Vec<[u32; 4]>> {
    let mut buf = vec![0u32; 2 + blocks * 4];
    buf[0] = ETHTOOL_GFEATURES;
    buf[1] = blocks as u32;
    ioctl(sock, iface, buf.as_mut_ptr().cast())?;
    Ok(buf[2..]
        .chunks(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect())
}

/// TSO, GSO and GRO of `iface` as `ethtool -k` shows them: a group is on when any of
/// its features is active.
pub fn segmentation_offloads(iface: &str) -> io::Result<(bool, bool, bool)> {
    let sock = control_socket()?;
    let names = feature_names(&sock, iface)?;
    let blocks = feature_blocks(&sock, iface, names.len().div_ceil(32))?;
    let mut on = [false; 3];
    for (bit, name) in names.iter().enumerate() {
        if let Some(g) = group_of(name) {
            on[g] |= blocks[bit / 32][2] & (1 << (bit % 32)) != 0;
        }
    }
    Ok((on[0], on[1], on[2]))
}

/// Turns TSO, GSO and GRO of `iface` on or off, as `ethtool -K IFACE tso X gso X gro X`
/// does: every changeable feature of the three groups, through ETHTOOL_SFEATURES.
pub fn set_segmentation_offloads(iface: &str, on: bool) -> io::Result<()> {
    set_features(iface, on, |name| group_of(name).is_some())
}

/// Turns UDP segmentation offload of `iface` on or off, as `ethtool -K IFACE
/// tx-udp-segmentation X` does. A device with it carries a UDP GSO send whole; one
/// without has the kernel cut it into its datagrams first, as a NIC without USO does.
pub fn set_udp_segmentation_offload(iface: &str, on: bool) -> io::Result<()> {
    set_features(iface, on, |name| name == "tx-udp-segmentation")
}

/// Sets every changeable feature of `iface` whose name `pick` takes, on or off.
fn set_features(iface: &str, on: bool, pick: impl Fn(&str) -> bool) -> io::Result<()> {
    let sock = control_socket()?;
    let names = feature_names(&sock, iface)?;
    let blocks = names.len().div_ceil(32);
    let avail = feature_blocks(&sock, iface, blocks)?;
    // struct ethtool_sfeatures { u32 cmd; u32 size; { u32 valid; u32 requested; }[] }
    let mut buf = vec![0u32; 2 + blocks * 2];
    buf[0] = ETHTOOL_SFEATURES;
    buf[1] = blocks as u32;
    for (bit, name) in names.iter().enumerate() {
        let (b, mask) = (bit / 32, 1u32 << (bit % 32));
        if pick(name) && avail[b][0] & mask != 0 {
            buf[2 + b * 2] |= mask;
            if on {
                buf[3 + b * 2] |= mask;
            }
        }
    }
    ioctl(&sock, iface, buf.as_mut_ptr().cast())
}

/// One `struct ethtool_value { cmd, data }` get.
fn value(sock: &OwnedFd, iface: &str, cmd: u32) -> io::Result<u32> {
    let mut v = [cmd, 0u32];
    ioctl(sock, iface, v.as_mut_ptr().cast())?;
    Ok(v[1])
}

/// SIOCETHTOOL on `iface` with `data` pointing at the command's struct.
fn ioctl(sock: &OwnedFd, iface: &str, data: *mut libc::c_char) -> io::Result<()> {
    let name = iface.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    // SAFETY: ifreq is plain old data (name array + union); all-zero is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, &src) in req.ifr_name.iter_mut().zip(name) {
        *dst = src as libc::c_char;
    }
    req.ifr_ifru.ifru_data = data;
    // SAFETY: `req` holds a NUL-terminated name and a pointer to a command struct that
    // the caller keeps alive and sized for that command for the duration of the call.
    let rc = unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCETHTOOL, &raw mut req) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn control_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket() takes no pointers; the result is checked.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_reports_offloads() {
        // lo advertises GSO/GRO/checksum features through ethtool on every kernel.
        let o = offloads("lo");
        assert!(o.gso.is_some(), "{o:?}");
        assert!(o.tx_csum.is_some(), "{o:?}");
    }

    #[test]
    fn feature_groups_follow_ethtool_names() {
        for (name, g) in [
            ("tx-tcp-segmentation", Some(0)),
            ("tx-tcp6-segmentation", Some(0)),
            ("tx-tcp-accecn-segmentation", Some(0)),
            ("tx-generic-segmentation", Some(1)),
            ("rx-gro", Some(2)),
            ("rx-gro-hw", None),
            ("tx-udp-segmentation", None),
        ] {
            assert_eq!(group_of(name), g, "{name}");
        }
        // lo has GSO/GRO features by name on every kernel.
        assert!(segmentation_offloads("lo").is_ok());
        assert!(segmentation_offloads("mtuperf-none0").is_err());
    }

    #[test]
    fn unknown_or_invalid_interfaces_give_none() {
        for name in [
            "mtuperf-none0",
            "",
            "a-name-longer-than-ifnamsiz",
            "bad\0name",
        ] {
            assert_eq!(offloads(name), Offloads::default(), "{name:?}");
            assert_eq!(pause(name), None, "{name:?}");
        }
        // Loopback has no pause frames.
        assert_eq!(pause("lo"), None);
    }
}
