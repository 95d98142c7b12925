//! The agent's log lines in words: the fixed facts it logs (its notes), naming the serve
//! flag that decides each, and the failures it logs after its own text (a refusal
//! naming the flag or limit that decides it).

use mtuperf_engine::agent::{Note, Said};
use mtuperf_proto::text::escape_control;

/// `n` as its log line's message.
pub fn note(n: &Note) -> String {
    match n {
        Note::NotAllowed => "not in --allow list".into(),
        Note::WatchWithoutKey => "watch needs a key (--key-file): no check runs".into(),
    }
}

/// A log line's message in words. The engine escaped its own text; the words of a
/// failure are escaped here, since a refusal may quote what a peer sent.
pub fn said(s: &Said) -> String {
    match s {
        Said::Text(t) => t.clone(),
        Said::Note(n) => note(n),
        Said::Failed { text, failed } => {
            format!("{text}{}", escape_control(&crate::refusal::failed(failed)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mtuperf_proto::failed::Failed;
    use mtuperf_proto::msg::Refusal;

    #[test]
    fn each_note_reads_as_its_log_line_did() {
        assert_eq!(note(&Note::NotAllowed), "not in --allow list");
        assert_eq!(
            note(&Note::WatchWithoutKey),
            "watch needs a key (--key-file): no check runs"
        );
        assert_eq!(said(&Said::Note(Note::NotAllowed)), "not in --allow list");
    }

    /// A failure in a log line reads as the line did when the engine worded it: its
    /// text, then the refusal's words (a peer's text escaped).
    #[test]
    fn a_logged_failure_reads_as_its_line_did() {
        let check = Said::Failed {
            text: "n2 (10.0.0.2:7878): check failed: ".into(),
            failed: Failed::Refused {
                refusal: Refusal::AuthFailed,
            },
        };
        assert_eq!(
            said(&check),
            "n2 (10.0.0.2:7878): check failed: authentication failed: the keys differ"
        );
        let peer = Said::Failed {
            text: "no test toward 10.0.0.3:7878: ".into(),
            failed: Failed::Refused {
                refusal: Refusal::NotAllowed {
                    peer: "10.0.0.1\n2026 forged".into(),
                },
            },
        };
        assert_eq!(
            said(&peer),
            "no test toward 10.0.0.3:7878: address 10.0.0.1\\n2026 forged is not allowed by the agent's --allow list"
        );
        let error = Said::Failed {
            text: "n2 (n2): check failed: ".into(),
            failed: Failed::error("cannot resolve n2: no such host"),
        };
        assert_eq!(
            said(&error),
            "n2 (n2): check failed: cannot resolve n2: no such host"
        );
        assert_eq!(said(&Said::Text("plain".into())), "plain");
    }
}
