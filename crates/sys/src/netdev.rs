//! Network interfaces: counters and facts from /sys/class/net, the interface that
//! owns a local address, and index/name conversion.

mod addr;
mod addrs;
pub(crate) mod info;

use std::ffi::CStr;
use std::fs;
use std::path::{Path, PathBuf};

use mtuperf_proto::host::IfaceCounters;

use crate::Error;

pub use addr::iface_with_addr;
pub use addrs::addresses;
pub use info::{iface_info, iface_info_at};

/// Where the kernel lists network interfaces.
pub const SYS_CLASS_NET: &str = "/sys/class/net";

/// rx/tx packets, bytes, errors and drops of `iface`.
pub fn counters(iface: &str) -> Result<IfaceCounters, Error> {
    counters_at(Path::new(SYS_CLASS_NET), iface)
}

/// [`counters`] below another root standing for /sys/class/net (fixture trees).
pub fn counters_at(root: &Path, iface: &str) -> Result<IfaceCounters, Error> {
    let dir = iface_dir(root, iface)?.join("statistics");
    let get = |name: &str| read_u64(&dir.join(name));
    Ok(IfaceCounters {
        rx_packets: get("rx_packets")?,
        tx_packets: get("tx_packets")?,
        rx_bytes: get("rx_bytes")?,
        tx_bytes: get("tx_bytes")?,
        rx_errors: get("rx_errors")?,
        tx_errors: get("tx_errors")?,
        rx_dropped: get("rx_dropped")?,
        tx_dropped: get("tx_dropped")?,
    })
}

/// The interface's directory, refusing names that would escape `root`.
fn iface_dir(root: &Path, iface: &str) -> Result<PathBuf, Error> {
    let dir = root.join(iface);
    if iface.is_empty() || iface == "." || iface == ".." || iface.contains('/') {
        let source =
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "invalid interface name");
        return Err(Error::read(dir, source));
    }
    Ok(dir)
}

fn read_trimmed(path: &Path) -> Result<String, Error> {
    fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| Error::read(path, e))
}

fn read_u64(path: &Path) -> Result<u64, Error> {
    let text = read_trimmed(path)?;
    text.parse()
        .map_err(|_| Error::parse(path, format!("not a counter: {text:?}")))
}

/// The name of the interface with index `index` (if_indextoname).
pub fn index_to_name(index: u32) -> Option<String> {
    let mut buf = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: `buf` has IF_NAMESIZE bytes, the size if_indextoname requires.
    let p = unsafe { libc::if_indextoname(index, buf.as_mut_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: on success the kernel wrote a NUL-terminated name into `buf`.
    let name = unsafe { CStr::from_ptr(buf.as_ptr()) };
    Some(name.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `files` (relative path, content) under a new temporary directory.
    pub(crate) fn sys_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (rel, body) in files {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, body).unwrap();
        }
        dir
    }

    const STATS: [(&str, &str); 8] = [
        ("eth1/statistics/rx_packets", "1000\n"),
        ("eth1/statistics/tx_packets", "2000\n"),
        ("eth1/statistics/rx_bytes", "9000000\n"),
        ("eth1/statistics/tx_bytes", "18000000\n"),
        ("eth1/statistics/rx_errors", "3\n"),
        ("eth1/statistics/tx_errors", "0\n"),
        ("eth1/statistics/rx_dropped", "17\n"),
        ("eth1/statistics/tx_dropped", "1\n"),
    ];

    #[test]
    fn reads_counters_from_a_fixture_tree() {
        let dir = sys_tree(&STATS);
        let c = counters_at(dir.path(), "eth1").unwrap();
        let want = IfaceCounters {
            rx_packets: 1000,
            tx_packets: 2000,
            rx_bytes: 9_000_000,
            tx_bytes: 18_000_000,
            rx_errors: 3,
            tx_errors: 0,
            rx_dropped: 17,
            tx_dropped: 1,
        };
        assert_eq!(c, want);
    }

    #[test]
    fn bad_trees_are_errors() {
        let mut bad = STATS;
        bad[4].1 = "lots\n";
        let cases: [(&[(&str, &str)], &str); 4] = [
            (&bad, "eth1"),
            (&STATS[..3], "eth1"),
            (&STATS, "eth9"),
            (&STATS, "../eth1"),
        ];
        for (files, iface) in cases {
            let dir = sys_tree(files);
            assert!(counters_at(dir.path(), iface).is_err(), "{iface} {files:?}");
        }
    }

    #[test]
    fn loopback_counters_and_index() {
        let before = counters("lo").unwrap();
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.send_to(b"count me", sock.local_addr().unwrap())
            .unwrap();
        let after = counters("lo").unwrap();
        assert!(after.tx_packets > before.tx_packets);
        assert!(after.rx_bytes >= before.rx_bytes + 8);
        assert_eq!(index_to_name(1).as_deref(), Some("lo"));
        assert_eq!(index_to_name(0), None);
    }
}
