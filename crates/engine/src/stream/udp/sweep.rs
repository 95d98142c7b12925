//! `--rate 1G,2G,max`: one run per rate, and the knee, RFC 2544 style: the highest
//! rate whose loss is at most the allowed loss. A step passes only when its sender
//! also offered what was asked (at least [`OFFERED_SHARE`] of it): a sender held back
//! by its own host (a full socket buffer or a shaping qdisc on its interface) did
//! not test that rate.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The share of the asked rate a step's sender must have offered.
pub const OFFERED_SHARE: f64 = 0.95;

/// One rate of a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SweepStep {
    /// The asked rate (0: as fast as possible).
    pub asked_bps: u64,
    pub offered_bps: f64,
    pub goodput_bps: f64,
    pub loss_pct: f64,
    pub passed: bool,
}

impl SweepStep {
    pub fn new(
        asked_bps: u64,
        offered_bps: f64,
        goodput_bps: f64,
        loss_pct: f64,
        max_loss_pct: f64,
    ) -> SweepStep {
        let offered_enough = asked_bps == 0 || offered_bps >= OFFERED_SHARE * asked_bps as f64;
        SweepStep {
            asked_bps,
            offered_bps,
            goodput_bps,
            loss_pct,
            passed: offered_enough && loss_pct <= max_loss_pct,
        }
    }

    /// The rate this step stands for: the asked one, or what "max" offered.
    pub fn rate_bps(&self) -> f64 {
        if self.asked_bps == 0 {
            self.offered_bps
        } else {
            self.asked_bps as f64
        }
    }
}

/// The knee: the passing step of the highest rate, if any passed.
pub fn knee(steps: &[SweepStep]) -> Option<SweepStep> {
    steps
        .iter()
        .filter(|s| s.passed)
        .max_by(|a, b| a.rate_bps().total_cmp(&b.rate_bps()))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knee_is_the_highest_passing_rate() {
        let g = 1e9;
        let steps = [
            SweepStep::new(500_000_000, 0.5 * g, 0.5 * g, 0.0, 0.1),
            SweepStep::new(900_000_000, 0.9 * g, 0.9 * g, 0.05, 0.1),
            // Lossy.
            SweepStep::new(1_200_000_000, 1.2 * g, 1.0 * g, 17.0, 0.1),
            // Held back by its own host: no loss, but 1.5G was never offered.
            SweepStep::new(1_500_000_000, 1.0 * g, 1.0 * g, 0.0, 0.1),
        ];
        assert!(!steps[2].passed && !steps[3].passed);
        assert_eq!(knee(&steps).map(|s| s.asked_bps), Some(900_000_000));
        assert_eq!(knee(&steps[2..]), None);
        let max = SweepStep::new(0, 3.0 * g, 3.0 * g, 0.0, 0.1);
        assert!(max.passed);
        assert_eq!(knee(&[steps[0], max]).map(|s| s.rate_bps()), Some(3.0 * g));
    }
}
