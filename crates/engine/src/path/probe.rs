//! The client's probers: forward (UDP probes acknowledged by the agent) and reverse
//! (the agent sends on request, this end acknowledges), both DF with
//! IP_PMTUDISC_PROBE and errors read from the error queue.

use std::net::{SocketAddr, UdpSocket};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use mtuperf_proto::msg::{AgentMsg, ClientMsg, PathReverseProbe};
use mtuperf_sys::sockopt::{self, PmtuMode};

use super::recv::{self, error_outcome};
use super::search::{Outcome, Prober};
use crate::client::Session;
use crate::EngineError;

/// IP + UDP header bytes.
pub fn overhead(v6: bool) -> u32 {
    super::reading::udp_overhead(v6)
}

/// A datagram of `payload` bytes (at least the header) carrying kind, token and seq.
pub fn dgram(kind: Kind, token: u64, seq: u64, payload: u32) -> Vec<u8> {
    let len = (payload as usize).max(HEADER_LEN);
    let mut b = vec![0u8; len];
    let h = Header {
        kind,
        client: 0,
        token,
        seq,
        stamp: 0,
        aux: 0,
        len: len as u32,
    };
    h.write(&mut b);
    b
}

/// The client's UDP socket, connected to the agent's probe port.
pub fn open_socket(local: SocketAddr, agent: SocketAddr) -> Result<UdpSocket, EngineError> {
    let v6 = agent.is_ipv6();
    let sock = UdpSocket::bind(SocketAddr::new(local.ip(), 0))
        .map_err(|e| EngineError::io("binding the probe socket", e))?;
    sockopt::set_pmtu_discover(&sock, v6, PmtuMode::Probe)
        .and_then(|()| sockopt::set_recverr(&sock, v6))
        .map_err(|e| EngineError::io("setting probe socket options", e))?;
    Ok(sock)
}

pub struct Forward<'a> {
    pub sock: &'a UdpSocket,
    pub token: u64,
    pub seq: u64,
    pub timeout: Duration,
}

impl Prober for Forward<'_> {
    fn probe(&mut self, size: u32) -> Outcome {
        let v6 = self.sock.peer_addr().is_ok_and(|a| a.is_ipv6());
        self.seq += 1;
        let buf = dgram(
            Kind::PathProbe,
            self.token,
            self.seq,
            size.saturating_sub(overhead(v6)),
        );
        if self.sock.send(&buf).is_err() {
            return error_outcome(self.sock, v6).unwrap_or(Outcome::Lost);
        }
        let deadline = Instant::now() + self.timeout;
        let mut rb = [0u8; 2048];
        let (seq, token) = (self.seq, self.token);
        recv::until(
            self.sock,
            deadline,
            &mut rb,
            |d| match Header::read(d) {
                Ok(h) if h.kind == Kind::PathAck && h.seq == seq && h.token == token => {
                    ControlFlow::Break(Outcome::Passed)
                }
                _ => ControlFlow::Continue(()),
            },
            || recv::break_on_error(self.sock, v6),
        )
        .or_else(|| error_outcome(self.sock, v6))
        .unwrap_or(Outcome::Lost)
    }
}

pub struct Reverse<'a> {
    pub session: &'a Session,
    pub sock: &'a UdpSocket,
    pub token: u64,
    pub seq: u64,
    pub timeout: Duration,
    /// A control-protocol failure ends the search; it is reported afterwards.
    pub failure: Option<EngineError>,
}

impl Prober for Reverse<'_> {
    fn probe(&mut self, size: u32) -> Outcome {
        if self.failure.is_some() {
            return Outcome::Lost;
        }
        self.seq += 1;
        let req = ClientMsg::PathReverseProbe(PathReverseProbe {
            seq: self.seq,
            size,
            wait_ms: self.timeout.as_millis() as u32,
        });
        if let Err(e) = self.session.control.send(&req) {
            self.failure = Some(e);
            return Outcome::Lost;
        }
        let deadline = Instant::now() + self.timeout;
        let mut rb = vec![0u8; 65_536];
        let (sock, seq, token) = (self.sock, self.seq, self.token);
        recv::until(
            sock,
            deadline,
            &mut rb,
            |d| match Header::read(d) {
                Ok(h) if h.kind == Kind::PathProbe && h.seq == seq && h.token == token => {
                    let _ = sock.send(&dgram(Kind::PathAck, token, h.seq, 0));
                    ControlFlow::Break(())
                }
                _ => ControlFlow::Continue(()),
            },
            || ControlFlow::Continue(()),
        );
        let wait = self.timeout + self.session.reply_timeout();
        match self
            .session
            .control
            .recv::<AgentMsg>(Some(wait), "reverse probe result")
        {
            Ok(AgentMsg::PathProbeResult(r)) if r.seq == self.seq => {
                if r.acked {
                    Outcome::Passed
                } else if let Some(mtu) = r.icmp_mtu {
                    Outcome::TooBig {
                        mtu,
                        from: r.icmp_from.and_then(|a| a.parse().ok()),
                    }
                } else if let Some(mtu) = r.local_mtu {
                    Outcome::TooBig { mtu, from: None }
                } else {
                    Outcome::Lost
                }
            }
            Ok(AgentMsg::Refused(r)) => {
                self.failure = Some(EngineError::Refused(r));
                Outcome::Lost
            }
            Ok(other) => {
                self.failure = Some(EngineError::Unexpected {
                    expected: "a probe result",
                    got: format!("{other:?}"),
                });
                Outcome::Lost
            }
            Err(e) => {
                self.failure = Some(e);
                Outcome::Lost
            }
        }
    }
}
