//! What one line of the agent's log says, typed where its words are report's: the
//! engine's own text (figures and names, which name no flag), a fixed fact ([`Note`]),
//! or a text followed by a failure whose refusal report words with the flag that
//! decides it. The binary's log function words a line
//! (`mtuperf_report::agent::said`); the engine holds no words of its own for them.

use mtuperf_proto::failed::Failed;

/// What the agent notes in its log that is a fixed fact rather than figures: its words
/// name the serve flag that decides it, so they are report's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Note {
    /// A connection from an address outside the agent's allow list, refused.
    NotAllowed,
    /// The watch was asked for, but the agent holds no key: no check runs.
    WatchWithoutKey,
}

/// A log line's message.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Said {
    /// The engine's own text, escaped.
    Text(String),
    /// A fixed fact.
    Note(Note),
    /// `text` (escaped), then `failed` in report's words (the caller escapes them:
    /// a refusal may quote what a peer sent).
    Failed { text: String, failed: Failed },
}

impl From<String> for Said {
    fn from(text: String) -> Said {
        Said::Text(text)
    }
}

/// The line without report's words, for the engine's own tests: a note or a refusal
/// as its Debug form, which names no flag.
impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Said::Text(t) => f.write_str(t),
            Said::Note(n) => write!(f, "{n:?}"),
            Said::Failed {
                text,
                failed: Failed::Error { text: e },
            } => write!(f, "{text}{e}"),
            Said::Failed { text, failed } => write!(f, "{text}{failed:?}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_proto::msg::Refusal;

    #[test]
    fn without_report_a_note_and_a_refusal_read_as_their_debug_form() {
        assert_eq!(Said::Note(Note::NotAllowed).to_string(), "NotAllowed");
        let refused = Said::Failed {
            text: "no test toward p: ".into(),
            failed: Failed::Refused {
                refusal: Refusal::AuthFailed,
            },
        };
        assert_eq!(
            refused.to_string(),
            "no test toward p: Refused { refusal: AuthFailed }"
        );
        let error = Said::Failed {
            text: "x: ".into(),
            failed: Failed::error("timed out"),
        };
        assert_eq!(error.to_string(), "x: timed out");
        assert_eq!(Said::from("plain".to_string()).to_string(), "plain");
    }
}
