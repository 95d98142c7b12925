//! An rr test's configuration.

use std::time::Duration;

use mtuperf_proto::msg::rr::{RrBidir, RrHooks, RrProto};
use mtuperf_proto::msg::{Limits, RrRequest};

use super::bounds::{MAX_REQUEST, MAX_UDP_BLOCK};
use super::{at_most, ConfigError};

/// What one rr step does; `rr::run` takes it. [`RrConfig::wire`] is its wire form
/// once the client has bound its UDP ports and its `--bidir` responder.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)]
pub struct RrConfig {
    pub proto: RrProto,
    /// Response size in bytes (after the 40-byte header).
    pub block: u32,
    /// Request size in bytes (after the header).
    pub request: u32,
    /// Agent serving threads (None: the agent's core count, one for a single UDP client).
    pub workers: Option<u32>,
    pub clients: u32,
    pub time: Duration,
    /// Open-loop offered load in requests/s (None: closed loop).
    pub rate: Option<u64>,
    /// A UDP request unanswered this long is counted lost and re-sent.
    pub timeout: Duration,
    pub verify: bool,
    /// Client threads (None: one per core, at most one per client).
    pub threads: Option<u32>,
    pub interval: Duration,
    /// Both ends request and serve at once.
    pub bidir: bool,
    pub hooks: Option<RrHooks>,
    /// `--cpu`: pin the client's requester threads to these CPUs.
    pub cpus: Option<Vec<u32>>,
    /// `--agent-cpu`: ask the agent to pin its serving threads to these CPUs.
    pub agent_cpus: Option<Vec<u32>>,
    /// A step that gets no block back, stalls or loses the agent's report checks the
    /// path again to name the likely cause (`explain`); off for probes and
    /// third-party loads, which have their own deadlines.
    pub explain: bool,
}

impl Default for RrConfig {
    fn default() -> Self {
        RrConfig {
            proto: RrProto::Udp,
            block: 8 * 1024,
            request: 128,
            workers: None,
            clients: 1,
            time: Duration::from_secs(10),
            rate: None,
            timeout: Duration::from_millis(100),
            verify: false,
            threads: None,
            interval: Duration::from_secs(1),
            bidir: false,
            hooks: None,
            cpus: None,
            agent_cpus: None,
            explain: false,
        }
    }
}

impl RrConfig {
    /// The wire request, with the client's UDP source ports and its `--bidir`
    /// responder (both known only once the client has bound them).
    pub fn wire(&self, udp_ports: Vec<u16>, bidir: Option<RrBidir>) -> RrRequest {
        RrRequest {
            proto: self.proto,
            block: self.block,
            request: self.request,
            workers: self.workers.unwrap_or(0),
            clients: self.clients,
            duration_ms: self.time.as_millis() as u64,
            rate: self.rate,
            udp_ports,
            hooks: self.hooks,
            bidir,
            cpus: self.agent_cpus.clone(),
        }
    }

    /// The config a wire request asks for (the agent checks requests through it).
    pub fn from_request(req: &RrRequest) -> RrConfig {
        RrConfig {
            proto: req.proto,
            block: req.block,
            request: req.request,
            workers: (req.workers != 0).then_some(req.workers),
            clients: req.clients,
            time: Duration::from_millis(req.duration_ms),
            rate: req.rate,
            bidir: req.bidir.is_some(),
            hooks: req.hooks,
            agent_cpus: req.cpus.clone(),
            ..RrConfig::default()
        }
    }

    /// Checks what the protocol allows, whatever the agent's limits.
    pub fn check_shape(&self) -> Result<(), ConfigError> {
        if self.block == 0 || self.clients == 0 {
            return Err(ConfigError::Bad(
                "block and clients must be at least 1".into(),
            ));
        }
        if self.request > MAX_REQUEST {
            return Err(ConfigError::Bad(format!(
                "request size {} above {MAX_REQUEST} bytes",
                self.request
            )));
        }
        if self.proto == RrProto::Udp && self.block > MAX_UDP_BLOCK {
            return Err(ConfigError::Bad(format!(
                "block {} B does not fit one UDP datagram (at most {MAX_UDP_BLOCK} B after the 40-byte header; UDP carries at most 65507 B); use tcp",
                self.block
            )));
        }
        Ok(())
    }

    /// Checks the config against the protocol's bounds and an agent's `limits`.
    pub fn validate(&self, limits: &Limits) -> Result<(), ConfigError> {
        self.check_shape()?;
        at_most(
            "max-workers",
            self.workers.unwrap_or(0).into(),
            limits.max_workers.into(),
        )?;
        at_most(
            "max-clients",
            self.clients.into(),
            limits.max_clients.into(),
        )?;
        at_most("max-block", self.block.into(), limits.max_block.into())?;
        let ms = self.time.as_millis() as u64;
        if ms > limits.max_duration_ms {
            return Err(ConfigError::Limit {
                limit: "max-duration",
                requested: ms / 1000,
                allowed: limits.max_duration_ms / 1000,
            });
        }
        let bps = self
            .rate
            .unwrap_or(0)
            .saturating_mul(u64::from(self.block) + 40)
            .saturating_mul(8);
        at_most("max-rate", bps, limits.max_rate_bps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_request_carries_the_config_and_the_ports() {
        let c = RrConfig {
            proto: RrProto::Tcp,
            clients: 16,
            rate: Some(1000),
            workers: Some(4),
            bidir: true,
            ..RrConfig::default()
        };
        let req = c.wire(vec![5000], Some(RrBidir::default()));
        assert_eq!(req.udp_ports, vec![5000]);
        assert_eq!(RrConfig::from_request(&req), c);
    }

    #[test]
    fn validate_names_the_limit_or_the_rule() {
        let l = Limits::default();
        assert_eq!(RrConfig::default().validate(&l), Ok(()));
        let fast = RrConfig {
            rate: Some(u64::MAX),
            ..RrConfig::default()
        };
        assert!(matches!(
            fast.validate(&l),
            Err(ConfigError::Limit {
                limit: "max-rate",
                ..
            })
        ));
        let big = RrConfig {
            block: MAX_UDP_BLOCK + 1,
            ..RrConfig::default()
        };
        assert!(matches!(big.validate(&l), Err(ConfigError::Bad(m)) if m.contains("use tcp")));
    }
}
