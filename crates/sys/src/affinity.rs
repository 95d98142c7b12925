//! CPU placement: pinning the calling thread (sched_setaffinity), the online CPUs,
//! the CPU a thread last ran on (/proc/self/task/TID/stat field 39), per-CPU NET_RX
//! softirq counts (/proc/softirqs) and the IRQ affinity of an interface's queues
//! (/proc/interrupts names, /proc/irq/N/smp_affinity_list).

use std::fs;

use mtuperf_proto::placement::{parse_cpu_list, IrqAffinity};
use nix::sched::{sched_setaffinity, CpuSet};
use nix::unistd::Pid;

use crate::Error;

const ONLINE: &str = "/sys/devices/system/cpu/online";
const SOFTIRQS: &str = "/proc/softirqs";
const INTERRUPTS: &str = "/proc/interrupts";

/// Pins the calling thread to `cpus` (it may run on any of them).
pub fn pin_current_thread(cpus: &[u32]) -> Result<(), Error> {
    let sys = |source: std::io::Error| Error::Sys {
        op: "sched_setaffinity",
        subject: format!("CPUs {cpus:?}"),
        source,
    };
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c as usize)
            .map_err(|e| sys(std::io::Error::from_raw_os_error(e as i32)))?;
    }
    sched_setaffinity(Pid::from_raw(0), &set)
        .map_err(|e| sys(std::io::Error::from_raw_os_error(e as i32)))
}

/// The calling thread's kernel thread id.
pub fn current_tid() -> i32 {
    nix::unistd::gettid().as_raw()
}

/// The host's online CPUs (/sys/devices/system/cpu/online); when that cannot be
/// read, 0 to sysconf(_SC_NPROCESSORS_ONLN) - 1.
pub fn online_cpus() -> Vec<u32> {
    fs::read_to_string(ONLINE)
        .ok()
        .and_then(|s| parse_cpu_list(&s).ok())
        .unwrap_or_else(|| (0..crate::cpu::online_cpus()).collect())
}

/// The CPU thread `tid` of this process last ran on.
pub fn thread_last_cpu(tid: i32) -> Result<u32, Error> {
    let path = format!("/proc/self/task/{tid}/stat");
    let text = fs::read_to_string(&path).map_err(|e| Error::read(&path, e))?;
    parse_stat_processor(&text).ok_or_else(|| Error::parse(&path, "no field 39 (processor)"))
}

/// Field 39 (`processor`) of a /proc/PID/stat line. The command name (field 2) is in
/// parentheses and may hold spaces and parentheses: fields are counted after the
/// last `)`, which is field 2's end, so field 3 is the first one after it.
pub fn parse_stat_processor(text: &str) -> Option<u32> {
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(39 - 3)?.parse().ok()
}

/// NET_RX softirqs handled so far, per CPU (index = CPU number), from /proc/softirqs.
pub fn net_rx_softirqs() -> Result<Vec<u64>, Error> {
    let text = fs::read_to_string(SOFTIRQS).map_err(|e| Error::read(SOFTIRQS, e))?;
    parse_softirqs(&text, "NET_RX").ok_or_else(|| Error::parse(SOFTIRQS, "no NET_RX row"))
}

/// The per-CPU counts of one row of /proc/softirqs (`NET_RX:  12  34`).
pub fn parse_softirqs(text: &str, row: &str) -> Option<Vec<u64>> {
    let line = text.lines().find(|l| {
        l.trim_start()
            .strip_prefix(row)
            .is_some_and(|r| r.starts_with(':'))
    })?;
    let (_, counts) = line.split_once(':')?;
    counts
        .split_whitespace()
        .map(|c| c.parse().ok())
        .collect::<Option<Vec<u64>>>()
}

