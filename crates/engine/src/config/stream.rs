//! A stream test's configuration.

use std::time::Duration;

use mtuperf_proto::msg::{Direction, Limits, StreamLimit, StreamRequest, DEFAULT_RX_COALESCE_US};

use super::bounds::{MAX_RX_COALESCE_US, MIN_INTERVAL_MS};
use super::{at_most, ConfigError};
use crate::stream::StreamParams;

/// What one stream test does. [`StreamConfig::request`] is its wire form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamConfig {
    /// Parallel TCP connections per direction.
    pub streams: u32,
    pub direction: Direction,
    /// Bytes per write() and read().
    pub block: u32,
    pub limit: StreamLimit,
    /// SO_SNDBUF/SO_RCVBUF to request on the data sockets.
    pub window: Option<u32>,
    /// TCP_MAXSEG to request on the data sockets.
    pub mss: Option<u32>,
    /// Live interval length (None: no live lines; the agent still reports per second).
    pub interval: Option<Duration>,
    /// Warm-up excluded from the summary.
    pub omit: Duration,
    /// Receive coalescing (see `StreamRequest::rx_coalesce_us`).
    pub rx_coalesce: Duration,
}

impl Default for StreamConfig {
    fn default() -> Self {
        StreamConfig {
            streams: 1,
            direction: Direction::Forward,
            block: 128 * 1024,
            limit: StreamLimit::Time { ms: 10_000 },
            window: None,
            mss: None,
            interval: None,
            omit: Duration::ZERO,
            rx_coalesce: Duration::from_micros(DEFAULT_RX_COALESCE_US.into()),
        }
    }
}

impl StreamConfig {
    /// One forward stream of `block`-sized writes for `time` (compare, doctor's
    /// probe, the demo).
    pub fn timed(block: u32, time: Duration) -> StreamConfig {
        StreamConfig {
            block,
            limit: StreamLimit::Time {
                ms: time.as_millis() as u64,
            },
            ..StreamConfig::default()
        }
    }

    /// The wire request.
    pub fn request(&self) -> StreamRequest {
        StreamRequest {
            streams: self.streams,
            direction: self.direction,
            block: self.block,
            limit: self.limit,
            window: self.window,
            mss: self.mss,
            interval_ms: self.interval.map_or(0, |d| d.as_millis() as u64),
            omit_ms: self.omit.as_millis() as u64,
            rx_coalesce_us: u32::try_from(self.rx_coalesce.as_micros()).unwrap_or(u32::MAX),
        }
    }

    /// The config a wire request asks for (the agent checks requests through it).
    pub fn from_request(req: &StreamRequest) -> StreamConfig {
        StreamConfig {
            streams: req.streams,
            direction: req.direction,
            block: req.block,
            limit: req.limit,
            window: req.window,
            mss: req.mss,
            interval: (req.interval_ms != 0).then(|| Duration::from_millis(req.interval_ms)),
            omit: Duration::from_millis(req.omit_ms),
            rx_coalesce: Duration::from_micros(req.rx_coalesce_us.into()),
        }
    }

    /// What to run: this config's request, with generated data.
    pub fn params(&self) -> StreamParams {
        StreamParams {
            request: self.request(),
            file: None,
        }
    }

    /// Checks the config against the protocol's bounds and an agent's `limits`.
    pub fn validate(&self, limits: &Limits) -> Result<(), ConfigError> {
        if self.streams == 0 || self.block == 0 {
            return Err(ConfigError::Bad(
                "streams and block must be at least 1".into(),
            ));
        }
        at_most(
            "max-streams",
            self.streams.into(),
            limits.max_streams.into(),
        )?;
        at_most("max-block", self.block.into(), limits.max_block.into())?;
        let coalesce_us = self.rx_coalesce.as_micros();
        if coalesce_us > MAX_RX_COALESCE_US.into() {
            return Err(ConfigError::Bad(format!(
                "receive coalescing of {coalesce_us} µs is above the protocol's maximum of {MAX_RX_COALESCE_US} µs"
            )));
        }
        if let Some(i) = self.interval {
            let ms = i.as_millis() as u64;
            if ms < MIN_INTERVAL_MS {
                return Err(ConfigError::Bad(format!(
                    "interval of {ms} ms is below the protocol's minimum of {MIN_INTERVAL_MS} ms"
                )));
            }
        }
        if let StreamLimit::Time { ms } = self.limit {
            if ms > limits.max_duration_ms {
                return Err(ConfigError::Limit {
                    limit: "max-duration",
                    requested: ms / 1000,
                    allowed: limits.max_duration_ms / 1000,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_reads_back_into_the_same_config() {
        let c = StreamConfig {
            streams: 4,
            direction: Direction::Bidir,
            interval: Some(Duration::from_millis(500)),
            omit: Duration::from_secs(2),
            window: Some(1 << 20),
            ..StreamConfig::default()
        };
        assert_eq!(StreamConfig::from_request(&c.request()), c);
    }

    #[test]
    fn validate_names_the_limit_or_the_rule() {
        let l = Limits::default();
        assert_eq!(StreamConfig::default().validate(&l), Ok(()));
        let many = StreamConfig {
            streams: l.max_streams + 1,
            ..StreamConfig::default()
        };
        assert!(
            matches!(
                many.validate(&l),
                Err(ConfigError::Limit {
                    limit: "max-streams",
                    ..
                })
            ),
            "{:?}",
            many.validate(&l)
        );
        let long = StreamConfig::timed(8192, Duration::from_millis(l.max_duration_ms + 1000));
        assert!(matches!(
            long.validate(&l),
            Err(ConfigError::Limit {
                limit: "max-duration",
                ..
            })
        ));
        let fine = StreamConfig {
            interval: Some(Duration::from_millis(1)),
            ..StreamConfig::default()
        };
        assert!(matches!(fine.validate(&l), Err(ConfigError::Bad(m)) if m.contains("minimum")));
    }
}
