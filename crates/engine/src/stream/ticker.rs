//! Per-interval sampling of the live byte counters, on each end, off the hot path.
//! Boundaries fall on multiples of the interval and exactly at the omit time, so
//! the warm-up can be cut out of the summary without interpolation.

use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::{IntervalSample, MAX_INTERVALS};

use super::limits::LimitClock;
use crate::tick::{wait_boundary, Running, Woke};

/// One connection as the ticker sees it.
pub struct Tracked {
    pub sending: bool,
    pub bytes: Arc<AtomicU64>,
    pub sock: Arc<TcpStream>,
    /// Set by the data thread when its loop returned.
    pub finished: Arc<AtomicBool>,
    /// Set by the ticker before it shuts the connection down (see [`Cut`]).
    pub cut: Arc<AtomicBool>,
}

#[cfg(test)]
impl Tracked {
    /// A connection as the ticker would see it, for the data loops' tests.
    pub fn of(sock: &TcpStream, sending: bool) -> Tracked {
        Tracked {
            sending,
            bytes: Arc::new(AtomicU64::new(0)),
            sock: Arc::new(sock.try_clone().unwrap()),
            finished: Arc::new(AtomicBool::new(false)),
            cut: Arc::new(AtomicBool::new(false)),
        }
    }
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

/// When the ticker, which also watches over the data threads, cuts a connection
/// whose thread is blocked in a call that would outlast the test.
#[derive(Debug, Clone, Copy)]
pub struct Cut {
    /// Senders still running then have their write side shut down (a blocked write
    /// returns at once): the end of a time-limited test (or the agent's maximum)
    /// plus a grace.
    pub send_at: Option<Instant>,
    /// Receivers still running then have their read side shut down.
    pub recv_at: Option<Instant>,
    /// This long after `halt` (Ctrl-C, or a deadline of the relay), senders still
    /// running are cut, and so is every receiver that received nothing in such a
    /// span since.
    pub after_halt: Duration,
}

/// Shuts down what `w.cut` says is over; marks the connection cut first so its data
/// thread tells a cut from the peer's doing.
fn watch(
    conns: &[Tracked],
    w: &Watch<'_>,
    halted_at: Option<&mut (Instant, Vec<u64>)>,
    now: Instant,
) {
    let cut = &w.cut;
    // After a halt: every `after_halt`, receivers whose count did not move are cut.
    let mut check = None;
    if let Some((t, seen)) = halted_at {
        if now >= *t + cut.after_halt {
            let current: Vec<u64> = conns
                .iter()
                .map(|c| c.bytes.load(Ordering::Relaxed))
                .collect();
            check = Some(std::mem::replace(seen, current));
            *t = now;
        }
    }
    for (k, c) in conns.iter().enumerate() {
        if c.finished.load(Ordering::Acquire) || c.cut.load(Ordering::Relaxed) {
            continue;
        }
        let due = if c.sending {
            cut.send_at.is_some_and(|t| now >= t) || check.is_some()
        } else {
            cut.recv_at.is_some_and(|t| now >= t)
                || check
                    .as_ref()
                    .is_some_and(|seen| seen.get(k) == Some(&c.bytes.load(Ordering::Relaxed)))
        };
        if due {
            c.cut.store(true, Ordering::Release);
            let how = if c.sending {
                Shutdown::Write
            } else {
                Shutdown::Read
            };
            let _ = c.sock.shutdown(how);
        }
    }
}

/// Keeps at most [`MAX_INTERVALS`] samples: when full, merges adjacent pairs (never
/// across the omit instant, so the warm-up can still be cut out exactly).
pub(crate) fn bound(out: &mut Vec<IntervalSample>, omit_ns: u64) {
    if out.len() < MAX_INTERVALS {
        return;
    }
    let old = std::mem::take(out);
    let mut it = old.into_iter().peekable();
    while let Some(a) = it.next() {
        let merge = a.end_ns != omit_ns || omit_ns == 0;
        match it.peek() {
            Some(b) if merge => {
                out.push(IntervalSample {
                    start_ns: a.start_ns,
                    end_ns: b.end_ns,
                    bytes_sent: a.bytes_sent + b.bytes_sent,
                    bytes_received: a.bytes_received + b.bytes_received,
                    retransmits: a.retransmits.saturating_add(b.retransmits),
                    busy_us: sum_known(a.busy_us, b.busy_us),
                    rwnd_limited_us: sum_known(a.rwnd_limited_us, b.rwnd_limited_us),
                    sndbuf_limited_us: sum_known(a.sndbuf_limited_us, b.sndbuf_limited_us),
                });
                it.next();
            }
            _ => out.push(a),
        }
    }
}

/// The sum of two merged intervals' clock: unknown if either is (a partial sum would
/// understate the share).
fn sum_known(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a?.saturating_add(b?))
}

