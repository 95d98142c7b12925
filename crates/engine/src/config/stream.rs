//! A stream test's configuration.

use std::sync::Arc;
use std::time::Duration;

use mtuperf_proto::msg::{default_rx_coalesce_us, Direction, Limits, StreamLimit, StreamRequest};

use super::bounds::{MAX_RX_COALESCE_US, MAX_RX_POLL_US};
use super::{at_most, interval_and_length, ConfigError};

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
    /// Receive coalescing (see `StreamRequest::rx_coalesce_us`); None: the default for
    /// the block ([`default_rx_coalesce_us`]: on below 64 KiB, off from it).
    pub rx_coalesce: Option<Duration>,
    /// Receive polling (see `StreamRequest::rx_poll_us`); zero: off.
    pub rx_poll: Duration,
    /// `--agent-cpu`: the CPUs the agent pins its data threads to (None: unpinned).
    pub agent_cpus: Option<Vec<u32>>,
    /// Senders send with `sendfile` (see `StreamRequest::zerocopy`).
    pub zerocopy: bool,
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
            rx_coalesce: None,
            rx_poll: Duration::ZERO,
            agent_cpus: None,
            zerocopy: false,
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
            rx_coalesce_us: self.rx_coalesce_us(),
            rx_poll_us: micros(self.rx_poll),
            zerocopy: self.zerocopy,
            cpus: self.agent_cpus.clone(),
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
            rx_coalesce: Some(Duration::from_micros(req.rx_coalesce_us.into())),
            rx_poll: Duration::from_micros(req.rx_poll_us.into()),
            agent_cpus: req.cpus.clone(),
            zerocopy: req.zerocopy,
        }
    }

    /// The receive coalescing asked of the receivers, in µs: the user's, or the
    /// default for the block (none for polling receivers).
    pub fn rx_coalesce_us(&self) -> u32 {
        match self.rx_coalesce {
            Some(d) => micros(d),
            None if !self.rx_poll.is_zero() => 0,
            None => default_rx_coalesce_us(self.block),
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
        let coalesce_us = self.rx_coalesce_us();
        if coalesce_us > MAX_RX_COALESCE_US {
            return Err(ConfigError::Bad(format!(
                "receive coalescing of {coalesce_us} µs is above the protocol's maximum of {MAX_RX_COALESCE_US} µs"
            )));
        }
        let poll_us = micros(self.rx_poll);
        if poll_us > MAX_RX_POLL_US {
            return Err(ConfigError::Bad(format!(
                "receive polling of {poll_us} µs is above the protocol's maximum of {MAX_RX_POLL_US} µs"
            )));
        }
        if poll_us > 0 && coalesce_us > 0 {
            return Err(ConfigError::Bad(format!(
                "receive polling ({poll_us} µs) and receive coalescing ({coalesce_us} µs) exclude each other: a polling receiver never sleeps"
            )));
        }
        interval_and_length(self.interval, &self.limit, limits)
    }
}

/// `d` in whole µs, saturated.
fn micros(d: Duration) -> u32 {
    u32::try_from(d.as_micros()).unwrap_or(u32::MAX)
}

/// What to run.
#[derive(Debug, Clone)]
pub struct StreamParams {
    pub request: StreamRequest,
    /// Send this content instead of generated bytes (forward direction only).
    pub file: Option<(String, Arc<[u8]>)>,
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
            agent_cpus: Some(vec![0, 2]),
            rx_coalesce: Some(Duration::from_micros(50)),
            ..StreamConfig::default()
        };
        assert_eq!(StreamConfig::from_request(&c.request()), c);
    }

    #[test]
    fn coalescing_is_on_below_64_kib_blocks_off_from_them_unless_asked() {
        let us = |block, asked: Option<u64>| {
            StreamConfig {
                block,
                rx_coalesce: asked.map(Duration::from_micros),
                ..StreamConfig::default()
            }
            .request()
            .rx_coalesce_us
        };
        assert_eq!(us(8 * 1024, None), 200);
        assert_eq!(us(64 * 1024 - 1, None), 200);
        assert_eq!(us(64 * 1024, None), 0);
        assert_eq!(us(128 * 1024, None), 0);
        assert_eq!(StreamConfig::default().request().rx_coalesce_us, 0);
        assert_eq!(
            StreamConfig::timed(8192, Duration::from_secs(1))
                .request()
                .rx_coalesce_us,
            200
        );
        // What the user asks for wins, both ways.
        assert_eq!(us(128 * 1024, Some(200)), 200);
        assert_eq!(us(8 * 1024, Some(0)), 0);
    }

    #[test]
    fn polling_receivers_do_not_coalesce_and_both_asked_is_refused() {
        let l = Limits::default();
        let poll = StreamConfig {
            block: 8192,
            rx_poll: Duration::from_micros(50),
            ..StreamConfig::default()
        };
        let req = poll.request();
        assert_eq!((req.rx_poll_us, req.rx_coalesce_us), (50, 0));
        assert_eq!(poll.validate(&l), Ok(()));
        assert_eq!(StreamConfig::from_request(&req).validate(&l), Ok(()));
        let both = StreamConfig {
            rx_coalesce: Some(Duration::from_micros(200)),
            ..poll.clone()
        };
        assert!(
            matches!(both.validate(&l), Err(ConfigError::Bad(m)) if m.contains("exclude each other")),
            "{:?}",
            both.validate(&l)
        );
        let long = StreamConfig {
            rx_poll: Duration::from_millis(11),
            ..poll
        };
        assert!(matches!(long.validate(&l), Err(ConfigError::Bad(m)) if m.contains("10000 µs")));
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
