//! What a test is asked to do, owned by the engine: one config per test kind
//! (`StreamConfig`, `RrConfig`, `PathConfig`) with its defaults, the bounds every end applies
//! ([`bounds`]), and one `validate(&Limits)` that the CLI's value parsers, the
//! client and the agent all call. Wire requests are built from a config, and the
//! agent reads a request back into one to check it, so a bound lives here alone.

pub mod bounds;
mod path;
mod rr;
mod stream;
mod udp_stream;

use mtuperf_proto::msg::Refusal;

pub use path::PathConfig;
pub use rr::RrConfig;
pub use stream::{StreamConfig, StreamParams};
pub use udp_stream::UdpStreamConfig;

/// Why a config is refused: beyond an agent's limit (named by the agent flag that
/// sets it), or outside what the protocol allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{requested} is above the agent's --{limit} of {allowed}")]
    Limit {
        limit: &'static str,
        requested: u64,
        allowed: u64,
    },
    #[error("{0}")]
    Bad(String),
    /// `rr --from`: each of `hosts` client hosts needs at least one client and (with
    /// a rate) one request/s.
    #[error("{hosts} client host(s) need at least one client and one request/s each (clients {clients}, rate {})", rate.map_or("none".into(), |r| r.to_string()))]
    FromHosts {
        hosts: u64,
        clients: u32,
        rate: Option<u64>,
    },
}

impl From<ConfigError> for Refusal {
    fn from(e: ConfigError) -> Refusal {
        match e {
            ConfigError::Limit {
                limit,
                requested,
                allowed,
            } => Refusal::Limit {
                limit: limit.into(),
                requested,
                allowed,
            },
            e @ ConfigError::FromHosts { .. } => Refusal::BadRequest {
                detail: e.to_string(),
            },
            ConfigError::Bad(detail) => Refusal::BadRequest { detail },
        }
    }
}

/// A stream's (TCP or UDP) live interval against the protocol's minimum and its
/// planned length against the agent's `max-duration`.
fn interval_and_length(
    interval: Option<std::time::Duration>,
    limit: &mtuperf_proto::msg::StreamLimit,
    limits: &mtuperf_proto::msg::Limits,
) -> Result<(), ConfigError> {
    use bounds::MIN_INTERVAL_MS;
    if let Some(i) = interval {
        let ms = i.as_millis() as u64;
        if ms < MIN_INTERVAL_MS {
            return Err(ConfigError::Bad(format!(
                "interval of {ms} ms is below the protocol's minimum of {MIN_INTERVAL_MS} ms"
            )));
        }
    }
    if let mtuperf_proto::msg::StreamLimit::Time { ms } = *limit {
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

/// `Err(Limit)` when `requested` is above `allowed`.
fn at_most(limit: &'static str, requested: u64, allowed: u64) -> Result<(), ConfigError> {
    if requested > allowed {
        return Err(ConfigError::Limit {
            limit,
            requested,
            allowed,
        });
    }
    Ok(())
}
