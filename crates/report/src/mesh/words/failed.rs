//! Failed tests in words, grouped by cause: the cause in a few words, examples, and
//! what to do about it.

use mtuperf_engine::mesh::{PairError, TestFailureAt};
use mtuperf_proto::msg::Refusal;

use super::{esc, secs, test_label, Say, Words};

/// Why a failed test failed, in a few words (the grouped cause).
fn cause(e: &PairError) -> &'static str {
    match e {
        PairError::NoResult { .. } => {
            "the asked agent returned no result before the pair's deadline"
        }
        PairError::Unreachable { .. } => "the asked agent could not be reached",
        PairError::Refused {
            refusal: Refusal::PeerNotAuthenticated { .. },
            ..
        } => "the peer's agent refused the sender (its --allow list, or another key)",
        PairError::Refused {
            refusal: Refusal::Busy { .. },
            ..
        } => "the agents stayed busy (every session in use) until the pair's deadline",
        PairError::Refused {
            refusal: Refusal::Limit { .. },
            ..
        } => "beyond an agent's limit",
        PairError::Refused {
            refusal: Refusal::KeyRequired { .. },
            ..
        } => "the asked agent holds no key",
        PairError::Refused { .. } => "refused by the asked agent",
        PairError::Agent { .. } | PairError::PeerRefused { .. } => {
            "the asked agent reported an error"
        }
        PairError::Protocol { .. } => "an answer broke the protocol",
        PairError::Cut { .. } => "the load test ended early",
    }
}

/// What to do about failures of this cause.
fn next_step(e: &PairError, example: &str) -> String {
    match e {
        PairError::NoResult { .. } => "check the asked node's agent (mtuperf serve) and its host's load; --pair-timeout is each pair's deadline".into(),
        PairError::Unreachable { .. } => "start a keyed agent on the asked node (mtuperf serve --key-file ...) and check this host can reach it".into(),
        PairError::Refused {
            refusal: Refusal::PeerNotAuthenticated { .. },
            ..
        } => "give every agent the same --key-file and an --allow list that includes these networks' addresses, or leave these networks out with --net".into(),
        PairError::Refused {
            refusal: Refusal::Busy { .. },
            ..
        } => "raise the agents' --max-sessions, or lower --per-node".into(),
        PairError::Refused {
            refusal: Refusal::Limit { .. },
            ..
        } => "raise the agent limit named above, or lower --time".into(),
        PairError::Refused {
            refusal: Refusal::KeyRequired { .. },
            ..
        } => "start every agent with --key-file (the same key)".into(),
        PairError::Cut { .. } => format!("run mtuperf rr or stream {example} by hand"),
        PairError::Refused { .. }
        | PairError::PeerRefused { .. }
        | PairError::Agent { .. }
        | PairError::Protocol { .. } => {
            format!("mtuperf path {example}, to see the error in full")
        }
    }
}

impl Say<'_> {
    /// One failed test: "n1 → n2 on net C: n1's agent returned no result in 60.0 s".
    fn example(&self, x: &TestFailureAt) -> String {
        let who = |n: usize| self.node(n);
        let what = match &x.failure.error {
            PairError::NoResult { node, waited_ms } => format!(
                "{}'s agent returned no result in {}",
                who(*node),
                secs(*waited_ms)
            ),
            PairError::Unreachable { node, detail } | PairError::Protocol { node, detail } => {
                format!("{}: {}", who(*node), esc(detail))
            }
            PairError::Refused { node, refusal } => {
                format!(
                    "{}'s agent: {}",
                    who(*node),
                    esc(&crate::refusal::refusal(refusal))
                )
            }
            PairError::Agent { node, message } => {
                format!("{}'s agent: {}", who(*node), esc(message))
            }
            PairError::PeerRefused {
                node,
                peer,
                refusal,
            } => format!(
                "{}'s agent: {}",
                who(*node),
                esc(&crate::refusal::peer_refused(peer, refusal))
            ),
            PairError::Cut { causes } => {
                let why = crate::interrupt::words(causes).unwrap_or_default();
                format!("ended early: {}", esc(&why))
            }
        };
        format!(
            "{} {} → {} on {}: {what}",
            test_label(x.failure.test),
            who(x.from),
            who(x.to),
            self.net_name(x.net)
        )
    }

    pub(super) fn failed(
        &self,
        net: Option<usize>,
        count: usize,
        examples: &[TestFailureAt],
    ) -> Words {
        let Some(first) = examples.first() else {
            return Words {
                summary: format!("{count} tests failed"),
                evidence: String::new(),
                next: String::new(),
            };
        };
        let e = &first.failure.error;
        let tests = if count == 1 { "test" } else { "tests" };
        let on = net.map_or_else(String::new, |_| format!(" on {}", self.net(net)));
        let mut evidence: Vec<String> = examples.iter().map(|x| self.example(x)).collect();
        if count > examples.len() {
            evidence.push(format!("and {} more", count - examples.len()));
        }
        let example = format!(
            "from {} toward {}'s address on {}",
            self.node(first.from),
            self.node(first.to),
            self.net_name(first.net)
        );
        let eg = if count > 1 { "e.g. " } else { "" };
        Words {
            summary: format!("{count} {tests} failed{on}: {}", cause(e)),
            evidence: format!("{eg}{}", evidence.join("; ")),
            next: next_step(e, &example),
        }
    }
}
