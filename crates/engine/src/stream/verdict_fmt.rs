//! Wording helpers of the limiting-factor verdict: shares, sizes, rates and fixes.

use super::End;

pub(super) fn name(e: End) -> &'static str {
    match e {
        End::Client => "client",
        End::Agent => "agent",
    }
}

pub(super) fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// A small positive share: "0.42%", or "<0.01%" rather than a misleading "0.00%".
pub(super) fn small_pct(x: f64) -> String {
    if x * 100.0 < 0.005 {
        "<0.01%".into()
    } else {
        format!("{:.2}%", x * 100.0)
    }
}

pub(super) fn size(b: f64) -> String {
    if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

pub(super) fn rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else {
        format!("{:.1} Mbit/s", bps / 1e6)
    }
}

/// The fix for a window or buffer: `--window` when the user fixed the buffers, else
/// the sysctl whose maximum capped them on `end`.
pub(super) fn window_fix(window: Option<u32>, sysctl: &str, end: End) -> String {
    if window.is_some() {
        "raise --window".to_string()
    } else {
        format!("raise {sysctl}'s maximum on the {}", name(end))
    }
}

/// What the link needs against what the buffer reached: ", the path needs ≈ 1.6 MB
/// (10 Gbit/s link × min RTT 1300 µs)", or that the buffer already exceeds it (then
/// the window filled because the receiver did not empty it in time). Empty when unknown.
pub(super) fn needs(link_bps: Option<f64>, min_rtt_us: Option<u32>, buffer: Option<u32>) -> String {
    let (Some(l), Some(rtt)) = (link_bps, min_rtt_us) else {
        return String::new();
    };
    let bdp = l / 8.0 * f64::from(rtt) / 1e6;
    let what = format!("{} link × min RTT {rtt} µs", rate(l));
    match buffer {
        Some(b) if f64::from(b) >= bdp => format!(
            ", more than the ≈ {} the path needs ({what}): the window filled because the peer did not empty it in time",
            size(bdp)
        ),
        _ => format!(", the path needs ≈ {} ({what})", size(bdp)),
    }
}

pub(super) fn line(dir: &str, cause: &str, rest: &str) -> String {
    format!("{dir}: {cause}{rest}")
}

/// "--streams N" with twice the connections a direction ran (more threads to
/// spread a CPU-bound end over), or nothing when that is beyond what the tool allows.
pub(crate) fn more_streams(conns: u32) -> Option<String> {
    let next = conns.max(1).saturating_mul(2);
    (next <= crate::config::bounds::MAX_STREAMS).then(|| format!("--streams {next}"))
}
