//! One measurement kind, whole: what a run asks, how the client runs it on an open
//! session, the agent's handler that serves it, and what it yields. `stream` (TCP),
//! `stream --udp` and `rr` implement it; the CLI's series driver runs any of them
//! (repeat, sweep, store, print, exit code), and the agent registers each kind's
//! handler in one place (`agent::handlers`). A new kind is one folder that
//! implements this (and [`AgentHandler`] for its agent side) plus one registration.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::client::Session;
use crate::serve::AgentHandler;
use crate::EngineError;

/// A measurement kind's client side and the handler that serves it.
pub trait Measurement {
    /// What one run asks (built from the flags; the wire request is built from it).
    type Config;
    /// Both ends' figures of one run.
    type Result: Outcome;
    /// Progress callbacks while it runs (the CLI prints live intervals).
    type Observer: ?Sized;
    /// The agent's side: the handler registered for the kind's request.
    type Handler: AgentHandler;
    /// The kind's name ("stream", "udp", "rr").
    const NAME: &'static str;

    /// Runs one test on an open session. `stop` (Ctrl-C) ends it early; the result
    /// then covers what was measured and is marked interrupted.
    fn run(
        &self,
        session: &Session,
        config: &Self::Config,
        stop: &Arc<AtomicBool>,
        obs: &Self::Observer,
    ) -> Result<Self::Result, EngineError>;
}

/// What every kind's result tells of itself.
pub trait Outcome {
    /// The agent measured against, as asked.
    fn target(&self) -> &str;
    /// Why the run ended early (a signal, a deadline, a stall, the agent gone).
    fn interrupted_by(&self) -> &[crate::Interrupt];
}

/// Implements [`Outcome`] for each result type named whose own fields say it:
/// `target: String` and `interrupted_by: Vec<Interrupt>`.
macro_rules! outcome_of_fields {
    ($($result:ty),+) => {$(
        impl $crate::kind::Outcome for $result {
            fn target(&self) -> &str {
                &self.target
            }

            fn interrupted_by(&self) -> &[$crate::Interrupt] {
                &self.interrupted_by
            }
        }
    )+};
}
pub(crate) use outcome_of_fields;

#[cfg(test)]
mod tests {
    use mtuperf_proto::msg::ClientMsg;

    use super::Measurement;
    use crate::config::{RrConfig, StreamConfig, UdpStreamConfig};
    use crate::serve::AgentHandler;

    /// Whether kind `M`'s handler takes `msg`.
    fn takes<M: Measurement>(msg: &ClientMsg) -> bool {
        <M::Handler as AgentHandler>::request(msg).is_some()
    }

    /// Each kind's handler takes its own request, and no other kind's.
    #[test]
    fn a_kinds_handler_takes_its_own_request_only() {
        use crate::rr::Rr;
        use crate::stream::udp::UdpStream;
        use crate::stream::Stream;
        let stream = ClientMsg::Stream(StreamConfig::default().request());
        let udp = ClientMsg::UdpStream(UdpStreamConfig::default().request(vec![1]));
        let rr = ClientMsg::Rr(RrConfig::default().wire(Vec::new(), None));
        assert!(takes::<Stream>(&stream) && !takes::<Stream>(&udp) && !takes::<Stream>(&rr));
        assert!(takes::<UdpStream>(&udp) && !takes::<UdpStream>(&stream));
        assert!(takes::<Rr>(&rr) && !takes::<Rr>(&stream));
        let names = [Stream::NAME, UdpStream::NAME, Rr::NAME];
        assert_eq!(names, ["stream", "udp", "rr"]);
    }
}
