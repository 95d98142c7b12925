//! CPU times: the aggregate `cpu` line of /proc/stat, this process's getrusage, and
//! the number of online CPUs.

use std::fs;
use std::io;

use mtuperf_proto::host::{CpuSample, ProcessCpu, SystemCpu};

use crate::Error;

const PROC_STAT: &str = "/proc/stat";

/// Reads /proc/stat's aggregate "cpu" line (USER_HZ ticks converted to ns with
/// sysconf(_SC_CLK_TCK)), getrusage(RUSAGE_SELF) and the online CPU count.
pub fn sample() -> Result<CpuSample, Error> {
    let text = fs::read_to_string(PROC_STAT).map_err(|e| Error::read(PROC_STAT, e))?;
    let system = parse_proc_stat(&text, clk_tck())
        .ok_or_else(|| Error::parse(PROC_STAT, "no aggregate \"cpu\" line"))?;
    let process = process_cpu().map_err(|source| Error::Sys {
        op: "getrusage",
        subject: "RUSAGE_SELF".into(),
        source,
    })?;
    Ok(CpuSample {
        system,
        process,
        ncpu: online_cpus(),
    })
}

/// Parses the aggregate `cpu` line of /proc/stat. Fields missing on old kernels
/// (steal and later) count as zero; `None` when the line is absent or malformed.
pub fn parse_proc_stat(text: &str, clk_tck: u64) -> Option<SystemCpu> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("cpu"))?;
    let ticks: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    if ticks.len() < 4 || clk_tck == 0 {
        return None;
    }
    let ns = |i: usize| {
        let t = ticks.get(i).copied().unwrap_or(0);
        // u128 so that huge counts cannot overflow; saturate on the way back.
        u64::try_from(u128::from(t) * 1_000_000_000 / u128::from(clk_tck)).unwrap_or(u64::MAX)
    };
    Some(SystemCpu {
        user_ns: ns(0),
        nice_ns: ns(1),
        system_ns: ns(2),
        idle_ns: ns(3),
        iowait_ns: ns(4),
        irq_ns: ns(5),
        softirq_ns: ns(6),
        steal_ns: ns(7),
    })
}

/// USER_HZ, the unit of /proc/stat (100 on every mainstream Linux build).
pub fn clk_tck() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions; it only reads a constant.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(v).ok().filter(|&v| v > 0).unwrap_or(100)
}

/// Number of online CPUs (at least 1).
pub fn online_cpus() -> u32 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u32::try_from(v).ok().filter(|&v| v > 0).unwrap_or(1)
}

/// This process's user and system CPU time from getrusage(RUSAGE_SELF).
pub fn process_cpu() -> io::Result<ProcessCpu> {
    rusage(libc::RUSAGE_SELF)
}

/// The calling thread's user and system CPU time since it started, from
/// getrusage(RUSAGE_THREAD) (Linux; µs resolution).
pub fn thread_cpu() -> io::Result<ProcessCpu> {
    rusage(libc::RUSAGE_THREAD)
}

const THREAD_SCHEDSTAT: &str = "/proc/thread-self/schedstat";

/// The calling thread's time on CPU in ns since it started, from the first field of
/// /proc/thread-self/schedstat (the scheduler's own runtime: ns, no tick quantum;
/// getrusage(RUSAGE_THREAD) is the same time split into user and system and rounded
/// to µs). Needs CONFIG_SCHED_INFO (or schedstats), as every mainstream kernel has.
pub fn thread_sched_ns() -> Result<u64, Error> {
    let text =
        fs::read_to_string(THREAD_SCHEDSTAT).map_err(|e| Error::read(THREAD_SCHEDSTAT, e))?;
    parse_schedstat(&text).ok_or_else(|| Error::parse(THREAD_SCHEDSTAT, "no run time field"))
}

/// The first field of a schedstat line (`187940 1236543 2`): ns on CPU.
pub fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Softirq time each CPU has spent so far, in USER_HZ ticks (index = CPU number),
/// from the softirq column of /proc/stat's `cpuN` lines.
pub fn softirq_ticks() -> Result<Vec<u64>, Error> {
    let text = fs::read_to_string(PROC_STAT).map_err(|e| Error::read(PROC_STAT, e))?;
    parse_softirq_ticks(&text).ok_or_else(|| Error::parse(PROC_STAT, "no per-CPU softirq column"))
}

/// The softirq column (the 7th count) of each `cpuN` line, indexed by N (CPUs
/// without a line, being offline, read 0). None when there is no such line or one
/// is malformed.
pub fn parse_softirq_ticks(text: &str) -> Option<Vec<u64>> {
    let mut out: Vec<u64> = Vec::new();
    let mut any = false;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let Some(cpu) = f.next().and_then(|n| n.strip_prefix("cpu")) else {
            continue;
        };
        if cpu.is_empty() {
            continue;
        }
        let n: usize = cpu.parse().ok()?;
        if n > mtuperf_proto::placement::MAX_CPU as usize {
            return None;
        }
        let ticks: u64 = f.nth(6)?.parse().ok()?;
        if out.len() <= n {
            out.resize(n + 1, 0);
        }
        out[n] = ticks;
        any = true;
    }
    any.then_some(out)
}

