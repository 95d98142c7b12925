//! Per-interval sampling of the live byte counters, on each end, off the hot path.
//! Boundaries fall on multiples of the interval and exactly at the omit time, so
//! the warm-up can be cut out of the summary without interpolation.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::IntervalSample;

use super::limits::LimitClock;

/// One connection as the ticker sees it.
pub struct Tracked {
    pub sending: bool,
    pub bytes: Arc<AtomicU64>,
    pub sock: Arc<TcpStream>,
}

fn totals(conns: &[Tracked], limits: &mut LimitClock) -> (u64, u64, u32) {
    let (mut sent, mut recv, mut retrans) = (0, 0, 0);
    limits.begin();
    for c in conns {
        let b = c.bytes.load(Ordering::Relaxed);
        if c.sending {
            sent += b;
            let info = mtuperf_sys::sockopt::tcp_info(&*c.sock).ok();
            retrans += info.map_or(0, |i| i.retransmits);
            limits.add(info.as_ref());
        } else {
            recv += b;
        }
    }
    (sent, recv, retrans)
}

fn next_boundary(now_ns: u64, interval_ns: u64, omit_ns: u64) -> u64 {
    let k = now_ns / interval_ns + 1;
    let mut next = k * interval_ns;
    if omit_ns > now_ns && omit_ns < next {
        next = omit_ns;
    }
    next
}

/// Samples until `done` is set, then emits the last partial interval. Returns all.
pub fn run(
    t0: Instant,
    interval: Duration,
    omit: Duration,
    conns: &[Tracked],
    done: &AtomicBool,
    mut emit: impl FnMut(&IntervalSample),
) -> Vec<IntervalSample> {
    let interval_ns = (interval.as_nanos() as u64).max(1_000_000);
    let omit_ns = omit.as_nanos() as u64;
    let mut out = Vec::new();
    let (mut last_sent, mut last_recv, mut last_retrans) = (0u64, 0u64, 0u32);
    let mut start_ns = 0u64;
    let mut limits = LimitClock::default();
    loop {
        let target = next_boundary(start_ns, interval_ns, omit_ns);
        // Sleep in short steps so the end of the test is noticed promptly.
        let finished = loop {
            if done.load(Ordering::Acquire) {
                break true;
            }
            let now = t0.elapsed().as_nanos() as u64;
            if now >= target {
                break false;
            }
            thread::sleep(Duration::from_nanos((target - now).min(20_000_000)));
        };
        let end_ns = if finished {
            t0.elapsed().as_nanos() as u64
        } else {
            target
        };
        let (sent, recv, retrans) = totals(conns, &mut limits);
        let (busy_us, rwnd_limited_us, sndbuf_limited_us) = limits.interval();
        let s = IntervalSample {
            start_ns,
            end_ns,
            bytes_sent: sent - last_sent,
            bytes_received: recv - last_recv,
            retransmits: retrans.saturating_sub(last_retrans),
            busy_us,
            rwnd_limited_us,
            sndbuf_limited_us,
        };
        if !finished || s.bytes_sent + s.bytes_received > 0 || end_ns > start_ns + interval_ns / 10
        {
            emit(&s);
            out.push(s);
        }
        (last_sent, last_recv, last_retrans) = (sent, recv, retrans);
        start_ns = end_ns;
        if finished {
            return out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::next_boundary;

    #[test]
    fn boundaries_include_the_omit_instant() {
        let s = 1_000_000_000;
        assert_eq!(next_boundary(0, s, 0), s);
        assert_eq!(next_boundary(0, s, s / 2), s / 2);
        assert_eq!(next_boundary(s / 2, s, s / 2), s);
        assert_eq!(next_boundary(s, s, 3 * s / 2), 3 * s / 2);
    }
}
