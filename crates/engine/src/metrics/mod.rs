//! Prometheus metrics: the agent's own counters and the results of its watch checks,
//! as `prometheus` crate families (the crate does the exposition format), served on
//! `/metrics` by [`http`] and written by `mtuperf export --format openmetrics`.
//!
//! The Prometheus text format (0.0.4), not OpenMetrics 1.0: Prometheus scrapes both,
//! but `promtool check metrics` (and node_exporter's textfile collector) read only
//! the text format, and the OpenMetrics crate names a counter's family without its
//! `_total`, which promtool reports as a counter without help.
//!
//! Every family carries its unit in its name; every value says what it counts:
//! MTUs are IP packet sizes in bytes that crossed the path in one direction; latencies
//! are request→block round trips measured by the checking agent; times are Unix seconds.

pub mod http;
mod watch;

use prometheus::{Encoder, Registry, TextEncoder};

pub use watch::WatchMetrics;

use crate::agent::AgentCounters;

/// One registry: the watch families, and the agent's counters when it serves.
pub struct Metrics {
    registry: Registry,
    pub watch: WatchMetrics,
}

impl Metrics {
    /// The families of a running agent (`agent`: its counters) or, without one, of a
    /// history export (watch results only: the counters live only in a running agent).
    pub fn new(agent: Option<&AgentCounters>) -> Metrics {
        let registry = Registry::new();
        let watch = WatchMetrics::default();
        watch.register(&registry);
        if let Some(c) = agent {
            c.register(&registry);
        }
        Metrics { registry, watch }
    }

    /// The text exposition of every family with at least one series.
    pub fn encode(&self) -> String {
        let mut out = Vec::new();
        // Encoding our own families into memory cannot fail.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// The content type of [`Metrics::encode`].
pub const CONTENT_TYPE: &str = prometheus::TEXT_FORMAT;
