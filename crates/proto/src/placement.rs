//! CPU placement: the CPU lists people write (`0-3,6`), and what one end of a test
//! records of where its threads and its receive softirq ran. Plain data and pure
//! parsing; `mtuperf-sys` reads the kernel, the engine samples during the run.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Highest CPU number a list may name (the kernel's own limit is 8192 CPUs).
pub const MAX_CPU: u32 = 8191;

/// Why a CPU list was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuListError(pub String);

impl fmt::Display for CpuListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CpuListError {}

/// Parses a kernel-style CPU list (`0`, `0-3`, `0,2,4-7`) into sorted, distinct CPU
/// numbers. Empty items, reversed ranges and numbers above [`MAX_CPU`] are refused.
pub fn parse_cpu_list(s: &str) -> Result<Vec<u32>, CpuListError> {
    let mut cpus = Vec::new();
    let s = s.trim();
    if s.is_empty() {
        return Err(CpuListError("empty CPU list".into()));
    }
    for item in s.split(',') {
        let item = item.trim();
        let num = |t: &str| -> Result<u32, CpuListError> {
            let n: u32 = t
                .trim()
                .parse()
                .map_err(|_| CpuListError(format!("{t:?} is not a CPU number")))?;
            if n > MAX_CPU {
                return Err(CpuListError(format!("CPU {n} is above {MAX_CPU}")));
            }
            Ok(n)
        };
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(CpuListError(format!(
                        "range {item:?} runs backwards (write {b}-{a})"
                    )));
                }
                cpus.extend(a..=b);
            }
            None if item.is_empty() => {
                return Err(CpuListError("empty item in CPU list".into()));
            }
            None => cpus.push(num(item)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Formats sorted CPU numbers the kernel's way: `0-3,6`.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&start) = cpus.get(i) {
        let mut end = start;
        while cpus.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        out.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(",")
}

/// What a test thread does; its JSON name is the word in lower case ("requester").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThreadRole {
    /// Sends a stream's data.
    Sender,
    /// Receives a stream's data.
    Receiver,
    /// Sends rr requests and takes their answers.
    Requester,
    /// Answers rr requests.
    Responder,
}

impl ThreadRole {
    pub const ALL: [ThreadRole; 4] = [
        ThreadRole::Sender,
        ThreadRole::Receiver,
        ThreadRole::Requester,
        ThreadRole::Responder,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ThreadRole::Sender => "sender",
            ThreadRole::Receiver => "receiver",
            ThreadRole::Requester => "requester",
            ThreadRole::Responder => "responder",
        }
    }
}

impl fmt::Display for ThreadRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ThreadRole {
    type Err = String;

    fn from_str(s: &str) -> Result<ThreadRole, String> {
        ThreadRole::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                format!("unknown thread role {s:?}; one of sender, receiver, requester, responder")
            })
    }
}

/// Where one test thread ran: the CPUs it was seen on while sampled, with how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThreadPlacement {
    /// What the thread did.
    pub role: ThreadRole,
    /// `[cpu, samples]`: the CPU it last ran on (/proc/self/task/TID/stat field 39)
    /// at each sample, counted per CPU.
    pub cpus: Vec<[u32; 2]>,
    /// The one CPU the tool itself pinned this thread to when the end had no
    /// `--cpu`/`--agent-cpu` (rr over TCP: one thread per CPU, connections steered to
    /// the CPU that receives them). Null: the thread was not pinned by the tool.
    pub pinned: Option<u32>,
}

/// The IRQ affinity of one of the test interface's queues.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IrqAffinity {
    pub irq: u32,
    /// The name in /proc/interrupts (e.g. `eth0-TxRx-0`).
    pub name: String,
    /// /proc/irq/N/smp_affinity_list, as the kernel writes it.
    pub cpus: String,
}

/// Softirq time each CPU spent during a test (/proc/stat's per-CPU softirq column
/// deltas, host-wide like `net_rx`), in USER_HZ ticks: coarse, so its resolution
/// goes with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SoftirqTime {
    /// One tick in ns (1 / USER_HZ: 10 ms).
    pub tick_ns: u64,
    /// `[cpu, ticks]`, CPUs that counted none left out.
    pub per_cpu: Vec<[u64; 2]>,
    /// Each CPU's count is uncertain by ± this many ticks (its counter may have been
    /// partway into a tick at either reading); a sum over n CPUs by ± n.
    pub plus_minus_ticks_per_cpu: u64,
}

impl SoftirqTime {
    /// Ticks over all CPUs.
    pub fn ticks(&self) -> u64 {
        self.per_cpu.iter().map(|c| c[1]).sum()
    }

    /// The CPU that spent most softirq time.
    pub fn main_cpu(&self) -> Option<u32> {
        self.per_cpu
            .iter()
            .filter(|c| c[1] > 0)
            .max_by_key(|c| c[1])
            .map(|c| c[0] as u32)
    }
}

