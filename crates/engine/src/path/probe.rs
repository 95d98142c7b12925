//! The client's probers: forward (UDP probes acknowledged by the agent) and reverse
//! (the agent sends on request, this end acknowledges), both DF with
//! IP_PMTUDISC_PROBE and errors read from the error queue.

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
use mtuperf_proto::msg::{AgentMsg, ClientMsg, PathReverseProbe};
use mtuperf_sys::sockopt::{self, PmtuMode};

use super::recv::{self, error_outcome};
use super::search::{Outcome, Prober};
use super::wait::ProbeWait;
use crate::client::Session;
use crate::EngineError;

/// The slowest probe answer either direction of a pair has timed (µs; 0: none yet).
/// The two searches run at once: each one's waits cover the other's answers, as the
/// reverse search's once started from what the forward one had measured.
#[derive(Debug, Default)]
pub struct PairRtt(AtomicU64);

impl PairRtt {
    /// A probe of this pair was answered `rtt` after it was sent.
    pub fn heard(&self, rtt: Duration) {
        let us = u64::try_from(rtt.as_micros()).unwrap_or(u64::MAX);
        self.0.fetch_max(us, Ordering::Relaxed);
    }

    /// The wait of a direction's next probe, covering the slowest answer either
    /// direction timed.
    pub fn next_wait(&self, wait: &mut ProbeWait) -> Duration {
        let us = self.0.load(Ordering::Relaxed);
        if us > 0 {
            wait.answered(Duration::from_micros(us));
        }
        wait.for_probe()
    }
}

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
    /// Each probe's wait, from the pair's round trip.
    pub wait: ProbeWait,
    /// The last probes sent (seq, when): an ack arriving after its probe's wait
    /// still tells how slow the pair can be.
    pub sent: VecDeque<(u64, Instant)>,
    /// Set when the session with the agent failed (the reverse search's control
    /// connection): no probe is sent or waited for any more.
    pub gone: &'a AtomicBool,
    /// The pair's slowest answer, shared with the reverse search.
    pub rtt: &'a PairRtt,
}

/// Probes whose late acks are still timed.
const REMEMBERED: usize = 16;

impl Forward<'_> {
    /// An ack of probe `seq` arrived now: its round trip, if that probe is remembered.
    fn acked(&mut self, seq: u64) {
        if let Some(&(_, at)) = self.sent.iter().find(|(s, _)| *s == seq) {
            self.wait.answered(at.elapsed());
            self.rtt.heard(at.elapsed());
        }
    }
}

impl Prober for Forward<'_> {
    fn probe(&mut self, size: u32) -> Outcome {
        if self.gone.load(Ordering::Relaxed) {
            return Outcome::Lost;
        }
        let v6 = self.sock.peer_addr().is_ok_and(|a| a.is_ipv6());
        self.seq += 1;
        let buf = dgram(
            Kind::PathProbe,
            self.token,
            self.seq,
            size.saturating_sub(overhead(v6)),
        );
        let sent = Instant::now();
        if self.sent.len() == REMEMBERED {
            self.sent.pop_front();
        }
        self.sent.push_back((self.seq, sent));
        if self.sock.send(&buf).is_err() {
            return error_outcome(self.sock, v6).unwrap_or(Outcome::Lost);
        }
        let deadline = sent + self.rtt.next_wait(&mut self.wait);
        let mut rb = [0u8; 2048];
        let (seq, token, sock) = (self.seq, self.token, self.sock);
        let mut late = Vec::new();
        let got = recv::until(
            sock,
            deadline,
            &mut rb,
            |d| match Header::read(d) {
                Ok(h) if h.kind == Kind::PathAck && h.token == token && h.seq == seq => {
                    ControlFlow::Break(Outcome::Passed)
                }
                Ok(h) if h.kind == Kind::PathAck && h.token == token && h.seq < seq => {
                    late.push(h.seq);
                    ControlFlow::Continue(())
                }
                _ => ControlFlow::Continue(()),
            },
            || recv::break_on_error(sock, v6),
        );
        let at = Instant::now();
        for s in late {
            self.acked(s);
        }
        if got == Some(Outcome::Passed) {
            self.wait.answered(at - sent);
            self.rtt.heard(at - sent);
        }
        got.or_else(|| error_outcome(self.sock, v6))
            .unwrap_or(Outcome::Lost)
    }
}