/// The IRQs of `iface`'s queues, with their affinity lists: those whose
/// /proc/interrupts name is the interface's (`eth0-TxRx-0`) or its device's
/// (`virtio2-input.0`, the device being /sys/class/net/IF/device). Empty for
/// interfaces without interrupts (veth, loopback, bridges).
pub fn iface_irqs(iface: &str) -> Vec<IrqAffinity> {
    let Ok(text) = fs::read_to_string(INTERRUPTS) else {
        return Vec::new();
    };
    if iface.contains('/') || iface.starts_with('.') {
        return Vec::new();
    }
    let device = fs::read_link(format!("/sys/class/net/{iface}/device"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    let mut irqs = parse_interrupts(&text, iface);
    if let Some(dev) = device.filter(|d| d != iface) {
        irqs.extend(parse_interrupts(&text, &dev));
    }
    irqs.sort_unstable();
    irqs.dedup();
    irqs.into_iter()
        .map(|(irq, name)| {
            let cpus = fs::read_to_string(format!("/proc/irq/{irq}/smp_affinity_list"))
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            IrqAffinity { irq, name, cpus }
        })
        .collect()
}

/// `(irq, name)` of every numbered line of /proc/interrupts whose last field names
/// one of `iface`'s queues.
pub fn parse_interrupts(text: &str, iface: &str) -> Vec<(u32, String)> {
    if iface.is_empty() {
        return Vec::new();
    }
    text.lines()
        .filter_map(|l| {
            let (num, _) = l.trim_start().split_once(':')?;
            let irq: u32 = num.trim().parse().ok()?;
            let name = l.split_whitespace().last()?;
            let ours = name == iface
                || name
                    .strip_prefix(iface)
                    .is_some_and(|r| r.starts_with('-') || r.starts_with('@'));
            ours.then(|| (irq, name.to_string()))
        })
        .collect()
}

/// Receive packet steering of each rx queue of `iface`, in queue order:
/// `(rps_cpus mask as the kernel writes it, rps_flow_cnt)` from
/// /sys/class/net/IF/queues/rx-N/. Empty when the interface has no queue directory.
pub fn rx_steering(iface: &str) -> Vec<(String, u32)> {
    if iface.contains('/') || iface.starts_with('.') {
        return Vec::new();
    }
    let dir = format!("/sys/class/net/{iface}/queues");
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut queues: Vec<(u32, String, u32)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n: u32 = name.strip_prefix("rx-")?.parse().ok()?;
            let read = |f: &str| fs::read_to_string(e.path().join(f)).ok();
            let mask = read("rps_cpus").map_or_else(String::new, |s| s.trim().to_string());
            let flows = read("rps_flow_cnt")
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0);
            Some((n, mask, flows))
        })
        .collect();
    queues.sort_unstable();
    queues.into_iter().map(|(_, m, f)| (m, f)).collect()
}

/// Whether a process named `irqbalance` runs (any /proc/PID/comm); None when /proc
/// cannot be listed.
pub fn irqbalance_running() -> Option<bool> {
    let entries = fs::read_dir("/proc").ok()?;
    Some(entries.filter_map(Result::ok).any(|e| {
        e.file_name()
            .to_string_lossy()
            .bytes()
            .all(|b| b.is_ascii_digit())
            && fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "irqbalance")
    }))
}

/// Whether a kernel CPU mask (`00000000,00000003`, as rps_cpus holds it) is all zero.
pub fn mask_is_empty(mask: &str) -> bool {
    mask.chars().all(|c| c == '0' || c == ',')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_field_39_is_counted_after_the_command_name() {
        let mut fields: Vec<String> = (3..=52).map(|i| i.to_string()).collect();
        fields[39 - 3] = "7".into();
        let line = format!("1234 (a) b (c)) {}", fields.join(" "));
        assert_eq!(parse_stat_processor(&line), Some(7));
        assert_eq!(parse_stat_processor("1 (x) S 1 2"), None);
        assert_eq!(parse_stat_processor("no parenthesis"), None);
    }

    #[test]
    fn softirqs_row_is_read_per_cpu() {
        let t = "                    CPU0       CPU1\n          HI:          0          0\n      NET_TX:    13   11\n      NET_RX:  107   86\n";
        assert_eq!(parse_softirqs(t, "NET_RX"), Some(vec![107, 86]));
        assert_eq!(parse_softirqs(t, "NET"), None);
        assert_eq!(parse_softirqs(t, "BLOCK"), None);
    }

    #[test]
    fn interrupts_of_an_interface_are_its_queues_only() {
        let t = "           CPU0       CPU1\n  24:   10   0  PCI-MSI 1-edge  eth0-TxRx-0\n  25:   0   10  PCI-MSI 2-edge  eth0-TxRx-1\n  26:   1   1  PCI-MSI 3-edge  eth01\n  27:  5  5  PCI-MSI 4-edge  eth0\nNMI:   0   0   Non-maskable interrupts\n";
        let got = parse_interrupts(t, "eth0");
        assert_eq!(
            got,
            vec![
                (24, "eth0-TxRx-0".to_string()),
                (25, "eth0-TxRx-1".to_string()),
                (27, "eth0".to_string())
            ]
        );
        assert!(parse_interrupts(t, "").is_empty());
    }

    #[test]
    fn steering_of_loopback_and_masks() {
        // lo has one rx queue with RPS off by default; a bad name reads nothing.
        assert!(rx_steering("../etc").is_empty());
        assert!(mask_is_empty("00000000,00000000"));
        assert!(!mask_is_empty("00000000,00000003"));
        assert!(irqbalance_running().is_some());
    }

    #[test]
    fn a_pinned_thread_runs_where_it_was_pinned() {
        let online = online_cpus();
        assert!(!online.is_empty());
        let last = *online.last().unwrap();
        let seen = std::thread::spawn(move || {
            pin_current_thread(&[last]).unwrap();
            // Spin a little so the kernel has moved us if it had to.
            let t = std::time::Instant::now();
            while t.elapsed() < std::time::Duration::from_millis(5) {
                std::hint::black_box(0);
            }
            thread_last_cpu(current_tid()).unwrap()
        })
        .join()
        .unwrap();
        assert_eq!(seen, last);
        assert!(net_rx_softirqs().unwrap().len() >= online.len());
    }
}
