//! The client's side of `doctor --peer`: ask the agent for its facts and findings, and
//! measure the round trip of the control connection for the bandwidth-delay product.

use std::time::{Duration, Instant};

use mtuperf_proto::msg::doctor::{DoctorReply, DoctorRequest};
use mtuperf_proto::msg::{AgentMsg, ClientMsg};

use super::Profile;
use crate::client::Session;
use crate::EngineError;

/// Runs the checks on the agent's host. The reply wait covers the agent's sample.
pub fn ask_peer(
    session: &Session,
    profile: Profile,
    sample: Duration,
) -> Result<DoctorReply, EngineError> {
    let msg = ClientMsg::Doctor(DoctorRequest {
        profile: profile.name().into(),
        sample_ms: sample.as_millis() as u64,
    });
    session.control.send(&msg)?;
    let wait = session.reply_timeout() + sample;
    match session
        .control
        .recv::<AgentMsg>(Some(wait), "doctor reply")?
    {
        AgentMsg::DoctorReply(r) => Ok(*r),
        AgentMsg::Refused(r) => Err(EngineError::Refused(r)),
        AgentMsg::Error { message } => {
            Err(EngineError::Protocol(format!("agent failed: {message}")))
        }
        other => Err(EngineError::Protocol(format!(
            "unexpected answer to doctor: {other:?}"
        ))),
    }
}

/// Round-trip time to the agent: the kernel's smoothed RTT of the control connection
/// (TCP_INFO) after the exchanges so far, or the time of a reply if that is unknown.
pub fn control_rtt(session: &Session, fallback: Duration) -> Duration {
    match mtuperf_sys::sockopt::tcp_info(session.control.socket()) {
        Ok(i) if i.rtt_us > 0 => Duration::from_micros(u64::from(i.rtt_us)),
        _ => fallback,
    }
}

/// Times one call, for [`control_rtt`]'s fallback.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}
