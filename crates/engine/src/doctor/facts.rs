//! The reader: gathers [`HostFacts`] from the kernel. `snapshot_at` reads only files
//! below given roots (so the parsing is tested against fixture trees); `gather` adds
//! what only syscalls give (link kind, offloads, pause) and the counter sample.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mtuperf_proto::host::SnmpCounters;
use mtuperf_proto::msg::doctor::{Pause, ReadError};
use mtuperf_sys::{netdev, snmp, sysctl};

use super::{HostFacts, IfaceFacts};

/// Every sysctl the rules read (host-wide and per network namespace alike).
pub const SYSCTLS: &[&str] = &[
    "net.core.rmem_default",
    "net.core.rmem_max",
    "net.core.wmem_default",
    "net.core.wmem_max",
    "net.core.netdev_max_backlog",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_mtu_probing",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.ipfrag_high_thresh",
    "net.ipv4.ipfrag_low_thresh",
    "net.ipv4.ipfrag_time",
    "net.ipv4.conf.all.rp_filter",
];

/// Where the kernel files are: the real ones, or a fixture tree.
#[derive(Debug, Clone)]
pub struct Roots {
    /// Stands for /proc/sys.
    pub proc_sys: PathBuf,
    /// Stands for /sys/class/net.
    pub sys_class_net: PathBuf,
    /// Stands for /proc/net (snmp, snmp6).
    pub proc_net: PathBuf,
}

impl Roots {
    pub fn live() -> Roots {
        Roots {
            proc_sys: "/proc/sys".into(),
            sys_class_net: netdev::SYS_CLASS_NET.into(),
            proc_net: "/proc/net".into(),
        }
    }
}

/// Non-loopback interfaces with IFF_UP set, sorted by name.
pub fn up_interfaces_at(sys_class_net: &Path) -> Vec<String> {
    let Ok(dir) = fs::read_dir(sys_class_net) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != "lo" && is_up_at(sys_class_net, n) && !is_loopback(sys_class_net, n))
        .collect();
    names.sort();
    names
}

/// Every non-loopback interface under `sys_class_net` that exists but is not up, by
/// name.
pub fn down_interfaces_at(sys_class_net: &Path) -> Vec<String> {
    let Ok(dir) = fs::read_dir(sys_class_net) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != "lo" && !is_up_at(sys_class_net, n) && !is_loopback(sys_class_net, n))
        .collect();
    names.sort();
    names
}

fn is_up_at(root: &Path, iface: &str) -> bool {
    fs::read_to_string(root.join(iface).join("flags"))
        .ok()
        .and_then(|s| u32::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok())
        .is_some_and(|f| f & 1 != 0)
}

fn is_loopback(root: &Path, iface: &str) -> bool {
    fs::read_to_string(root.join(iface).join("type")).is_ok_and(|t| t.trim() == "772")
}

/// Files-only facts below `roots`: interface facts from sysfs, sysctls, snmp counters.
/// Interfaces that cannot be read are listed in `unreadable` under "iface.NAME".
pub fn snapshot_at(roots: &Roots, ifaces: &[String]) -> HostFacts {
    let mut facts = HostFacts::default();
    for name in SYSCTLS {
        match sysctl::read_at(&roots.proc_sys, name) {
            Ok(v) => {
                facts.sysctls.insert((*name).into(), collapse(&v));
            }
            Err(e) => {
                facts.unreadable.insert((*name).into(), read_error(e));
            }
        }
    }
    for name in ifaces {
        match netdev::iface_info_at(&roots.sys_class_net, name) {
            Ok(info) => facts.ifaces.push(IfaceFacts {
                info,
                up: is_up_at(&roots.sys_class_net, name),
                pause: None,
                counters: netdev::counters_at(&roots.sys_class_net, name).ok(),
                counters_delta: None,
                rp_filter: sysctl::read_parts_at(
                    &roots.proc_sys,
                    &["net", "ipv4", "conf", name, "rp_filter"],
                )
                .ok()
                .and_then(|v| v.trim().parse().ok()),
                steering: None,
            }),
            Err(e) => {
                facts
                    .unreadable
                    .insert(format!("iface.{name}"), read_error(e));
            }
        }
    }
    facts.snmp = snmp_at(&roots.proc_net);
    facts
}

/// /proc/net/snmp plus /proc/net/snmp6 (when present) below `proc_net`, summed.
pub fn snmp_at(proc_net: &Path) -> Option<SnmpCounters> {
    let v4 = fs::read_to_string(proc_net.join("snmp")).ok()?;
    let mut c = snmp::parse(&v4);
    if let Ok(v6) = fs::read_to_string(proc_net.join("snmp6")) {
        let s = snmp::parse6(&v6);
        c.ip_reasm_fails += s.ip_reasm_fails;
        c.ip_reasm_timeout += s.ip_reasm_timeout;
        c.ip_reasm_reqds += s.ip_reasm_reqds;
        c.ip_reasm_oks += s.ip_reasm_oks;
        c.ip_frag_creates += s.ip_frag_creates;
        c.ip_frag_oks += s.ip_frag_oks;
        c.ip_frag_fails += s.ip_frag_fails;
        c.udp_in_datagrams += s.udp_in_datagrams;
        c.udp_out_datagrams += s.udp_out_datagrams;
        c.udp_in_errors += s.udp_in_errors;
        c.udp_rcvbuf_errors += s.udp_rcvbuf_errors;
        c.udp_sndbuf_errors += s.udp_sndbuf_errors;
    }
    Some(c)
}

