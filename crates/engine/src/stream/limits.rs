//! What held a TCP sender back, from the kernel's own accounting in `tcp_info`
//! (Linux 4.10+): `tcpi_busy_time` is the time the connection had data in flight or
//! queued; `tcpi_rwnd_limited` and `tcpi_sndbuf_limited` are the parts of it during
//! which the peer's receive window, or the sender's own send buffer, stopped it. The
//! rest of the busy time the congestion window (or pacing) governed the sender.

use mtuperf_proto::host::TcpInfo;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Running totals of the sending connections' limit clocks, for per-interval deltas.
#[derive(Debug, Default)]
pub struct LimitClock {
    last: [Option<u64>; 3],
    cur: [Option<u64>; 3],
}

fn add(acc: &mut Option<u64>, v: Option<u64>) {
    if let Some(v) = v {
        *acc = Some(acc.unwrap_or(0) + v);
    }
}

impl LimitClock {
    /// Starts a new sample of all connections.
    pub fn begin(&mut self) {
        self.cur = [None; 3];
    }

    /// Adds one sending connection's `tcp_info` to the sample.
    pub fn add(&mut self, info: Option<&TcpInfo>) {
        if let Some(i) = info {
            add(&mut self.cur[0], i.busy_time_us);
            add(&mut self.cur[1], i.rwnd_limited_us);
            add(&mut self.cur[2], i.sndbuf_limited_us);
        }
    }

    /// Busy, rwnd-limited and sndbuf-limited µs accrued since the previous sample.
    pub fn interval(&mut self) -> (Option<u64>, Option<u64>, Option<u64>) {
        let d = |k: usize| self.cur[k].map(|c| c.saturating_sub(self.last[k].unwrap_or(0)));
        let out = (d(0), d(1), d(2));
        self.last = self.cur;
        out
    }
}

/// The sender's limit accounting over a whole run, as fractions. Every field is
/// `None` when the kernel did not report what it needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LimitShares {
    /// Busy time over the sending connections' lifetime: below 1 the sender had
    /// nothing queued (the application did not supply data) for the rest.
    pub busy_of_lifetime: Option<f64>,
    /// Shares of the busy time limited by the receiver's window, by the send
    /// buffer, and the rest (congestion window or pacing).
    pub rwnd_limited: Option<f64>,
    /// Share of the busy time limited by the send buffer.
    pub sndbuf_limited: Option<f64>,
    /// The rest of the busy time: congestion window or pacing.
    pub cwnd_limited: Option<f64>,
    /// Retransmitted bytes per byte sent (tcpi_bytes_retrans / tcpi_bytes_sent).
    pub retrans: Option<f64>,
    /// ECN-marked segments per delivered segment (tcpi_delivered_ce / tcpi_delivered).
    pub ce_marked: Option<f64>,
    /// Sum of the connections' tcpi_busy_time, µs.
    pub busy_us: Option<u64>,
}

fn sum<T: Into<u64> + Copy>(tcp: &[TcpInfo], f: impl Fn(&TcpInfo) -> Option<T>) -> Option<u64> {
    if tcp.is_empty() {
        return None;
    }
    tcp.iter()
        .map(|t| f(t).map(Into::into))
        .sum::<Option<u64>>()
}

fn ratio(part: Option<u64>, whole: Option<u64>) -> Option<f64> {
    match (part, whole) {
        (Some(p), Some(w)) if w > 0 => Some((p as f64 / w as f64).min(1.0)),
        _ => None,
    }
}

/// Shares from the sending connections' final `tcp_info`; `lifetime_us` is the sum of
/// their lifetimes from Go to the end of their send loop.
pub fn shares(tcp: &[TcpInfo], lifetime_us: u64) -> LimitShares {
    let busy = sum(tcp, |t| t.busy_time_us);
    let rwnd = sum(tcp, |t| t.rwnd_limited_us);
    let sndbuf = sum(tcp, |t| t.sndbuf_limited_us);
    let rwnd_limited = ratio(rwnd, busy);
    let sndbuf_limited = ratio(sndbuf, busy);
    LimitShares {
        busy_of_lifetime: ratio(busy, Some(lifetime_us)),
        rwnd_limited,
        sndbuf_limited,
        cwnd_limited: match (rwnd_limited, sndbuf_limited) {
            (Some(r), Some(s)) => Some((1.0 - r - s).max(0.0)),
            _ => None,
        },
        retrans: ratio(sum(tcp, |t| t.bytes_retrans), sum(tcp, |t| t.bytes_sent)),
        ce_marked: ratio(sum(tcp, |t| t.delivered_ce), sum(tcp, |t| t.delivered)),
        busy_us: busy,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(busy: u64, rwnd: u64, sndbuf: u64) -> TcpInfo {
        TcpInfo {
            busy_time_us: Some(busy),
            rwnd_limited_us: Some(rwnd),
            sndbuf_limited_us: Some(sndbuf),
            bytes_sent: Some(1000),
            bytes_retrans: Some(10),
            delivered: Some(100),
            delivered_ce: Some(0),
            ..TcpInfo::default()
        }
    }

    #[test]
    fn shares_of_busy_time() {
        let s = shares(&[info(800, 400, 0), info(1000, 600, 100)], 2000);
        assert_eq!(s.busy_of_lifetime, Some(0.9));
        assert_eq!(s.rwnd_limited, Some(1000.0 / 1800.0));
        assert_eq!(s.sndbuf_limited, Some(100.0 / 1800.0));
        assert!((s.cwnd_limited.unwrap() - 700.0 / 1800.0).abs() < 1e-12);
        assert_eq!(s.retrans, Some(0.01));
        assert_eq!(s.ce_marked, Some(0.0));
    }

    #[test]
    fn an_old_kernel_gives_unknown_not_zero() {
        let old = TcpInfo::default();
        let s = shares(&[old, info(10, 5, 0)], 100);
        assert_eq!(s, LimitShares::default());
        assert_eq!(shares(&[], 100), LimitShares::default());
    }

    #[test]
    fn the_clock_reports_deltas() {
        let mut c = LimitClock::default();
        c.begin();
        c.add(Some(&info(100, 50, 0)));
        c.add(None);
        assert_eq!(c.interval(), (Some(100), Some(50), Some(0)));
        c.begin();
        c.add(Some(&info(300, 60, 10)));
        assert_eq!(c.interval(), (Some(200), Some(10), Some(10)));
        c.begin();
        c.add(Some(&TcpInfo::default()));
        assert_eq!(c.interval(), (None, None, None));
    }
}