/// What the ticker watches besides the samples.
pub struct Watch<'a> {
    pub cut: Cut,
    /// Set when the test is being stopped early.
    pub halt: &'a AtomicBool,
}

/// Samples until no data thread is `running`, then emits the last partial interval, and cuts
/// connections per `watch`. Returns all samples (at most [`MAX_INTERVALS`], coarser
/// when the run was longer). A wakeup later than one interval (this process was
/// stopped) yields one sample spanning the gap, not a burst of made-up ones.
pub fn run(
    t0: Instant,
    interval: Duration,
    omit: Duration,
    conns: &[Tracked],
    running: &Running,
    w: &Watch<'_>,
    mut emit: impl FnMut(&IntervalSample),
) -> Vec<IntervalSample> {
    let interval_ns = (interval.as_nanos() as u64).max(1_000_000);
    let omit_ns = omit.as_nanos() as u64;
    let mut out = Vec::new();
    let (mut last_sent, mut last_recv, mut last_retrans) = (0u64, 0u64, 0u32);
    let mut start_ns = 0u64;
    let mut limits = LimitClock::default();
    let mut halted_at: Option<(Instant, Vec<u64>)> = None;
    loop {
        let target = next_boundary(start_ns, interval_ns, omit_ns);
        let Woke { finished, end_ns } = wait_boundary(
            t0,
            target,
            interval_ns,
            || running.is_done(),
            |now_i| {
                if halted_at.is_none() && w.halt.load(Ordering::Relaxed) {
                    let seen = conns
                        .iter()
                        .map(|c| c.bytes.load(Ordering::Relaxed))
                        .collect();
                    halted_at = Some((now_i, seen));
                }
                watch(conns, w, halted_at.as_mut(), now_i);
            },
        );
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
            bound(&mut out, omit_ns);
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
    use super::{bound, next_boundary, IntervalSample, MAX_INTERVALS};

    fn ms(i: u64) -> IntervalSample {
        IntervalSample {
            start_ns: i * 10_000_000,
            end_ns: (i + 1) * 10_000_000,
            bytes_sent: 1,
            bytes_received: 2,
            retransmits: 1,
            busy_us: Some(10_000),
            rwnd_limited_us: Some(4_000),
            sndbuf_limited_us: None,
        }
    }

    #[test]
    fn a_long_fine_run_keeps_at_most_the_limit_and_every_byte() {
        // 460 s at 10 ms: 46 000 samples asked, at most MAX_INTERVALS kept.
        let omit_ns = 5 * 10_000_000;
        let mut out = Vec::new();
        for i in 0..46_000 {
            bound(&mut out, omit_ns);
            out.push(ms(i));
        }
        assert!(out.len() <= MAX_INTERVALS, "{}", out.len());
        assert_eq!(out.iter().map(|s| s.bytes_sent).sum::<u64>(), 46_000);
        assert_eq!(out.iter().map(|s| s.bytes_received).sum::<u64>(), 92_000);
        let busy: u64 = out.iter().filter_map(|s| s.busy_us).sum();
        let rwnd: u64 = out.iter().filter_map(|s| s.rwnd_limited_us).sum();
        assert_eq!(
            (busy, rwnd),
            (460_000_000, 184_000_000),
            "merged clocks keep their sums"
        );
        assert!(
            out.iter().all(|s| s.sndbuf_limited_us.is_none()),
            "unknown stays unknown"
        );
        // Contiguous, from 0 to the end, and the omit instant is still a boundary.
        assert_eq!(out[0].start_ns, 0);
        assert_eq!(out.last().unwrap().end_ns, 46_000 * 10_000_000);
        assert!(out.windows(2).all(|w| w[0].end_ns == w[1].start_ns));
        assert!(out.iter().any(|s| s.end_ns == omit_ns));
        // About 110 bytes of JSON per sample: the final report stays near 1 MiB.
        let json = serde_json::to_vec(&out).unwrap();
        assert!(json.len() < 2 << 20, "{} bytes", json.len());
    }

    #[test]
    fn boundaries_include_the_omit_instant() {
        let s = 1_000_000_000;
        assert_eq!(next_boundary(0, s, 0), s);
        assert_eq!(next_boundary(0, s, s / 2), s / 2);
        assert_eq!(next_boundary(s / 2, s, s / 2), s);
        assert_eq!(next_boundary(s, s, 3 * s / 2), 3 * s / 2);
    }
}