/// The live host: [`snapshot_at`] on the real roots, enriched with the link kind and
/// offloads (rtnetlink, ethtool) and pause parameters, then a counter sample of
/// `sample` (skipped when zero).
pub fn gather(ifaces: &[String], selection: &str, sample: Duration) -> HostFacts {
    let roots = Roots::live();
    let mut facts = snapshot_at(&roots, ifaces);
    facts.hostname = mtuperf_sys::host::identity(crate::stamp::SOFTWARE).hostname;
    facts.selection = selection.into();
    for f in &mut facts.ifaces {
        if let Ok(info) = netdev::iface_info(&f.info.name) {
            f.info = info;
        }
        f.pause = mtuperf_sys::ethtool::pause(&f.info.name).map(|(autoneg, rx, tx)| Pause {
            autoneg,
            rx,
            tx,
        });
        f.steering = Some(super::steering::read(&f.info.name));
    }
    facts.irqbalance = mtuperf_sys::affinity::irqbalance_running();
    facts.rps_sock_flow_entries =
        sysctl::read_at(&roots.proc_sys, "net.core.rps_sock_flow_entries")
            .ok()
            .and_then(|v| v.trim().parse().ok());
    if !sample.is_zero() {
        std::thread::sleep(sample);
        let later = snapshot_at(&roots, ifaces);
        facts.sample_ms = sample.as_millis() as u64;
        facts.snmp_delta = match (later.snmp, facts.snmp) {
            (Some(b), Some(a)) => Some(b.delta(&a)),
            _ => None,
        };
        for f in &mut facts.ifaces {
            let after = later
                .ifaces
                .iter()
                .find(|l| l.info.name == f.info.name)
                .and_then(|l| l.counters);
            f.counters_delta = match (after, f.counters) {
                (Some(b), Some(a)) => Some(b.delta(&a)),
                _ => None,
            };
        }
    }
    facts
}

fn collapse(v: &str) -> String {
    v.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A reader's error as the facts carry it: the file and what went wrong, typed.
fn read_error(e: mtuperf_sys::Error) -> ReadError {
    use std::io::ErrorKind;
    match e {
        mtuperf_sys::Error::Read { path, source } => {
            let path = path.display().to_string();
            match (source.kind(), source.raw_os_error()) {
                (ErrorKind::NotFound, _) => ReadError::NotFound { path },
                (ErrorKind::PermissionDenied, _) => ReadError::PermissionDenied { path },
                (_, Some(errno)) => ReadError::Os { path, errno },
                (_, None) => ReadError::Other {
                    path,
                    error: source.to_string(),
                },
            }
        }
        mtuperf_sys::Error::Parse { path, what } => ReadError::Unparsable {
            path: path.display().to_string(),
            what,
        },
        // Not a file's error (the readers of facts read files only).
        other => ReadError::Other {
            path: String::new(),
            error: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::{read_error, ReadError};

    #[test]
    fn each_read_failure_is_typed_by_what_went_wrong() {
        let read = |source: io::Error| mtuperf_sys::Error::Read {
            path: "/proc/sys/net/core/rmem_max".into(),
            source,
        };
        let path = || "/proc/sys/net/core/rmem_max".to_string();
        let cases = [
            (
                read(io::Error::from_raw_os_error(libc::ENOENT)),
                ReadError::NotFound { path: path() },
            ),
            (
                read(io::Error::from_raw_os_error(libc::EACCES)),
                ReadError::PermissionDenied { path: path() },
            ),
            (
                read(io::Error::from_raw_os_error(libc::EISDIR)),
                ReadError::Os {
                    path: path(),
                    errno: libc::EISDIR,
                },
            ),
            (
                read(io::Error::new(io::ErrorKind::InvalidData, "not UTF-8")),
                ReadError::Other {
                    path: path(),
                    error: "not UTF-8".into(),
                },
            ),
            (
                mtuperf_sys::Error::Parse {
                    path: "/sys/class/net/eth0/mtu".into(),
                    what: "not a counter: \"x\"".into(),
                },
                ReadError::Unparsable {
                    path: "/sys/class/net/eth0/mtu".into(),
                    what: "not a counter: \"x\"".into(),
                },
            ),
        ];
        for (e, want) in cases {
            assert_eq!(read_error(e), want);
        }
    }
}
