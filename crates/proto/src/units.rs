//! Quantities with units, parsed once at the edge (command line, lab options).
//!
//! Sizes use binary multiples (8K = 8KiB = 8192 bytes), as iperf and perl-sockets do
//! for buffer sizes; "KB"/"MB"/"GB" are decimal. Rates are bits per second with decimal
//! multiples ("1gbit", "10G", "500M"), as network line rates are.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A unit string that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read {value:?} as {expected}")]
pub struct UnitError {
    pub value: String,
    pub expected: &'static str,
}

fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    s.split_at(end)
}

/// A number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

impl Bytes {
    pub const KIB: u64 = 1024;
    pub const MIB: u64 = 1024 * 1024;
    pub const GIB: u64 = 1024 * 1024 * 1024;

    /// Parses "9000", "8K", "8KiB", "128k", "1M", "1.5G", "4MB" (decimal), "1GB".
    pub fn parse(s: &str) -> Result<Self, UnitError> {
        let err = || UnitError {
            value: s.to_string(),
            expected: "a size such as 9000, 8K, 8KiB, 1M or 1G",
        };
        let t = s.trim();
        let (num, unit) = split_number(t);
        if num.is_empty() {
            return Err(err());
        }
        let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 1,
            "k" | "kib" => Self::KIB,
            "m" | "mib" => Self::MIB,
            "g" | "gib" => Self::GIB,
            "kb" => 1000,
            "mb" => 1_000_000,
            "gb" => 1_000_000_000,
            _ => return Err(err()),
        };
        if let Ok(n) = num.parse::<u64>() {
            return n.checked_mul(mult).map(Bytes).ok_or_else(err);
        }
        let f: f64 = num.parse().map_err(|_| err())?;
        let v = f * mult as f64;
        if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 || v.fract() != 0.0 {
            return Err(err());
        }
        Ok(Bytes(v as u64))
    }

    pub fn as_u64(self) -> u64 {
        self.0
    }

    pub fn mib(self) -> f64 {
        self.0 as f64 / Self::MIB as f64
    }
}

impl fmt::Display for Bytes {
    /// Shortest exact binary form: 8192 → "8K", 9000 → "9000", 131072 → "128K".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (m, u) in [(Self::GIB, "G"), (Self::MIB, "M"), (Self::KIB, "K")] {
            if n >= m && n.is_multiple_of(m) {
                return write!(f, "{}{u}", n / m);
            }
        }
        write!(f, "{n}")
    }
}

/// A rate in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BitsPerSec(pub f64);

impl BitsPerSec {
    /// Parses "1gbit", "1G", "100mbit", "500M", "25000000", "1.5gbit".
    pub fn parse(s: &str) -> Result<Self, UnitError> {
        let err = || UnitError {
            value: s.to_string(),
            expected: "a rate such as 1gbit, 100mbit or 10G (bits per second)",
        };
        let t = s.trim().to_ascii_lowercase();
        let (num, unit) = split_number(&t);
        let f: f64 = num.parse().map_err(|_| err())?;
        let unit = unit.trim().trim_end_matches("/s").trim_end_matches("bps");
        let unit = unit.trim_end_matches("bit");
        let mult = match unit {
            "" => 1.0,
            "k" => 1e3,
            "m" => 1e6,
            "g" => 1e9,
            "t" => 1e12,
            _ => return Err(err()),
        };
        let v = f * mult;
        if !v.is_finite() || v <= 0.0 {
            return Err(err());
        }
        Ok(BitsPerSec(v))
    }

    pub fn from_bytes(bytes: u64, over: Duration) -> Self {
        let s = over.as_secs_f64();
        if s <= 0.0 {
            return BitsPerSec(0.0);
        }
        BitsPerSec(bytes as f64 * 8.0 / s)
    }

    pub fn gbit(self) -> f64 {
        self.0 / 1e9
    }

    /// The same rate in MiB/s (bytes, binary mega).
    pub fn mib_per_sec(self) -> f64 {
        self.0 / 8.0 / Bytes::MIB as f64
    }
}

impl fmt::Display for BitsPerSec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v >= 1e9 {
            write!(f, "{:.2} Gbit/s", v / 1e9)
        } else if v >= 1e6 {
            write!(f, "{:.1} Mbit/s", v / 1e6)
        } else {
            write!(f, "{:.1} kbit/s", v / 1e3)
        }
    }
}