pub struct Reverse<'a> {
    pub session: &'a Session,
    pub sock: &'a UdpSocket,
    pub token: u64,
    pub seq: u64,
    /// Each probe's wait (the agent's for the ack, this end's for the probe), from
    /// the pair's round trip.
    pub wait: ProbeWait,
    /// A control-protocol failure ends the search; it is reported afterwards.
    pub failure: Option<EngineError>,
    /// Set with `failure`: the forward search, which shares the session, ends too.
    pub gone: &'a AtomicBool,
    /// The pair's slowest answer, shared with the forward search.
    pub rtt: &'a PairRtt,
}

impl Prober for Reverse<'_> {
    fn probe(&mut self, size: u32) -> Outcome {
        let outcome = self.ask(size);
        if self.failure.is_some() {
            self.gone.store(true, Ordering::Relaxed);
        }
        outcome
    }
}

impl Reverse<'_> {
    /// One reverse probe of `size`: asked over the control connection, acked over
    /// UDP when it arrives, its fate as the agent saw it.
    fn ask(&mut self, size: u32) -> Outcome {
        if self.failure.is_some() {
            return Outcome::Lost;
        }
        self.seq += 1;
        let wait = self.rtt.next_wait(&mut self.wait);
        let req = ClientMsg::PathReverseProbe(PathReverseProbe {
            seq: self.seq,
            size,
            wait_ms: wait.as_millis().try_into().unwrap_or(u32::MAX),
        });
        let asked = Instant::now();
        if let Err(e) = self.session.control.send(&req) {
            self.failure = Some(e);
            return Outcome::Lost;
        }
        let deadline = asked + wait;
        let mut rb = vec![0u8; 65_536];
        let (sock, seq, token) = (self.sock, self.seq, self.token);
        let arrived = recv::until(
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
        if arrived.is_some() {
            // The request's way there and the probe's way back: one round trip.
            self.wait.answered(asked.elapsed());
            self.rtt.heard(asked.elapsed());
        }
        let wait = wait + self.session.reply_timeout();
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Once the session with the agent failed, the forward search sends nothing and
    /// waits for nothing: each probe is lost at once.
    #[test]
    fn a_forward_probe_after_the_session_failed_is_lost_without_a_send() {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let far = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(far.local_addr().unwrap()).unwrap();
        let gone = AtomicBool::new(true);
        let mut p = Forward {
            sock: &sock,
            token: 1,
            seq: 0,
            wait: ProbeWait::from_tcp(Some(1_000_000)),
            sent: VecDeque::new(),
            gone: &gone,
            rtt: &PairRtt::default(),
        };
        assert_eq!(p.probe(1500), Outcome::Lost);
        assert!(p.sent.is_empty() && p.seq == 0);
        far.set_nonblocking(true).unwrap();
        assert!(far.recv(&mut [0u8; 64]).is_err(), "nothing was sent");
    }

    /// Each direction's waits cover the slowest answer either one timed: a reverse
    /// search that has seen only quick answers still waits as long as the forward
    /// one's slowest needs, and the other way round.
    #[test]
    fn the_two_directions_share_their_slowest_answer() {
        let rtt = PairRtt::default();
        let mut forward = ProbeWait::from_tcp(Some(100));
        let mut reverse = ProbeWait::from_tcp(Some(100));
        assert_eq!(rtt.next_wait(&mut reverse), super::super::wait::MIN_WAIT);
        rtt.heard(Duration::from_millis(10));
        reverse.answered(Duration::from_micros(200));
        assert_eq!(rtt.next_wait(&mut reverse), Duration::from_millis(42));
        assert_eq!(rtt.next_wait(&mut forward), Duration::from_millis(42));
        rtt.heard(Duration::from_millis(1));
        assert_eq!(rtt.next_wait(&mut forward), Duration::from_millis(42));
    }
}
