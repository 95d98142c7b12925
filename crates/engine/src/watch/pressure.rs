//! The watch's rate under CPU shortage. At the start of each cycle the watch reads
//! the host's CPU pressure: the kernel's pressure stall information (PSI,
//! `/proc/pressure/cpu`, `some avg10`: the share of the last 10 s in which some
//! runnable task waited for a CPU) or, where the kernel has none (before 4.20, or
//! `psi=0`), the 1-minute load average over the online CPUs. Under pressure the
//! cycle's interval doubles, up to `--watch-max-slowdown` (at most [`MAX_FACTOR`])
//! times `--watch-every`; it halves again once the pressure has fallen. Checks never stop: a watch that went silent
//! under load would hide the very faults load brings out.

use std::path::PathBuf;

/// The longest stretch of the interval, and the default: a 5-minute watch checks at
/// least every 40 minutes, whatever the load.
pub const MAX_FACTOR: u32 = 8;

/// What a reading measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PressureKind {
    /// PSI `some avg10`, as a share (0 to 1).
    Psi,
    /// The 1-minute load average over the online CPUs (1: every CPU busy).
    LoadPerCpu,
}

impl PressureKind {
    /// (high, low): at or above `high` the rate halves; below `low` it doubles back.
    /// Between them it holds, so that a pressure near one threshold does not flap.
    pub fn thresholds(self) -> (f64, f64) {
        match self {
            // A quarter of the time some task waits for a CPU: the host is short.
            PressureKind::Psi => (0.25, 0.10),
            // Half again as many runnable tasks as CPUs.
            PressureKind::LoadPerCpu => (1.5, 1.0),
        }
    }

    /// The metric label and the log's name.
    pub fn name(self) -> &'static str {
        match self {
            PressureKind::Psi => "psi_some_avg10",
            PressureKind::LoadPerCpu => "loadavg_per_cpu",
        }
    }
}

/// One reading of the host's CPU pressure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuPressure {
    pub kind: PressureKind,
    pub value: f64,
}

impl CpuPressure {
    pub fn is_high(&self) -> bool {
        self.value >= self.kind.thresholds().0
    }

    pub fn is_low(&self) -> bool {
        self.value < self.kind.thresholds().1
    }
}

/// Where the watch reads the pressure: the host's by default ([`HostPressure`]); a
/// test gives its own.
pub trait PressureSource: Send {
    /// None when it cannot be read (then the rate goes back toward normal).
    fn read(&mut self) -> Option<CpuPressure>;
}

/// The host's pressure from `/proc`.
pub struct HostPressure {
    psi: PathBuf,
    loadavg: PathBuf,
    cpus: usize,
}

impl Default for HostPressure {
    fn default() -> Self {
        HostPressure {
            psi: "/proc/pressure/cpu".into(),
            loadavg: "/proc/loadavg".into(),
            cpus: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        }
    }
}

impl PressureSource for HostPressure {
    fn read(&mut self) -> Option<CpuPressure> {
        if let Some(value) = std::fs::read_to_string(&self.psi)
            .ok()
            .and_then(|t| parse_psi_some_avg10(&t))
        {
            return Some(CpuPressure {
                kind: PressureKind::Psi,
                value,
            });
        }
        let load = parse_loadavg(&std::fs::read_to_string(&self.loadavg).ok()?)?;
        Some(CpuPressure {
            kind: PressureKind::LoadPerCpu,
            value: load / self.cpus.max(1) as f64,
        })
    }
}

/// `some avg10=12.50 avg60=...` → 0.125.
fn parse_psi_some_avg10(text: &str) -> Option<f64> {
    let some = text.lines().find(|l| l.starts_with("some "))?;
    let v: f64 = some
        .split_whitespace()
        .find_map(|f| f.strip_prefix("avg10="))?
        .parse()
        .ok()?;
    // Percent to a share, without the division's float noise (0.98120000000000001).
    (v.is_finite() && v >= 0.0).then_some((v * 1e4).round() / 1e6)
}

/// `0.52 0.58 0.59 1/467 12345` → 0.52.
fn parse_loadavg(text: &str) -> Option<f64> {
    let v: f64 = text.split_whitespace().next()?.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// The watch's current rate: its interval is `--watch-every` times `factor`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// 1, 2, 4 or 8 ([`MAX_FACTOR`]); never 0.
    pub factor: u32,
    /// The reading it was decided on (None: unreadable).
    pub pressure: Option<CpuPressure>,
}

impl Default for Rate {
    fn default() -> Self {
        Rate {
            factor: 1,
            pressure: None,
        }
    }
}

