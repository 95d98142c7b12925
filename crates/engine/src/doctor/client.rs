//! The client's side of `doctor --peer`: ask the agent for its facts (the findings are computed here), and
//! measure the round trip of the control connection for the bandwidth-delay product.

use std::time::{Duration, Instant};

use mtuperf_proto::msg::doctor::{DoctorReply, DoctorRequest};
use mtuperf_proto::msg::{AgentMsg, ClientMsg};

use super::Profile;
use crate::client::Session;
use crate::EngineError;

/// Reads the agent's host. The reply wait covers the agent's sample.
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
    session.control.expect(Some(wait), "doctor reply")
}

/// Round-trip time to the agent, the smaller of two estimates: the kernel's smoothed
/// RTT of the control connection (TCP_INFO; inflated by delayed ACKs on a connection
/// that has carried few messages) and the fastest of `n` timed `Ping`/`Ack` control
/// round trips (these include both ends' scheduling, so they are an upper bound too).
/// None when neither is known.
pub fn control_rtt(session: &Session, n: u32) -> Option<Duration> {
    let kernel = mtuperf_sys::sockopt::tcp_info(session.control.socket())
        .ok()
        .filter(|i| i.rtt_us > 0)
        .map(|i| Duration::from_micros(u64::from(i.rtt_us)));
    let mut best: Option<Duration> = None;
    for _ in 0..n {
        let t = Instant::now();
        if session.control.send(&ClientMsg::Ping).is_err() {
            break;
        }
        match session
            .control
            .recv::<AgentMsg>(Some(session.reply_timeout()), "round trip")
        {
            Ok(AgentMsg::Ack) => {
                let e = t.elapsed();
                best = Some(best.map_or(e, |b| b.min(e)));
            }
            _ => break,
        }
    }
    match (kernel, best) {
        (Some(k), Some(b)) => Some(k.min(b)),
        (k, b) => k.or(b),
    }
}
