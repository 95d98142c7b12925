//! A UDP stream test's configuration (`stream --udp`).

use std::time::Duration;

use mtuperf_proto::msg::udp::{UdpIo, UdpStreamRequest, MAX_UDP_BLOCK, MIN_UDP_BLOCK};
use mtuperf_proto::msg::{Direction, Limits, StreamLimit};

use super::{at_most, interval_and_length, ConfigError};

/// The most sockets per direction a UDP stream may ask for (each has a thread).
pub const MAX_UDP_STREAMS: u32 = 64;

/// What one UDP stream test does. [`UdpStreamConfig::request`] is its wire form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UdpStreamConfig {
    pub streams: u32,
    pub direction: Direction,
    /// UDP payload bytes per datagram.
    pub block: u32,
    pub limit: StreamLimit,
    /// Offered bit/s of UDP payload per direction; 0 = as fast as the agent allows.
    pub rate_bps: u64,
    pub window: Option<u32>,
    pub interval: Option<Duration>,
    /// `--cpu`: the CPUs this end pins its data threads to (not sent: None when
    /// read back from a request).
    pub cpus: Option<Vec<u32>>,
    /// `--agent-cpu`: the CPUs the agent pins its data threads to.
    pub agent_cpus: Option<Vec<u32>>,
    /// `--udp-io`: the most both ends may use to move datagrams.
    pub io: UdpIo,
}

impl Default for UdpStreamConfig {
    fn default() -> Self {
        UdpStreamConfig {
            streams: 1,
            direction: Direction::Forward,
            block: 8192,
            limit: StreamLimit::Time { ms: 10_000 },
            rate_bps: 1_000_000_000,
            window: None,
            interval: None,
            cpus: None,
            agent_cpus: None,
            io: UdpIo::default(),
        }
    }
}

impl UdpStreamConfig {
    /// The wire request, with the client's source port of each index.
    pub fn request(&self, ports: Vec<u16>) -> UdpStreamRequest {
        UdpStreamRequest {
            streams: self.streams,
            direction: self.direction,
            block: self.block,
            limit: self.limit,
            rate_bps: self.rate_bps,
            window: self.window,
            interval_ms: self.interval.map_or(0, |d| d.as_millis() as u64),
            ports,
            cpus: self.agent_cpus.clone(),
            io: self.io,
        }
    }

    /// The config a wire request asks for (the agent checks requests through it).
    pub fn from_request(req: &UdpStreamRequest) -> UdpStreamConfig {
        UdpStreamConfig {
            streams: req.streams,
            direction: req.direction,
            block: req.block,
            limit: req.limit,
            rate_bps: req.rate_bps,
            window: req.window,
            interval: (req.interval_ms != 0).then(|| Duration::from_millis(req.interval_ms)),
            cpus: None,
            agent_cpus: req.cpus.clone(),
            io: req.io,
        }
    }

    /// Sockets per end.
    pub fn connections(&self) -> u32 {
        self.request(Vec::new()).connections()
    }

    /// Checks the config against the protocol's bounds and an agent's `limits`
    /// (--max-streams, --max-block, --max-rate, --max-duration).
    pub fn validate(&self, limits: &Limits) -> Result<(), ConfigError> {
        if self.streams == 0 || self.streams > MAX_UDP_STREAMS {
            return Err(ConfigError::Bad(format!(
                "udp streams must be 1 to {MAX_UDP_STREAMS}, got {}",
                self.streams
            )));
        }
        if !(MIN_UDP_BLOCK..=MAX_UDP_BLOCK).contains(&self.block) {
            return Err(ConfigError::Bad(format!(
                "udp block must be {MIN_UDP_BLOCK} to {MAX_UDP_BLOCK} bytes (the datagram header to the largest IPv4 UDP payload), got {}",
                self.block
            )));
        }
        at_most(
            "max-streams",
            self.streams.into(),
            limits.max_streams.into(),
        )?;
        at_most("max-block", self.block.into(), limits.max_block.into())?;
        at_most("max-rate", self.rate_bps, limits.max_rate_bps)?;
        interval_and_length(self.interval, &self.limit, limits)
    }

    /// The rate senders pace at: the asked one, or the agent's --max-rate for 0.
    pub fn paced_rate(&self, limits: &Limits) -> u64 {
        if self.rate_bps == 0 {
            limits.max_rate_bps
        } else {
            self.rate_bps.min(limits.max_rate_bps)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_limits_apply() {
        let limits = Limits {
            max_rate_bps: 1_000_000_000,
            ..Limits::default()
        };
        let ok = UdpStreamConfig::default();
        assert_eq!(ok.validate(&limits), Ok(()));
        let fast = UdpStreamConfig {
            rate_bps: 2_000_000_000,
            ..ok.clone()
        };
        assert!(matches!(
            fast.validate(&limits),
            Err(ConfigError::Limit {
                limit: "max-rate",
                ..
            })
        ));
        let max = UdpStreamConfig {
            rate_bps: 0,
            ..ok.clone()
        };
        assert_eq!(max.validate(&limits), Ok(()));
        assert_eq!(max.paced_rate(&limits), 1_000_000_000);
        for block in [39, 65_508] {
            let c = UdpStreamConfig {
                block,
                ..ok.clone()
            };
            assert!(
                matches!(c.validate(&limits), Err(ConfigError::Bad(_))),
                "{block}"
            );
        }
    }

    #[test]
    fn a_request_reads_back_into_the_same_config() {
        let c = UdpStreamConfig {
            streams: 3,
            direction: Direction::Bidir,
            rate_bps: 5,
            window: Some(1 << 20),
            interval: Some(Duration::from_millis(250)),
            agent_cpus: Some(vec![1]),
            io: UdpIo::Batch,
            ..UdpStreamConfig::default()
        };
        let req = c.request(vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(req.connections(), 6);
        assert_eq!(UdpStreamConfig::from_request(&req), c);
    }
}
