//! Number formatting shared by the text renderers.

/// "9.41 Gbit/s", "812.3 Mbit/s".
pub fn rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.1} Mbit/s", bps / 1e6)
    } else {
        format!("{:.1} kbit/s", bps / 1e3)
    }
}

/// MiB/s from bits per second.
pub fn mibs(bps: f64) -> String {
    format!("{:.1} MiB/s", bps / 8.0 / 1_048_576.0)
}

/// "1.25 GiB", "812.0 MiB", "4.0 KiB", "512 B".
pub fn bytes(n: u64) -> String {
    let f = n as f64;
    if f >= 1_073_741_824.0 {
        format!("{:.2} GiB", f / 1_073_741_824.0)
    } else if f >= 1_048_576.0 {
        format!("{:.1} MiB", f / 1_048_576.0)
    } else if f >= 1024.0 {
        format!("{:.1} KiB", f / 1024.0)
    } else {
        format!("{n} B")
    }
}

/// A summary's 95% interval as "±3.2%" with its method, or why there is none.
pub fn ci(s: &mtuperf_stats::Summary) -> String {
    match s.ci95_half_width_pct {
        Some(p) if s.ci95_method == mtuperf_stats::CiMethod::StudentT => format!("±{p:.1}%"),
        Some(p) => format!("±{p:.1}% ({})", s.ci95_method),
        None if s.n < mtuperf_stats::MIN_N_FOR_CI => format!("no CI (n={})", s.n),
        None => "no CI".into(),
    }
}

pub fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |x| x.to_string())
}

/// Microseconds as "85 µs", "1.25 ms", "2.000 s".
pub fn micros(us: f64) -> String {
    if us >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

/// Nanoseconds as "24.8 µs", "1.25 ms", "2.000 s".
pub fn latency_ns(ns: f64) -> String {
    let us = ns / 1000.0;
    if us >= 1e6 {
        format!("{:.3} s", us / 1e6)
    } else if us >= 1e3 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{us:.1} µs")
    }
}

/// A latency that may have no sample: "24.8 µs", or "-" when none was measured
/// (never "0.0 µs").
pub fn latency_opt(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".to_string(), |v| latency_ns(v as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(rate(9.41e9), "9.41 Gbit/s");
        assert_eq!(rate(812.34e6), "812.3 Mbit/s");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(1_073_741_824), "1.00 GiB");
        assert_eq!(micros(85.2), "85 µs");
        assert_eq!(micros(1250.0), "1.25 ms");
        assert_eq!(opt::<u32>(None), "-");
    }
}
