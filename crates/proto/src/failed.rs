//! An error as a result keeps it, and as the wire carries it inside one: an agent's
//! refusal typed, so that report words it (naming the flag or limit that decides it),
//! and any other error as the engine's own text, which names no flag.
//!
//! It lives here, below both the engine (which fills it) and report (which words it),
//! because it crosses the wire inside interrupt causes ([`crate::interrupt`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::refusal::{Refusal, MAX_REFUSAL_TEXT};

/// Why something failed: a refusal, a peer agent's refusal, or another error's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Failed {
    /// The agent asked refused.
    Refused { refusal: Refusal },
    /// The agent asked ran a third-party test, and its peer agent `peer` refused it.
    PeerRefused { peer: String, refusal: Refusal },
    /// Any other error, in the engine's words.
    Error { text: String },
}

impl Failed {
    /// Another error, by its text.
    pub fn error(text: impl Into<String>) -> Failed {
        Failed::Error { text: text.into() }
    }

    /// The refusal that is the cause, when it is one (the agent's or its peer's).
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            Failed::Refused { refusal } | Failed::PeerRefused { refusal, .. } => Some(refusal),
            Failed::Error { .. } => None,
        }
    }

    /// Checks a decoded failure: its texts at most `max` bytes, a peer's name at most
    /// [`MAX_REFUSAL_TEXT`], a refusal as [`Refusal::check`].
    pub fn check(&self, max: usize) -> Result<(), String> {
        match self {
            Failed::Refused { refusal } => refusal.check(),
            Failed::PeerRefused { peer, refusal } => {
                if peer.len() > MAX_REFUSAL_TEXT {
                    return Err(format!(
                        "a refusing peer's name of {} bytes, at most {MAX_REFUSAL_TEXT} allowed",
                        peer.len()
                    ));
                }
                refusal.check()
            }
            Failed::Error { text } if text.len() > max => Err(format!(
                "an error's text of {} bytes, at most {max} allowed",
                text.len()
            )),
            Failed::Error { .. } => Ok(()),
        }
    }

    /// The failure cut to what [`Failed::check`] lets through with `max`.
    #[must_use]
    pub fn fit(&self, max: usize) -> Failed {
        match self {
            Failed::Refused { refusal } => Failed::Refused {
                refusal: refusal.fit(),
            },
            Failed::PeerRefused { peer, refusal } => {
                let mut peer = peer.clone();
                crate::text::cut_at(&mut peer, MAX_REFUSAL_TEXT);
                Failed::PeerRefused {
                    peer,
                    refusal: refusal.fit(),
                }
            }
            Failed::Error { text } => {
                let mut text = text.clone();
                crate::text::cut_at(&mut text, max);
                Failed::Error { text }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_too_large_is_refused_by_check_and_cut_by_fit() {
        let long = "é".repeat(400);
        let cases = [
            Failed::error(long.clone()),
            Failed::Refused {
                refusal: Refusal::BadRequest {
                    detail: long.clone(),
                },
            },
            Failed::PeerRefused {
                peer: long.clone(),
                refusal: Refusal::AuthFailed,
            },
            Failed::PeerRefused {
                peer: "10.0.0.2:7878".into(),
                refusal: Refusal::AgentCpus {
                    asked: vec![1; crate::msg::MAX_REFUSAL_CPUS + 1],
                    allowed: vec![0],
                    limit: crate::msg::CpuLimit::Online,
                },
            },
        ];
        for f in &cases {
            assert!(f.check(512).is_err(), "{f:?}");
            let fitted = f.fit(512);
            assert_eq!(fitted.check(512), Ok(()), "{fitted:?}");
            assert_eq!(std::mem::discriminant(&fitted), std::mem::discriminant(f));
        }
        let fine = Failed::PeerRefused {
            peer: "10.0.0.2:7878".into(),
            refusal: Refusal::AuthFailed,
        };
        assert_eq!(fine.check(512), Ok(()));
        assert_eq!(fine.fit(512), fine);
        assert_eq!(fine.refusal(), Some(&Refusal::AuthFailed));
        assert_eq!(Failed::error("x").refusal(), None);
    }
}