impl Rate {
    /// The rate after `reading`: stretched under high pressure (up to `cap`, itself
    /// 1 to [`MAX_FACTOR`]), back toward normal under low (or unreadable) pressure,
    /// held in between.
    pub fn next(self, reading: Option<CpuPressure>, cap: u32) -> Rate {
        let cap = cap.clamp(1, MAX_FACTOR);
        let factor = match reading {
            Some(p) if p.is_high() => self.factor * 2,
            Some(p) if !p.is_low() => self.factor,
            _ => self.factor / 2,
        };
        Rate {
            factor: factor.clamp(1, cap),
            pressure: reading,
        }
    }

    /// Stretched: the watch checks less often than asked.
    pub fn reduced(&self) -> bool {
        self.factor > 1
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::float_cmp)]
mod tests {
    use super::*;

    #[allow(clippy::unnecessary_wraps)]
    fn psi(v: f64) -> Option<CpuPressure> {
        Some(CpuPressure {
            kind: PressureKind::Psi,
            value: v,
        })
    }

    #[test]
    fn parses_psi_and_loadavg() {
        let t = "some avg10=31.25 avg60=4.00 avg300=1.00 total=123\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_psi_some_avg10(t), Some(0.3125));
        assert_eq!(parse_psi_some_avg10("full avg10=1.00\n"), None);
        assert_eq!(parse_psi_some_avg10("some avg10=nan\n"), None);
        assert_eq!(parse_psi_some_avg10(""), None);
        assert_eq!(parse_loadavg("3.00 2.00 1.00 2/300 42\n"), Some(3.0));
        assert_eq!(parse_loadavg("x"), None);
        assert_eq!(parse_loadavg("-1 0 0"), None);
    }

    #[test]
    fn without_psi_the_load_average_over_the_cpus_is_read() {
        let dir = std::env::temp_dir().join(format!("mtuperf-psi-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let load = dir.join("loadavg");
        std::fs::write(&load, "6.00 1.00 1.00 1/100 7\n").unwrap();
        let mut src = HostPressure {
            psi: dir.join("absent"),
            loadavg: load,
            cpus: 4,
        };
        assert_eq!(
            src.read(),
            Some(CpuPressure {
                kind: PressureKind::LoadPerCpu,
                value: 1.5
            })
        );
        assert!(src.read().unwrap().is_high());
        std::fs::write(
            dir.join("psi"),
            "some avg10=5.00 avg60=0 avg300=0 total=1\n",
        )
        .unwrap();
        src.psi = dir.join("psi");
        assert_eq!(src.read(), psi(0.05));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn high_pressure_stretches_up_to_the_cap_low_brings_it_back_never_zero() {
        let mut r = Rate::default();
        let mut factors = Vec::new();
        for _ in 0..6 {
            r = r.next(psi(0.9), MAX_FACTOR);
            factors.push(r.factor);
        }
        assert_eq!(factors, [2, 4, 8, 8, 8, 8]);
        assert!(r.reduced());
        // Between the thresholds: held, no flapping.
        r = r.next(psi(0.15), MAX_FACTOR);
        assert_eq!(r.factor, 8);
        let mut down = Vec::new();
        for _ in 0..5 {
            r = r.next(psi(0.01), MAX_FACTOR);
            down.push(r.factor);
        }
        assert_eq!(down, [4, 2, 1, 1, 1]);
        assert!(!r.reduced());
        // Unreadable pressure is no reason to check less.
        assert_eq!(
            Rate {
                factor: 4,
                pressure: None
            }
            .next(None, MAX_FACTOR)
            .factor,
            2
        );
    }

    #[test]
    fn the_cap_bounds_the_stretch_and_one_turns_it_off() {
        let mut r = Rate::default();
        for _ in 0..4 {
            r = r.next(psi(1.0), 2);
        }
        assert_eq!(r.factor, 2);
        assert_eq!(Rate::default().next(psi(1.0), 1).factor, 1);
        // A cap out of range is taken as its nearest bound, never 0.
        assert_eq!(Rate::default().next(psi(1.0), 0).factor, 1);
        assert_eq!(r.next(psi(1.0), 99).factor, 4);
    }

    #[test]
    fn thresholds_are_inclusive_above_and_exclusive_below() {
        for kind in [PressureKind::Psi, PressureKind::LoadPerCpu] {
            let (high, low) = kind.thresholds();
            assert!(low < high, "{kind:?}");
            assert!(CpuPressure { kind, value: high }.is_high());
            assert!(!CpuPressure { kind, value: low }.is_low());
            assert!(CpuPressure {
                kind,
                value: low * 0.99
            }
            .is_low());
        }
    }
}
