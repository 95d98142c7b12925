//! Statistics for repeated runs and for comparing paths.
//!
//! Pure functions on slices of samples (one sample per whole run, as netperf repeats
//! whole runs): no I/O, no clocks, results serialisable with serde.
//!
//! * [`summarize`], [`Summary`], [`percentile`]: mean, median, spread and a 95%
//!   interval (Student t of the mean; log-t for positive values where the t interval
//!   would reach 0; none below 3 values), which says how it was made.
//! * [`t_quantile`]: the Student t inverse CDF those intervals need.
//! * [`welch`], [`rel_diff`], [`RelDiff`]: path B against path A with a 95% interval
//!   (of the ratio, on a log scale; none below 3 runs per path).
//! * [`paired_rel_diff`]: the same over paired values (one unit, e.g. a node pair,
//!   measured both ways), whose units' own level cancels.
//! * [`knee`]: where a load sweep stops buying throughput.
//!
//! Samples must be finite: a NaN or an infinity makes every function here return `None`
//! (or NaN for [`t_quantile`]) rather than a number that looks valid.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod compare;
mod knee;
mod summary;
mod tdist;

pub use compare::{
    paired_rel_diff, rel_diff, welch, RelDiff, METHOD_LOG_RATIO, METHOD_NONE,
    METHOD_PAIRED_LOG_RATIO, MIN_N_FOR_INTERVAL,
};
pub use knee::{knee, KNEE_MIN_GAIN};
pub use summary::{percentile, summarize, CiMethod, Summary, MIN_N_FOR_CI};
pub use tdist::t_quantile;
