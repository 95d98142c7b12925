//! One-line live status for a terminal: what rr and stream print each second on stderr
//! when nobody asked for `--interval` lines (as iperf3 prints every second).

use mtuperf_engine::rr::RrInterval;
use mtuperf_proto::msg::IntervalSample;

use crate::fmt::{micros, rate};

/// "rr 4 clients  3 / 10 s  52227 blocks/s  mean 48 µs  max 1.20 ms  lost 0": the
/// last interval's blocks/s and its mean and maximum block latency (the client's clock).
pub fn rr_line(clients: u32, total_s: f64, s: &RrInterval) -> String {
    let secs = s.end_ns.saturating_sub(s.start_ns) as f64 / 1e9;
    let bps = if secs > 0.0 {
        s.blocks as f64 / secs
    } else {
        0.0
    };
    format!(
        "  rr {clients} client{}  {:>5.1} / {total_s:.0} s  {bps:>9.0} blocks/s  mean {:>9}  max {:>9}  lost {}",
        if clients == 1 { "" } else { "s" },
        s.end_ns as f64 / 1e9,
        s.mean_ns
            .map_or_else(|| "-".to_string(), |v| micros(v as f64 / 1e3)),
        s.max_ns
            .map_or_else(|| "-".to_string(), |v| micros(v as f64 / 1e3)),
        s.lost
    )
}

/// "now 9.41 Gbit/s": the client's bytes sent and received in the last interval.
pub fn stream_rate(s: &IntervalSample) -> String {
    let secs = s.end_ns.saturating_sub(s.start_ns) as f64 / 1e9;
    if secs <= 0.0 {
        return String::new();
    }
    let bits = (s.bytes_sent + s.bytes_received) as f64 * 8.0;
    format!("now {} (client, last {secs:.1} s)", rate(bits / secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rr_line_reads_the_last_interval() {
        let s = RrInterval {
            start_ns: 2_000_000_000,
            end_ns: 3_000_000_000,
            blocks: 52_227,
            lost: 1,
            late: 0,
            mean_ns: Some(48_000),
            max_ns: Some(1_200_000),
        };
        let l = rr_line(4, 10.0, &s);
        assert!(l.contains("4 clients"), "{l}");
        assert!(l.contains("3.0 / 10 s"), "{l}");
        assert!(l.contains("52227 blocks/s"), "{l}");
        assert!(
            l.contains("mean     48 µs") && l.contains("1.20 ms") && l.contains("lost 1"),
            "{l}"
        );
        // An interval with no block: no latency, never "0 µs".
        let none = RrInterval {
            blocks: 0,
            mean_ns: None,
            max_ns: None,
            ..s
        };
        let l = rr_line(4, 10.0, &none);
        assert!(l.contains("mean         -  max         -"), "{l}");
    }

    #[test]
    fn stream_rate_counts_both_directions_over_the_interval() {
        let s = IntervalSample {
            start_ns: 0,
            end_ns: 500_000_000,
            bytes_sent: 500_000_000,
            bytes_received: 0,
            retransmits: 0,
            busy_us: None,
            rwnd_limited_us: None,
            sndbuf_limited_us: None,
        };
        assert_eq!(stream_rate(&s), "now 8.00 Gbit/s (client, last 0.5 s)");
    }
}