/// Where one end's test threads and its receive processing ran during a test.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// The CPUs the test threads were pinned to (null: not pinned).
    pub pinned: Option<Vec<u32>>,
    /// The host's online CPUs.
    pub online: Vec<u32>,
    /// Every test thread, sampled every `sample_ms` during the run (a thread that
    /// ended before the sampler's next turn counts the CPU it entered on, once).
    pub threads: Vec<ThreadPlacement>,
    pub sample_ms: u32,
    /// NET_RX softirqs each CPU handled during the run (/proc/softirqs deltas), as
    /// `[cpu, count]`, CPUs with none left out. Host-wide: other traffic counts too.
    pub net_rx: Vec<[u64; 2]>,
    /// The test interface's queue IRQs and their affinity (empty: the interface has
    /// none, as veth and loopback).
    pub irqs: Vec<IrqAffinity>,
    /// Pinning or sampling failures (pinning that failed leaves the thread unpinned).
    pub errors: Vec<String>,
    /// Softirq time per CPU over the run (null when /proc/stat could not be read).
    pub softirq: Option<SoftirqTime>,
}

impl Placement {
    /// Every CPU any test thread was seen on, sorted.
    pub fn thread_cpus(&self) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .threads
            .iter()
            .flat_map(|t| t.cpus.iter().map(|c| c[0]))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The CPU the test threads were seen on most, over all samples.
    pub fn main_cpu(&self) -> Option<u32> {
        let mut per: Vec<[u32; 2]> = Vec::new();
        for c in self.threads.iter().flat_map(|t| t.cpus.iter()) {
            match per.iter_mut().find(|p| p[0] == c[0]) {
                Some(p) => p[1] += c[1],
                None => per.push(*c),
            }
        }
        per.iter()
            .max_by_key(|p| (p[1], u32::MAX - p[0]))
            .map(|p| p[0])
    }

    /// The CPU that handled most NET_RX softirqs during the run.
    pub fn main_rx_cpu(&self) -> Option<u32> {
        self.net_rx
            .iter()
            .filter(|c| c[1] > 0)
            .max_by_key(|c| c[1])
            .map(|c| c[0] as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_the_kernel_way_and_bad_ones_say_why() {
        let ok: &[(&str, &[u32])] = &[
            ("0", &[0]),
            ("1,0", &[0, 1]),
            ("0-3,6", &[0, 1, 2, 3, 6]),
            (" 2 , 2-3 ", &[2, 3]),
        ];
        for (s, want) in ok {
            assert_eq!(parse_cpu_list(s).as_deref(), Ok(*want), "{s}");
        }
        let bad: &[(&str, &str)] = &[
            ("", "empty"),
            ("0,,1", "empty item"),
            ("3-1", "backwards"),
            ("x", "not a CPU"),
            ("-1", "not a CPU"),
            ("9000", "above"),
        ];
        for (s, why) in bad {
            let e = parse_cpu_list(s).unwrap_err();
            assert!(e.0.contains(why), "{s}: {e}");
        }
    }

    #[test]
    fn lists_format_as_ranges() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(format_cpu_list(&[1]), "1");
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[0, 2, 3]), "0,2-3");
    }

    #[test]
    fn thread_roles_keep_their_names_in_text_and_json() {
        let names = ["sender", "receiver", "requester", "responder"];
        for (role, name) in ThreadRole::ALL.into_iter().zip(names) {
            assert_eq!(role.to_string(), name);
            assert_eq!(name.parse::<ThreadRole>(), Ok(role));
            let json = serde_json::to_string(&role).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<ThreadRole>(&json).unwrap(), role);
        }
    }

    #[test]
    fn an_unknown_thread_role_is_refused_by_name() {
        assert_eq!(
            "spinner".parse::<ThreadRole>().unwrap_err(),
            r#"unknown thread role "spinner"; one of sender, receiver, requester, responder"#
        );
        let doc = r#"{"role":"spinner","cpus":[]}"#;
        let e = serde_json::from_str::<ThreadPlacement>(doc).unwrap_err();
        assert!(e.to_string().contains("unknown variant `spinner`"), "{e}");
    }

    #[test]
    fn main_cpu_counts_samples_over_all_threads() {
        let p = Placement {
            threads: vec![
                ThreadPlacement {
                    role: ThreadRole::Requester,
                    cpus: vec![[0, 3], [1, 1]],
                    pinned: None,
                },
                ThreadPlacement {
                    role: ThreadRole::Responder,
                    cpus: vec![[1, 3]],
                    pinned: None,
                },
            ],
            net_rx: vec![[0, 5], [1, 9]],
            ..Placement::default()
        };
        assert_eq!(p.main_cpu(), Some(1));
        assert_eq!(p.thread_cpus(), vec![0, 1]);
        assert_eq!(p.main_rx_cpu(), Some(1));
    }
}
