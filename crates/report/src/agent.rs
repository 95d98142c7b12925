//! The agent's log notes in words: the fixed facts it logs, naming the serve flag that
//! decides each.

use mtuperf_engine::agent::Note;

/// `n` as its log line's message.
pub fn note(n: &Note) -> String {
    match n {
        Note::NotAllowed => "not in --allow list".into(),
        Note::WatchWithoutKey => "watch needs a key (--key-file): no check runs".into(),
    }
}

/// The words the engine shows refusals and agent notes in (installed by the binary).
pub fn words() -> mtuperf_engine::words::Words {
    mtuperf_engine::words::Words {
        refusal: crate::refusal::refusal,
        note,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_note_reads_as_its_log_line_did() {
        assert_eq!(note(&Note::NotAllowed), "not in --allow list");
        assert_eq!(
            note(&Note::WatchWithoutKey),
            "watch needs a key (--key-file): no check runs"
        );
    }
}
