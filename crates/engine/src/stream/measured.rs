//! What one stream run's client measured, TCP or UDP alike: this end's half of the
//! phase run beside the relay of the agent's live messages, then the agent's report
//! (or why it is missing) with the live intervals kept in case it never came.

use std::sync::mpsc::Receiver;
use std::thread;

use mtuperf_proto::msg::AgentMsg;

use crate::client::phase::{AgentReader, Heard, HostSeen, HostWindow, Relay, Relayed, Report};
use crate::client::Session;
use crate::EngineError;

/// What one run measured: this end's connections (`C`: their reports), intervals
/// (`I`) and host, and the agent's report (`R`) with its live intervals.
pub(crate) struct Measured<C, I, R> {
    pub(crate) started_unix_ms: i64,
    pub(crate) conns: Vec<C>,
    pub(crate) intervals: Vec<I>,
    pub(crate) host: HostSeen,
    pub(crate) agent: Report<R>,
    /// The agent's live intervals, kept in case its report never came.
    pub(crate) agent_live: Vec<I>,
}

impl<C, I, R> Measured<C, I, R> {
    /// The agent's report, its missing or failed one counted in `reasons`; without
    /// one, `fallback` makes the agent's end from its live intervals.
    pub(crate) fn agent_end(
        &mut self,
        reasons: &mut Vec<mtuperf_proto::interrupt::Interrupt>,
        fallback: impl FnOnce(Vec<I>) -> R,
    ) -> R {
        let agent = std::mem::replace(&mut self.agent, Report::none());
        agent
            .take(self.host.t0, reasons)
            .unwrap_or_else(|| fallback(std::mem::take(&mut self.agent_live)))
    }
}

/// The agent's last message of a test when it is not its report: its error, or a
/// message that has no place there (`expected` says what should have come).
pub(crate) fn not_a_report<R>(m: AgentMsg, expected: &'static str) -> Relayed<R> {
    Relayed::Done(Err(match m {
        AgentMsg::Error { message } => EngineError::Agent(message),
        m @ AgentMsg::PeerRefused { .. } => crate::flow::peer_refused(m),
        other => EngineError::Unexpected {
            expected,
            got: format!("{other:?}"),
        },
    }))
}

/// This end's half (`local`, in `window`: its connections' reports and intervals)
/// while `relay` takes the agent's messages from `rx`, `on` each (a live interval
/// goes into the list it is given); the Stop once `local` is done; then the host
/// window closes and the reader ends (the control connection shut when the report
/// never came).
pub(crate) fn beside_relay<C, I, R>(
    session: &Session,
    relay: &Relay<'_>,
    (reader, rx): (AgentReader, Receiver<Heard>),
    window: HostWindow<'_>,
    mut on: impl FnMut(AgentMsg, &mut Vec<I>) -> Relayed<R> + Send,
    local: impl FnOnce(&HostWindow<'_>) -> (Vec<C>, Vec<I>),
) -> Measured<C, I, R>
where
    I: Send,
    R: Send,
{
    let mut agent_live = Vec::new();
    let (agent, (conns, intervals)) = thread::scope(|s| {
        let live = &mut agent_live;
        let relayed = s.spawn(move || relay.run(&rx, |m| on(m, live)));
        let out = local(&window);
        relay.local_done();
        (relayed.join().unwrap_or_else(|_| Report::none()), out)
    });
    let host = window.close();
    reader.finish(session, agent.missing());
    Measured {
        started_unix_ms: 0,
        conns,
        intervals,
        host,
        agent,
        agent_live,
    }
}
