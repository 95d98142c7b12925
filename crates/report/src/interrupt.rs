//! Why a run was interrupted, in words: the one wording of the engine's typed causes
//! (`interrupted_by` of stream, UDP stream and rr results, of a mesh third-party
//! summary and of an `rr --from` host's), for text, the series driver's message, the
//! exit code's note and a mesh's failed tests. The types live in
//! `mtuperf_proto::interrupt`, since they cross the wire; nothing else words them.

use mtuperf_proto::interrupt::{Interrupt, Side, Stalled};

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn end(e: Side) -> &'static str {
    match e {
        Side::Client => "this end",
        Side::Agent => "the agent",
    }
}

/// One cause, in words.
pub fn word(i: &Interrupt) -> String {
    match i {
        Interrupt::Signal => "stopped by a signal (Ctrl-C or SIGTERM)".into(),
        Interrupt::AgentSilent {
            silence_s,
            heard_ns,
        } => format!(
            "no word from the agent for {silence_s} s after {:.1} s",
            secs(*heard_ns)
        ),
        Interrupt::NoReport {
            wait_s,
            finished_ns,
        } => format!(
            "no report from the agent within {wait_s} s of this end's finish at {:.1} s",
            secs(*finished_ns)
        ),
        Interrupt::ControlSilent { at_ns } => format!(
            "no report from the agent (control connection silent) at {:.1} s",
            secs(*at_ns)
        ),
        Interrupt::AgentFailed { at_ns, message } => {
            format!("the agent failed at {:.1} s: {message}", secs(*at_ns))
        }
        Interrupt::AgentAnswer { error } => crate::refusal::failed(error),
        Interrupt::AgentGone { at_ns, error } => format!(
            "the agent went away at {:.1} s ({error}); only this end's figures are complete",
            secs(*at_ns)
        ),
        Interrupt::ReportNeverCame => "the agent's report never came".into(),
        Interrupt::Connection {
            end: e,
            index,
            error,
            more: 0,
        } => format!("{}, connection {index}: {error}", end(*e)),
        Interrupt::Connection {
            end: e,
            index,
            error,
            more,
        } => format!(
            "{}, connection {index}: {error} (and {more} more connections)",
            end(*e)
        ),
        Interrupt::Socket {
            end: e,
            index,
            error,
        } => format!("{}, socket {index}: {error}", end(*e)),
        Interrupt::Requester { error } => format!("this end: {error}"),
        Interrupt::AgentMaxDuration { secs } => format!(
            "ended at the agent's maximum duration of {secs} s (serve --max-duration) before all bytes were sent"
        ),
        Interrupt::Stalled { what, spans } => {
            let what = match what {
                Stalled::Bytes => "no bytes moved between this end and the agent",
                Stalled::Blocks => "no block came back from the agent",
            };
            let parts: Vec<String> = spans
                .iter()
                .map(|s| format!("{:.1} s to {:.1} s", secs(s.from_ns), secs(s.to_ns)))
                .collect();
            format!("stalled: {what} from {}", parts.join(", and from "))
        }
        Interrupt::AgentSide => "the agent marked its side interrupted".into(),
        Interrupt::FromHostsMissing { measured, hosts } => {
            format!("{measured} of {hosts} --from hosts measured, the totals are theirs")
        }
        Interrupt::FromHostFailed { host, error } => {
            format!("{host} failed: {}", crate::refusal::failed(error))
        }
        // A host's causes are worded as the host would have worded them itself.
        Interrupt::FromHost { host, causes } => match words(causes) {
            Some(why) => format!("{host}: {why}"),
            None => format!("{host}: ended early"),
        },
    }
}

/// The causes in words, "; "-separated (None: not interrupted).
pub fn words(causes: &[Interrupt]) -> Option<String> {
    (!causes.is_empty()).then(|| causes.iter().map(word).collect::<Vec<_>>().join("; "))
}

#[cfg(test)]
mod tests {
    use super::{word, words};
    use mtuperf_proto::failed::Failed;
    use mtuperf_proto::interrupt::{Interrupt, Side, Span, Stalled};
    use mtuperf_proto::msg::Refusal;

