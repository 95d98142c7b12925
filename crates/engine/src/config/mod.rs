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
            ConfigError::Bad(detail) => Refusal::BadRequest { detail },
        }
    }
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