fn rusage(who: libc::c_int) -> io::Result<ProcessCpu> {
    // SAFETY: rusage is plain old data; all-zero is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is a valid, writable rusage that outlives the call.
    if unsafe { libc::getrusage(who, &raw mut ru) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let ns = |tv: libc::timeval| {
        let s = u64::try_from(tv.tv_sec).unwrap_or(0);
        let us = u64::try_from(tv.tv_usec).unwrap_or(0);
        s.saturating_mul(1_000_000_000).saturating_add(us * 1000)
    };
    Ok(ProcessCpu {
        user_ns: ns(ru.ru_utime),
        system_ns: ns(ru.ru_stime),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT_6X: &str = include_str!("../tests/fixtures/proc_stat");

    #[test]
    fn parses_aggregate_line() {
        let cases: &[(&str, u64, Option<SystemCpu>)] = &[
            (
                STAT_6X,
                100,
                Some(SystemCpu {
                    user_ns: 102_540_000_000,
                    nice_ns: 0,
                    system_ns: 20_900_000_000,
                    idle_ns: 697_610_000_000,
                    iowait_ns: 3_740_000_000,
                    irq_ns: 0,
                    softirq_ns: 700_000_000,
                    steal_ns: 110_000_000,
                }),
            ),
            // Old kernel: only user nice system idle.
            (
                "cpu 1 2 3 4\n",
                1000,
                Some(SystemCpu {
                    user_ns: 1_000_000,
                    nice_ns: 2_000_000,
                    system_ns: 3_000_000,
                    idle_ns: 4_000_000,
                    ..SystemCpu::default()
                }),
            ),
            ("cpu0 1 2 3 4\n", 100, None),
            ("cpu 1 2 x 4\n", 100, None),
            ("cpu 1 2\n", 100, None),
            ("cpu 1 2 3 4\n", 0, None),
            ("", 100, None),
        ];
        for (text, hz, want) in cases {
            assert_eq!(parse_proc_stat(text, *hz), *want, "input {text:?}");
        }
    }

    #[test]
    fn huge_tick_counts_do_not_overflow() {
        let got = parse_proc_stat(&format!("cpu {} 0 0 0\n", u64::MAX / 2), 100).unwrap();
        assert_eq!(got.user_ns, u64::MAX);
    }

    #[test]
    fn thread_cpu_counts_only_the_calling_thread() {
        let spin = std::thread::spawn(|| {
            let t = std::time::Instant::now();
            let mut x = 0u64;
            while t.elapsed() < std::time::Duration::from_millis(50) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            thread_cpu().unwrap()
        })
        .join()
        .unwrap();
        let idle = std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            thread_cpu().unwrap()
        })
        .join()
        .unwrap();
        // The spinner used CPU; the sleeper next to nothing (and less than the spinner).
        assert!(spin.user_ns + spin.system_ns > 0);
        assert!(idle.user_ns + idle.system_ns < spin.user_ns + spin.system_ns);
    }

    #[test]
    fn schedstat_and_per_cpu_softirq_parse_from_captured_text() {
        assert_eq!(parse_schedstat("187940 1236543 2\n"), Some(187_940));
        assert_eq!(parse_schedstat(""), None);
        assert_eq!(parse_schedstat("x 1 2"), None);
        // cpu0 and cpu1 of the captured /proc/stat: softirq columns 20 and 49.
        assert_eq!(parse_softirq_ticks(STAT_6X), Some(vec![20, 49]));
        // An offline CPU has no line: its slot reads 0.
        assert_eq!(
            parse_softirq_ticks("cpu 1 1 1 1 1 1 9\ncpu2 1 1 1 1 1 1 7\n"),
            Some(vec![0, 0, 7])
        );
        assert_eq!(parse_softirq_ticks("cpu 1 2 3 4 5 6 7\n"), None);
        assert_eq!(parse_softirq_ticks("cpu0 1 2 3 4\n"), None);
        assert_eq!(parse_softirq_ticks("cpu0 1 2 3 4 5 6 x\n"), None);
        assert_eq!(parse_softirq_ticks("cpu99999999 1 2 3 4 5 6 7\n"), None);
    }

    #[test]
    fn schedstat_agrees_with_rusage_thread_on_a_busy_thread() {
        let (sched, ru) = std::thread::spawn(|| {
            let t = std::time::Instant::now();
            let mut x = 0u64;
            while t.elapsed() < std::time::Duration::from_millis(100) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            // Read back to back: the same runtime, two sources.
            let ru = thread_cpu().unwrap();
            (thread_sched_ns().unwrap(), ru.user_ns + ru.system_ns)
        })
        .join()
        .unwrap();
        assert!(sched > 0 && ru > 0, "{sched} {ru}");
        // RUSAGE_THREAD is the same runtime rounded to µs; allow 2 ms or 5%.
        let tol = (ru / 20).max(2_000_000);
        assert!(
            sched.abs_diff(ru) <= tol,
            "schedstat {sched} ns, rusage {ru} ns"
        );
    }

    #[test]
    fn live_sample_is_sane() {
        let s = sample().unwrap();
        assert!(s.ncpu >= 1);
        assert!(s.system.idle_ns + s.system.busy_ns() > 0);
    }
}
