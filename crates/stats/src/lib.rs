//! Statistics for repeated runs and for comparing paths.
//!
//! Pure functions on slices of samples (one sample per whole run, as netperf repeats
//! whole runs): no I/O, no clocks, results serialisable with serde.
//!
//! * [`summarize`], [`Summary`], [`percentile`]: mean, median, spread and the 95% Student t
//!   interval of the mean.
//! * [`t_quantile`]: the Student t inverse CDF those intervals need.
//! * [`welch`], [`rel_diff`], [`RelDiff`]: path B against path A with a 95% interval.
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

pub use compare::{rel_diff, welch, RelDiff};
pub use knee::{knee, KNEE_MIN_GAIN};
pub use summary::{percentile, summarize, Summary};
pub use tdist::t_quantile;