/// Parses "10s", "500ms", "2m", "1.5s", "250us", "1h"; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let err = || UnitError {
        value: s.to_string(),
        expected: "a duration such as 10s, 500ms, 2m or 1.5s",
    };
    let t = s.trim().to_ascii_lowercase();
    let (num, unit) = split_number(&t);
    let f: f64 = num.parse().map_err(|_| err())?;
    let secs = match unit.trim() {
        "" | "s" | "sec" => f,
        "ms" => f / 1e3,
        "us" | "µs" => f / 1e6,
        "ns" => f / 1e9,
        "m" | "min" => f * 60.0,
        "h" => f * 3600.0,
        _ => return Err(err()),
    };
    Duration::try_from_secs_f64(secs).map_err(|_| err())
}

/// Formats a duration the way `parse_duration` reads it back (shortest natural unit).
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0s".into()
    } else if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns >= 1_000_000_000 {
        format!("{:.3}s", d.as_secs_f64())
    } else {
        format!("{}us", ns / 1000)
    }
}

/// A whole count with an optional SI suffix (k = 1000, M, G): "5000", "10k",
/// "2.5k", "1M" (request rates). A fraction that leaves no whole count is refused.
pub fn parse_count(s: &str) -> Result<u64, UnitError> {
    let err = || UnitError {
        value: s.to_string(),
        expected: "a whole count such as 5000, 10k, 2.5k or 1M",
    };
    let (num, unit) = split_number(s.trim());
    let mult: u64 = match unit.trim() {
        "" => 1,
        "k" | "K" => 1000,
        "M" | "m" => 1_000_000,
        "G" | "g" => 1_000_000_000,
        _ => return Err(err()),
    };
    if let Ok(n) = num.parse::<u64>() {
        return n.checked_mul(mult).ok_or_else(err);
    }
    let f: f64 = num.parse().map_err(|_| err())?;
    let v = f * mult as f64;
    if !v.is_finite() || v < 0.0 || v > u64::MAX as f64 || v.fract() != 0.0 {
        return Err(err());
    }
    Ok(v as u64)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        let cases = [
            ("9000", 9000),
            ("8K", 8192),
            ("8k", 8192),
            ("8KiB", 8192),
            ("128K", 131_072),
            ("1M", 1_048_576),
            ("1.5K", 1536),
            ("4KB", 4000),
            ("1G", 1 << 30),
        ];
        for (s, v) in cases {
            assert_eq!(Bytes::parse(s).unwrap(), Bytes(v), "{s}");
        }
        for bad in ["", "K", "8X", "-1", "1.3", "99999999999999999999G"] {
            assert!(Bytes::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Bytes(8192).to_string(), "8K");
        assert_eq!(Bytes(9000).to_string(), "9000");
    }

    #[test]
    fn rates() {
        assert!((BitsPerSec::parse("1gbit").unwrap().0 - 1e9).abs() < 1.0);
        assert!((BitsPerSec::parse("100mbit").unwrap().0 - 1e8).abs() < 1.0);
        assert!((BitsPerSec::parse("10G").unwrap().0 - 1e10).abs() < 1.0);
        assert!(BitsPerSec::parse("fast").is_err());
        assert!(BitsPerSec::parse("0").is_err());
        let r = BitsPerSec::from_bytes(125_000_000, Duration::from_secs(1));
        assert!((r.gbit() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_mins(2));
        assert_eq!(parse_duration("3").unwrap(), Duration::from_secs(3));
        assert_eq!(
            parse_duration("1.5s").unwrap(),
            Duration::from_millis(1_500)
        );
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("-1s").is_err());
        assert_eq!(format_duration(Duration::from_millis(1_500)), "1500ms");
        assert_eq!(format_duration(Duration::from_micros(1_500_001)), "1.500s");
        assert_eq!(format_duration(Duration::from_millis(200)), "200ms");
    }

    #[test]
    fn counts_take_si_suffixes_and_whole_decimals() {
        for (text, want) in [
            ("5000", 5000),
            ("10k", 10_000),
            ("2.5k", 2500),
            ("1M", 1_000_000),
            ("3 G", 3_000_000_000),
        ] {
            assert_eq!(super::parse_count(text), Ok(want), "{text}");
        }
        for bad in ["1.5", "", "k", "10x", "-1", "1e3"] {
            assert!(super::parse_count(bad).is_err(), "{bad}");
        }
    }
}
