//! Offload and pause settings through the legacy SIOCETHTOOL ioctl.

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
