//! Live intervals of the client's side, sampled off the hot path from the client
//! threads' counters; boundaries fall on multiples of the interval since Go.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::hot::Live;
use crate::rr::observer::RrObserver;
use crate::rr::RrInterval;
use crate::tick::{wait_boundary, Running, Woke};

/// Samples until no client thread remains, then emits the last partial interval.
pub fn run(
    t0: Instant,
    interval: Duration,
    lives: &[Live],
    running: &Running,
    obs: &dyn RrObserver,
) -> Vec<RrInterval> {
    let interval_ns = (interval.as_nanos() as u64).max(10_000_000);
    let mut out = Vec::new();
    let (mut last_blocks, mut last_lost, mut last_sum, mut last_late) = (0u64, 0u64, 0u64, 0u64);
    let mut start_ns = 0u64;
    loop {
        let target = (start_ns / interval_ns + 1) * interval_ns;
        let Woke { finished, end_ns } =
            wait_boundary(t0, target, interval_ns, || running.is_done(), |_| {});
        let (mut blocks, mut lost, mut sum, mut max, mut late) = (0u64, 0u64, 0u64, 0u64, 0u64);
        for l in lives {
            blocks += l.blocks.load(Ordering::Relaxed);
            late += l.late.load(Ordering::Relaxed);
            lost += l.lost.load(Ordering::Relaxed);
            sum += l.lat_sum_ns.load(Ordering::Relaxed);
            max = max.max(l.lat_max_ns.swap(0, Ordering::Relaxed));
        }
        let n = blocks - last_blocks;
        let s = RrInterval {
            start_ns,
            end_ns,
            blocks: n,
            lost: lost - last_lost,
            late: late - last_late,
            mean_ns: (sum - last_sum).checked_div(n),
            max_ns: (n > 0).then_some(max),
        };
        if !finished || n > 0 || end_ns > start_ns + interval_ns / 10 {
            obs.interval(&s);
            out.push(s);
        }
        (last_blocks, last_lost, last_sum, last_late) = (blocks, lost, sum, late);
        start_ns = end_ns;
        if finished {
            return out;
        }
    }
}
