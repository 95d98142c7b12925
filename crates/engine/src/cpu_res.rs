//! The resolution of system-wide CPU figures. /proc/stat counts CPU time in USER_HZ
//! ticks of 10 ms (USER_HZ is 100 in the kernel's ABI on every mainstream
//! architecture), per CPU: a delta over a run is a whole number of ticks, and each
//! CPU's counter may have been up to one tick into its next tick at either reading,
//! so a system-wide busy delta is uncertain by ± one tick per CPU. On a short run
//! that is several percent: two runs of the same file can read exactly the same
//! µs/MiB because both counted the same 35 ticks.
//!
//! The tool's own CPU (its threads, getrusage RUSAGE_THREAD) has no such quantum:
//! the kernel scales it to the scheduler's nanosecond runtime, reported in µs; each
//! thread also reads that runtime itself, in ns, from /proc/thread-self/schedstat
//! ([`own_thread`]). Both are read once, when the thread's phase ends.
//!
//! Per-CPU softirq time (the receive and transmit processing the kernel does for
//! the traffic) comes from /proc/stat's per-CPU softirq column, in the same ticks:
//! a placement's `softirq` states its tick and ± one tick per CPU.

use std::time::Instant;

use mtuperf_proto::host::ThreadsCpu;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The calling thread's own CPU over its life so far (`born`: when it started):
/// getrusage(RUSAGE_THREAD) and its schedstat runtime. Called once per thread, at
/// the end of its phase, never per block. None when getrusage fails.
pub fn own_thread(born: Instant) -> Option<ThreadsCpu> {
    let c = mtuperf_sys::cpu::thread_cpu().ok()?;
    Some(ThreadsCpu {
        threads: 1,
        user_ns: c.user_ns,
        system_ns: c.system_ns,
        life_ns: born.elapsed().as_nanos() as u64,
        sched_ns: mtuperf_sys::cpu::thread_sched_ns().ok(),
    })
}

/// One /proc/stat tick (1 / USER_HZ), ns.
pub const TICK_NS: u64 = 10_000_000;
/// Above this uncertainty (± % of the measured busy time) a figure gets a warning.
pub const WARN_PCT: f64 = 5.0;

/// What a system-wide CPU busy figure rests on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuResolution {
    /// Busy ticks counted over the interval, all CPUs.
    pub ticks: u64,
    pub tick_ms: f64,
    /// ± this many ticks (one per CPU).
    pub plus_minus_ticks: u64,
    /// That uncertainty as ± % of the busy time (null when nothing was counted).
    pub uncertainty_pct: Option<f64>,
}

impl CpuResolution {
    pub fn of(busy_ns: u64, ncpu: u32) -> CpuResolution {
        let ticks = (busy_ns + TICK_NS / 2) / TICK_NS;
        let pm = u64::from(ncpu.max(1));
        CpuResolution {
            ticks,
            tick_ms: TICK_NS as f64 / 1e6,
            plus_minus_ticks: pm,
            uncertainty_pct: (ticks > 0).then(|| pm as f64 / ticks as f64 * 100.0),
        }
    }

    /// "35 ticks of 10 ms ± 2 (± 5.7%)".
    pub fn text(&self) -> String {
        let pct = self
            .uncertainty_pct
            .map_or_else(|| "no tick counted".to_string(), |p| format!("± {p:.1}%"));
        format!(
            "{} ticks of {} ms ± {} ({pct})",
            self.ticks, self.tick_ms, self.plus_minus_ticks
        )
    }

    /// True when the figure is coarser than [`WARN_PCT`] (or counted nothing): worth
    /// a warning (report words it).
    pub fn is_coarse(&self) -> bool {
        self.uncertainty_pct.is_none_or(|p| p > WARN_PCT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_and_one_tick_per_cpu() {
        let r = CpuResolution::of(350_000_000, 2);
        assert_eq!((r.ticks, r.plus_minus_ticks), (35, 2));
        assert!((r.uncertainty_pct.unwrap() - 5.714).abs() < 0.01);
        assert!(
            r.text().starts_with("35 ticks of 10 ms ± 2 (± 5.7%)"),
            "{}",
            r.text()
        );
        assert!(r.is_coarse());
        let long = CpuResolution::of(20_000_000_000, 2);
        assert!(!long.is_coarse());
        assert!(CpuResolution::of(0, 4).is_coarse());
    }
}
