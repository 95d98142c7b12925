//! A path test's configuration.

use super::bounds::{MAX_EXPECT_MTU, MIN_EXPECT_MTU};
use super::ConfigError;

/// What one path test checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathConfig {
    /// IP packet size the path must carry both ways (None: the local interface MTU
    /// toward the agent).
    pub expect: Option<u32>,
}

impl PathConfig {
    /// Checks the expected size against what an IP packet can be.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self.expect {
            Some(m) if !(MIN_EXPECT_MTU..=MAX_EXPECT_MTU).contains(&m) => Err(ConfigError::Bad(
                format!("expected MTU {m} is outside {MIN_EXPECT_MTU} to {MAX_EXPECT_MTU}"),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expected_mtu_is_an_ip_packet_size() {
        assert_eq!(PathConfig::default().validate(), Ok(()));
        assert_eq!(PathConfig { expect: Some(9000) }.validate(), Ok(()));
        assert!(PathConfig { expect: Some(100) }.validate().is_err());
        assert!(PathConfig {
            expect: Some(70_000)
        }
        .validate()
        .is_err());
    }
}
