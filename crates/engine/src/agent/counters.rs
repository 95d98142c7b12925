//! The agent's own counters (sessions, refusals by reason, handshake failures, test
//! bytes), exposed on `/metrics`. Each is an atomic from the `prometheus` crate,
//! bumped once per connection or per test, never per block.

use prometheus::{IntCounter, IntCounterVec, Opts, Registry};

use mtuperf_proto::msg::Refusal;

#[derive(Clone, Debug)]
pub struct AgentCounters {
    /// Control sessions admitted (through the handshake).
    pub sessions: IntCounter,
    /// Tests served (stream, rr, path, doctor requests handled).
    pub tests: IntCounter,
    /// Refusals sent, by the refusal's wire reason.
    pub refusals: IntCounterVec,
    /// Handshakes that failed: not mtuperf, bad frames, wrong proof, timeouts.
    pub handshake_failures: IntCounter,
    /// Payload bytes the agent sent and received in stream and rr tests, counted at
    /// each test's end.
    pub sent_bytes: IntCounter,
    pub received_bytes: IntCounter,
}

// The names are constants, valid by construction (the test below builds them).
#[allow(clippy::expect_used)]
fn counter(name: &str, help: &str) -> IntCounter {
    IntCounter::new(name, help).expect("a valid metric name")
}

impl Default for AgentCounters {
    // The names are constants, valid by construction (the test below builds them).
    #[allow(clippy::expect_used)]
    fn default() -> Self {
        AgentCounters {
            sessions: counter(
                "mtuperf_agent_sessions_total",
                "Control sessions admitted through the handshake",
            ),
            tests: counter(
                "mtuperf_agent_tests_total",
                "Tests served (stream, rr, path, doctor requests)",
            ),
            refusals: IntCounterVec::new(
                Opts::new(
                    "mtuperf_agent_refusals_total",
                    "Refusals sent to clients, by reason",
                ),
                &["reason"],
            )
            .expect("a valid metric name"),
            handshake_failures: counter(
                "mtuperf_agent_handshake_failures_total",
                "Connections whose handshake failed (not mtuperf, bad frame, wrong proof, timeout)",
            ),
            sent_bytes: counter(
                "mtuperf_agent_sent_bytes_total",
                "Payload bytes sent in stream and rr tests, counted at each test's end",
            ),
            received_bytes: counter(
                "mtuperf_agent_received_bytes_total",
                "Payload bytes received in stream and rr tests, counted at each test's end",
            ),
        }
    }
}

impl AgentCounters {
    pub fn refused(&self, r: &Refusal) {
        let reason = match serde_json::to_value(r) {
            Ok(v) => v
                .get("reason")
                .and_then(|x| x.as_str())
                .unwrap_or("other")
                .to_string(),
            Err(_) => "other".into(),
        };
        self.refused_for(&reason);
    }

    pub fn refused_for(&self, reason: &str) {
        self.refusals.with_label_values(&[reason]).inc();
    }

    pub fn test_bytes(&self, sent: u64, received: u64) {
        self.sent_bytes.inc_by(sent);
        self.received_bytes.inc_by(received);
    }

    /// Registers every counter in `r` (a name registered twice is skipped).
    pub fn register(&self, r: &Registry) {
        let _ = r.register(Box::new(self.sessions.clone()));
        let _ = r.register(Box::new(self.tests.clone()));
        let _ = r.register(Box::new(self.refusals.clone()));
        let _ = r.register(Box::new(self.handshake_failures.clone()));
        let _ = r.register(Box::new(self.sent_bytes.clone()));
        let _ = r.register(Box::new(self.received_bytes.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_counted_by_their_wire_reason() {
        let c = AgentCounters::default();
        c.refused(&Refusal::AuthFailed);
        c.refused(&Refusal::AuthFailed);
        c.refused(&Refusal::NotMtuperf);
        assert_eq!(c.refusals.with_label_values(&["auth_failed"]).get(), 2);
        assert_eq!(c.refusals.with_label_values(&["not_mtuperf"]).get(), 1);
        let r = Registry::new();
        c.register(&r);
        assert_eq!(r.gather().len(), 6);
    }
}
