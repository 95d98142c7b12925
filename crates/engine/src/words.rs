//! The words for the engine's typed outcomes that still become text inside the engine:
//! an [`EngineError::Refused`](crate::EngineError::Refused)'s message (which a mesh
//! agent passes on to its asker, and which `rr --from` and the watch keep as text), and
//! the agent's notes in its log ([`Note`]).
//!
//! The words live in report, above the engine, and name the CLI's flags; the binary
//! installs them once at start ([`install`]). Without them (the engine's own tests) a
//! refusal or a note reads as its Debug form, which names no flag.

use std::sync::OnceLock;

use mtuperf_proto::msg::Refusal;

/// What the agent notes in its log that is a fixed fact rather than figures: its words
/// name the serve flag that decides it, so they are report's (installed here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Note {
    /// A connection from an address outside the agent's allow list, refused.
    NotAllowed,
    /// The watch was asked for, but the agent holds no key: no check runs.
    WatchWithoutKey,
}

/// How refusals and agent notes read for people.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    pub refusal: fn(&Refusal) -> String,
    pub note: fn(&Note) -> String,
}

static WORDS: OnceLock<Words> = OnceLock::new();

/// Sets the words for this process; the first call wins (every caller passes the same).
pub fn install(words: Words) {
    let _ = WORDS.set(words);
}

/// `r` in the installed words, else its Debug form.
pub fn refusal(r: &Refusal) -> String {
    WORDS
        .get()
        .map_or_else(|| format!("refused: {r:?}"), |w| (w.refusal)(r))
}

/// `n` in the installed words, else its Debug form.
pub fn note(n: &Note) -> String {
    WORDS
        .get()
        .map_or_else(|| format!("{n:?}"), |w| (w.note)(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_words_a_refusal_and_a_note_read_as_their_debug_form() {
        // The engine's unit tests never install words.
        assert_eq!(refusal(&Refusal::AuthFailed), "refused: AuthFailed");
        assert_eq!(note(&Note::NotAllowed), "NotAllowed");
    }
}