    #[test]
    fn each_cause_has_its_words() {
        let s = 1_000_000_000;
        let cases = [
            (Interrupt::Signal, "stopped by a signal (Ctrl-C or SIGTERM)"),
            (
                Interrupt::AgentSilent {
                    silence_s: 10,
                    heard_ns: 4 * s,
                },
                "no word from the agent for 10 s after 4.0 s",
            ),
            (
                Interrupt::NoReport {
                    wait_s: 10,
                    finished_ns: 6_040_000_000,
                },
                "no report from the agent within 10 s of this end's finish at 6.0 s",
            ),
            (
                Interrupt::ControlSilent { at_ns: 2_500_000_000 },
                "no report from the agent (control connection silent) at 2.5 s",
            ),
            (
                Interrupt::AgentFailed {
                    at_ns: 2_500_000_000,
                    message: "disk full".into(),
                },
                "the agent failed at 2.5 s: disk full",
            ),
            (
                Interrupt::AgentAnswer {
                    error: Failed::error("protocol error: expected rr report, got Ack"),
                },
                "protocol error: expected rr report, got Ack",
            ),
            (
                Interrupt::AgentAnswer {
                    error: Failed::Refused {
                        refusal: Refusal::UnknownSession,
                    },
                },
                "unknown or expired session cookie",
            ),
            (
                Interrupt::AgentGone {
                    at_ns: 2_500_000_000,
                    error: "closed".into(),
                },
                "the agent went away at 2.5 s (closed); only this end's figures are complete",
            ),
            (Interrupt::ReportNeverCame, "the agent's report never came"),
            (
                Interrupt::Connection {
                    end: Side::Client,
                    index: 1,
                    error: "reset".into(),
                    more: 0,
                },
                "this end, connection 1: reset",
            ),
            (
                Interrupt::Connection {
                    end: Side::Agent,
                    index: 0,
                    error: "reset".into(),
                    more: 3,
                },
                "the agent, connection 0: reset (and 3 more connections)",
            ),
            (
                Interrupt::Socket {
                    end: Side::Agent,
                    index: 2,
                    error: "refused".into(),
                },
                "the agent, socket 2: refused",
            ),
            (
                Interrupt::Requester {
                    error: "timeout".into(),
                },
                "this end: timeout",
            ),
            (
                Interrupt::AgentMaxDuration { secs: 2 },
                "ended at the agent's maximum duration of 2 s (serve --max-duration) before all bytes were sent",
            ),
            (
                Interrupt::Stalled {
                    what: Stalled::Bytes,
                    spans: vec![
                        Span {
                            from_ns: 2 * s,
                            to_ns: 6 * s,
                        },
                        Span {
                            from_ns: 7 * s,
                            to_ns: 9 * s,
                        },
                    ],
                },
                "stalled: no bytes moved between this end and the agent from 2.0 s to 6.0 s, and from 7.0 s to 9.0 s",
            ),
            (
                Interrupt::Stalled {
                    what: Stalled::Blocks,
                    spans: vec![Span {
                        from_ns: 2 * s,
                        to_ns: 6 * s,
                    }],
                },
                "stalled: no block came back from the agent from 2.0 s to 6.0 s",
            ),
            (Interrupt::AgentSide, "the agent marked its side interrupted"),
            (
                Interrupt::FromHostsMissing {
                    measured: 1,
                    hosts: 2,
                },
                "1 of 2 --from hosts measured, the totals are theirs",
            ),
            (
                Interrupt::FromHostFailed {
                    host: "10.0.0.2:5201".into(),
                    error: Failed::error("protocol error: closed"),
                },
                "10.0.0.2:5201 failed: protocol error: closed",
            ),
            (
                Interrupt::FromHostFailed {
                    host: "10.0.0.2:5201".into(),
                    error: Failed::PeerRefused {
                        peer: "10.0.0.9:7878".into(),
                        refusal: Refusal::Limit {
                            limit: "max-clients".into(),
                            requested: 3,
                            allowed: 2,
                        },
                    },
                },
                "10.0.0.2:5201 failed: agent error: the peer agent 10.0.0.9:7878 refused: request beyond the agent's limit --max-clients: asked 3, allowed 2",
            ),
            (
                Interrupt::FromHost {
                    host: "10.0.0.2:5201".into(),
                    causes: vec![Interrupt::Signal],
                },
                "10.0.0.2:5201: stopped by a signal (Ctrl-C or SIGTERM)",
            ),
            (
                Interrupt::FromHost {
                    host: "10.0.0.2:5201".into(),
                    causes: vec![
                        Interrupt::Stalled {
                            what: Stalled::Blocks,
                            spans: vec![Span {
                                from_ns: 2 * s,
                                to_ns: 6 * s,
                            }],
                        },
                        Interrupt::Requester {
                            error: "timed out".into(),
                        },
                    ],
                },
                "10.0.0.2:5201: stalled: no block came back from the agent from 2.0 s to 6.0 s; this end: timed out",
            ),
            (
                Interrupt::FromHost {
                    host: "10.0.0.2:5201".into(),
                    causes: Vec::new(),
                },
                "10.0.0.2:5201: ended early",
            ),
        ];
        for (cause, want) in &cases {
            assert_eq!(word(cause), *want);
        }
        assert_eq!(words(&[]), None);
        assert_eq!(
            words(&[Interrupt::Signal, Interrupt::ReportNeverCame]).as_deref(),
            Some("stopped by a signal (Ctrl-C or SIGTERM); the agent's report never came")
        );
    }
}
