//! Flag values read at the edge: sizes, durations, counts, rates, percentages, paths
//! and names, each refused with the allowed range and an example.

use std::net::IpAddr;
use std::time::Duration;

use mtuperf_engine::compare::PathSpec;
use mtuperf_engine::config::bounds;
use mtuperf_engine::doctor::Profile;
use mtuperf_proto::units::{parse_duration, BitsPerSec, Bytes};
use mtuperf_report::record::RunKind;

fn size_in(s: &str, min: u64, max: u64, hint: &str) -> Result<u64, String> {
    let v = Bytes::parse(s)
        .map_err(|e| format!("{e}; allowed {} to {}{hint}", Bytes(min), Bytes(max)))?;
    if v.0 < min || v.0 > max {
        return Err(format!(
            "{} is out of range: allowed {} to {}{hint}",
            v.0,
            Bytes(min),
            Bytes(max)
        ));
    }
    Ok(v.0)
}

pub fn duration_in(s: &str, min: Duration, max: Duration) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| e.to_string())?;
    if d < min || d > max {
        return Err(format!(
            "{s} is out of range: allowed {} to {}",
            humantime::format_duration(min),
            humantime::format_duration(max)
        ));
    }
    Ok(d)
}

/// --block: 1 byte to 16 MiB.
pub fn parse_block(s: &str) -> Result<u32, String> {
    size_in(s, 1, bounds::MAX_BLOCK, " (e.g. 8K, 128K, 9000)").map(|v| v as u32)
}

/// --window: 1 KiB to 1 GiB.
pub fn parse_window(s: &str) -> Result<u32, String> {
    size_in(
        s,
        bounds::MIN_WINDOW,
        bounds::MAX_WINDOW,
        " (e.g. 256K, 4M)",
    )
    .map(|v| v as u32)
}

/// --bytes: 1 byte to 1 PiB.
pub fn parse_total(s: &str) -> Result<u64, String> {
    size_in(s, 1, bounds::MAX_TOTAL, " (e.g. 1G, 500M)")
}

/// --time: 100 ms to 24 h.
pub fn parse_test_time(s: &str) -> Result<Duration, String> {
    duration_in(s, bounds::MIN_TIME, bounds::MAX_TIME)
}

/// --interval: 10 ms to 1 h.
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    duration_in(s, bounds::MIN_INTERVAL, bounds::MAX_INTERVAL)
}

/// --rx-coalesce: 0 to the agent's maximum (10 ms).
pub fn parse_rx_coalesce(s: &str) -> Result<Duration, String> {
    let max = Duration::from_micros(bounds::MAX_RX_COALESCE_US.into());
    duration_in(s, Duration::ZERO, max)
}

/// --rx-poll: 0 to the agent's maximum (10 ms).
pub fn parse_rx_poll(s: &str) -> Result<Duration, String> {
    let max = Duration::from_micros(bounds::MAX_RX_POLL_US.into());
    duration_in(s, Duration::ZERO, max)
}

/// Durations from 0 up to 24 h (--omit, agent limits).
pub fn parse_any_duration(s: &str) -> Result<Duration, String> {
    duration_in(s, Duration::ZERO, bounds::MAX_TIME)
}

/// A count with SI suffixes (10k, 2.5k, 1M) from `min` to `max`.
pub fn count_in(s: &str, min: u64, max: u64, hint: &str) -> Result<u64, String> {
    let v = mtuperf_proto::units::parse_count(s)
        .map_err(|e| format!("{e}; allowed {min} to {max}{hint}"))?;
    if v < min || v > max {
        return Err(format!("{v} is out of range: allowed {min} to {max}{hint}"));
    }
    Ok(v)
}

/// `--kind`: a run kind by name.
pub fn parse_kind(s: &str) -> Result<RunKind, String> {
    s.parse()
        .map_err(|e: mtuperf_store::UnknownKind| e.to_string())
}

/// `--ci-width`: a percentage from 0.1 to 50.
pub fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if (0.1..=50.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s} is not a percentage from 0.1 to 50 (e.g. 5 for ±5%)"
        )),
    }
}

/// NAME=HOST[,bind=ADDR]
pub fn parse_path(s: &str) -> Result<PathSpec, String> {
    let hint = "expected NAME=HOST[,bind=LOCAL_ADDR], e.g. jumbo=10.0.9.2,bind=10.0.9.1";
    let (name, rest) = s.split_once('=').ok_or_else(|| format!("{s}: {hint}"))?;
    let ok_name = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok_name {
        return Err(format!(
            "{name:?}: a path name is 1 to 32 letters, digits, '-' or '_'; {hint}"
        ));
    }
    let mut parts = rest.split(',');
    let target = parts.next().unwrap_or_default().to_string();
    if target.is_empty() {
        return Err(format!("{s}: no host; {hint}"));
    }
    let mut bind = None;
    for p in parts {
        match p.split_once('=') {
            Some(("bind", a)) => {
                bind = Some(
                    a.parse::<IpAddr>()
                        .map_err(|e| format!("bind={a}: {e}; {hint}"))?,
                );
            }
            _ => return Err(format!("{p}: unknown path option; {hint}")),
        }
    }
    Ok(PathSpec {
        name: name.to_string(),
        target,
        bind,
    })
}

/// doctor `--profile`.
pub fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

/// doctor `--rtt`: 1us to 10s.
pub fn parse_rtt(s: &str) -> Result<Duration, String> {
    let d = parse_any_duration(s)?;
    if d.is_zero() || d > Duration::from_secs(10) {
        return Err(format!(
            "{s} is out of range: allowed 1us to 10s (e.g. 200us, 25ms)"
        ));
    }
    Ok(d)
}

/// doctor `--sample`: 0s to 60s.
pub fn parse_sample(s: &str) -> Result<Duration, String> {
    let d = parse_any_duration(s)?;
    if d > Duration::from_mins(1) {
        return Err(format!("{s} is out of range: allowed 0s to 60s (e.g. 1s)"));
    }
    Ok(d)
}

/// doctor `--bandwidth`: a rate such as 10G.
pub fn parse_bandwidth(s: &str) -> Result<f64, String> {
    BitsPerSec::parse(s).map(|b| b.0).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::{count_in, parse_test_time};

    #[test]
    fn counts_take_si_suffixes_and_name_the_range() {
        assert_eq!(
            count_in("10k", 1, 100, ""),
            Err("10000 is out of range: allowed 1 to 100".into())
        );
        assert_eq!(count_in("2.5k", 1, 1_000_000, ""), Ok(2500));
        let e = count_in("1.5", 1, 100, " requests/s").unwrap_err();
        assert!(
            e.contains("\"1.5\"") && e.contains("allowed 1 to 100 requests/s"),
            "{e}"
        );
    }

    #[test]
    fn a_zero_maximum_duration_is_refused() {
        assert!(parse_test_time("0s").is_err());
        assert!(parse_test_time("2s").is_ok());
    }
}
