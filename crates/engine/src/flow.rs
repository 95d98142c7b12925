//! Typed protocol flow: each state of a session waits for one message variant
//! (iperf3 names the same states `TEST_START`, `PARAM_EXCHANGE`, ...).
//! [`Control::expect`](crate::control::Control::expect) receives one message and
//! hands back that variant's content; a refusal and the agent's own failure come back
//! as their errors, anything else as [`EngineError::Unexpected`] naming both sides.

use std::fmt::Debug;

use mtuperf_proto::msg::doctor::DoctorReply;
use mtuperf_proto::msg::mesh::{Discovery, NodeCounters, ThirdPartyResult};
use mtuperf_proto::msg::path::PathReady;
use mtuperf_proto::msg::rr::{RrReady, RrServed};
use mtuperf_proto::msg::stream::StreamReady;
use mtuperf_proto::msg::udp::UdpStreamReady;
use mtuperf_proto::msg::{AgentInfo, AgentMsg, ClientMsg, Welcome};
use serde::de::DeserializeOwned;

use crate::EngineError;

/// What one side of the control connection receives.
pub trait Incoming: DeserializeOwned + Debug + Sized {
    /// Turns the peer's own failure messages into their errors.
    fn failure(self) -> Result<Self, EngineError>;
}

impl Incoming for AgentMsg {
    fn failure(self) -> Result<Self, EngineError> {
        match self {
            AgentMsg::Refused(r) => Err(EngineError::Refused(r)),
            AgentMsg::Error { message } => Err(EngineError::Agent(message)),
            m @ AgentMsg::PeerRefused { .. } => Err(peer_refused(m)),
            m => Ok(m),
        }
    }
}

/// A peer's refusal the agent passed on, as its error once its sizes are checked
/// (one that does not check is a protocol error).
pub(crate) fn peer_refused(m: AgentMsg) -> EngineError {
    if let Err(why) = m.check_peer_refused() {
        return EngineError::Protocol(format!("the agent's peer refusal: {why}"));
    }
    match m {
        AgentMsg::PeerRefused { peer, refusal } => EngineError::PeerRefused { peer, refusal },
        other => EngineError::Unexpected {
            expected: "a peer's refusal",
            got: format!("{other:?}"),
        },
    }
}

impl Incoming for ClientMsg {
    fn failure(self) -> Result<Self, EngineError> {
        Ok(self)
    }
}

/// One message variant a state of the flow waits for.
pub trait Expected: Sized {
    type Msg: Incoming;
    /// How errors name it ("expected data ready, got ...").
    const NAME: &'static str;
    /// The variant's content, or the message back when it is another variant.
    fn take(msg: Self::Msg) -> Result<Self, Self::Msg>;
}

/// `expected!(Type, Msg, "name", Pattern => content)`: one impl per awaited variant.
macro_rules! expected {
    ($t:ty, $msg:ty, $name:literal, $pat:pat => $out:expr) => {
        impl Expected for $t {
            type Msg = $msg;
            const NAME: &'static str = $name;
            fn take(msg: $msg) -> Result<Self, $msg> {
                match msg {
                    $pat => Ok($out),
                    other => Err(other),
                }
            }
        }
    };
}

/// The agent's answer to a correct authentication proof.
#[derive(Debug)]
pub struct AuthOk {
    pub cookie: String,
    pub info: AgentInfo,
}

/// Every data connection of the test is connected.
#[derive(Debug)]
pub struct DataReady;

/// The client's word to start the test, or to drop it before it started.
#[derive(Debug, PartialEq, Eq)]
pub enum Start {
    Go,
    Stop,
}

expected!(Welcome, AgentMsg, "welcome", AgentMsg::Welcome(w) => *w);
expected!(AuthOk, AgentMsg, "auth result", AgentMsg::AuthOk { cookie, info } => AuthOk { cookie, info: *info });
expected!(StreamReady, AgentMsg, "stream ready", AgentMsg::StreamReady(r) => r);
expected!(RrReady, AgentMsg, "rr ready", AgentMsg::RrReady(r) => r);
expected!(PathReady, AgentMsg, "path_ready", AgentMsg::PathReady(r) => r);
expected!(RrServed, AgentMsg, "rr report", AgentMsg::RrDone(r) => *r);
expected!(DataReady, AgentMsg, "data ready", AgentMsg::DataReady => DataReady);
expected!(DoctorReply, AgentMsg, "doctor reply", AgentMsg::DoctorReply(r) => *r);
expected!(UdpStreamReady, AgentMsg, "udp stream ready", AgentMsg::UdpStreamReady(r) => r);
expected!(Discovery, AgentMsg, "discovery", AgentMsg::Discovery(r) => *r);
expected!(ThirdPartyResult, AgentMsg, "third-party result", AgentMsg::ThirdPartyDone(r) => *r);
expected!(NodeCounters, AgentMsg, "kernel counters", AgentMsg::Counters(r) => *r);

impl Expected for Start {
    type Msg = ClientMsg;
    const NAME: &'static str = "go";
    fn take(msg: ClientMsg) -> Result<Self, ClientMsg> {
        match msg {
            ClientMsg::Go => Ok(Start::Go),
            ClientMsg::Stop => Ok(Start::Stop),
            other => Err(other),
        }
    }
}

/// `msg` as the variant `T`, or the error naming what came instead.
pub fn take<T: Expected>(msg: T::Msg) -> Result<T, EngineError> {
    T::take(msg.failure()?).map_err(|other| EngineError::Unexpected {
        expected: T::NAME,
        got: format!("{other:?}"),
    })
}

#[cfg(test)]
mod tests {
    use mtuperf_proto::msg::Refusal;

    use super::*;

    #[test]
    fn the_awaited_variant_refusals_and_strangers_are_told_apart_by_type() {
        assert!(matches!(
            take::<DataReady>(AgentMsg::DataReady),
            Ok(DataReady)
        ));
        assert_eq!(take::<Start>(ClientMsg::Stop).ok(), Some(Start::Stop));
        let e = take::<DataReady>(AgentMsg::Ack).unwrap_err();
        assert!(
            matches!(
                e,
                EngineError::Unexpected {
                    expected: "data ready",
                    ..
                }
            ),
            "{e:?}"
        );
        assert_eq!(
            e.to_string(),
            "protocol error: expected data ready, got Ack"
        );
        let e = take::<DataReady>(AgentMsg::Refused(Refusal::AuthRequired)).unwrap_err();
        assert!(
            matches!(e, EngineError::Refused(Refusal::AuthRequired)),
            "{e:?}"
        );
        let e = take::<Start>(ClientMsg::Ping).unwrap_err();
        assert!(
            matches!(e, EngineError::Unexpected { expected: "go", .. }),
            "{e:?}"
        );
    }
}
