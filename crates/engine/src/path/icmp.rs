//! `path --icmp`: no agent, ICMP echo with DF and a binary search. Measures the
//! smaller of the two directions and cannot tell them apart.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use mtuperf_sys::sockopt::{self, PmtuMode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use socket2::{Domain, Protocol, Socket, Type};

use super::recv;
use super::search::{self, DirResult, Outcome, Prober};
use super::{base_size, LocalView};
use crate::EngineError;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct IcmpResult {
    pub target: IpAddr,
    pub v6: bool,
    pub local: LocalView,
    /// "ping" (unprivileged ICMP socket) or "raw".
    pub socket: String,
    /// The smaller of the two directions.
    pub both: DirResult,
    pub expect: u32,
    pub ok: bool,
    pub elapsed_ms: u64,
    pub notes: Vec<String>,
}

struct Echo {
    /// An ICMP socket; std's UdpSocket only wraps send/recv on it.
    sock: UdpSocket,
    raw: bool,
    v6: bool,
    id: u16,
    seq: u16,
    timeout: Duration,
}

fn checksum(b: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in b.chunks(2) {
        let hi = u32::from(c.first().copied().unwrap_or(0));
        let lo = u32::from(c.get(1).copied().unwrap_or(0));
        sum += (hi << 8) | lo;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

impl Echo {
    fn open(target: IpAddr) -> Result<Echo, EngineError> {
        let v6 = target.is_ipv6();
        let (domain, proto) = if v6 {
            (Domain::IPV6, Protocol::ICMPV6)
        } else {
            (Domain::IPV4, Protocol::ICMPV4)
        };
        let (sock, raw) = match Socket::new(domain, Type::DGRAM, Some(proto)) {
            Ok(s) => (s, false),
            Err(_) => (
                Socket::new(domain, Type::RAW, Some(proto)).map_err(|e| {
                    EngineError::io(
                        "opening an ICMP socket (neither a ping socket, allowed by net.ipv4.ping_group_range, nor a raw socket, which needs CAP_NET_RAW)",
                        e,
                    )
                })?,
                true,
            ),
        };
        sock.connect(&SocketAddr::new(target, 0).into())
            .map_err(|e| EngineError::io("connecting the ICMP socket", e))?;
        sockopt::set_pmtu_discover(&sock, v6, PmtuMode::Probe)
            .and_then(|()| sockopt::set_recverr(&sock, v6))
            .map_err(|e| EngineError::io("setting ICMP socket options", e))?;
        Ok(Echo {
            sock: sock.into(),
            raw,
            v6,
            id: (std::process::id() & 0xffff) as u16,
            seq: 0,
            timeout: Duration::from_millis(200),
        })
    }

    fn errors(&self) -> Option<Outcome> {
        recv::error_outcome(&self.sock, self.v6)
    }
}

impl Prober for Echo {
    fn probe(&mut self, size: u32) -> Outcome {
        self.seq = self.seq.wrapping_add(1);
        let ip_hdr = if self.v6 { 40 } else { 20 };
        let len = (size.saturating_sub(ip_hdr) as usize).max(8);
        let mut pkt = vec![0u8; len];
        let kind = if self.v6 { 128 } else { 8 };
        pkt[0] = kind;
        pkt[4..6].copy_from_slice(&self.id.to_be_bytes());
        pkt[6..8].copy_from_slice(&self.seq.to_be_bytes());
        if !self.v6 {
            let c = checksum(&pkt);
            pkt[2..4].copy_from_slice(&c.to_be_bytes());
        }
        if self.sock.send(&pkt).is_err() {
            return self.errors().unwrap_or(Outcome::Lost);
        }
        let deadline = Instant::now() + self.timeout;
        let mut buf = [0u8; 2048];
        recv::until(
            &self.sock,
            deadline,
            &mut buf,
            |got| {
                let skip = if self.raw && !self.v6 {
                    usize::from(got.first().copied().unwrap_or(0) & 0x0f) * 4
                } else {
                    0
                };
                let icmp = got.get(skip..).unwrap_or_default();
                let reply = if self.v6 { 129 } else { 0 };
                let seq = icmp.get(6..8).map(|s| u16::from_be_bytes([s[0], s[1]]));
                let id_ok = !self.raw
                    || icmp
                        .get(4..6)
                        .is_some_and(|s| u16::from_be_bytes([s[0], s[1]]) == self.id);
                if icmp.first() == Some(&reply) && seq == Some(self.seq) && id_ok {
                    ControlFlow::Break(Outcome::Passed)
                } else {
                    ControlFlow::Continue(())
                }
            },
            || recv::break_on_error(&self.sock, self.v6),
        )
        .or_else(|| self.errors())
        .unwrap_or(Outcome::Lost)
    }
}

/// Searches the largest echo that passes from the safe base to the interface MTU.
pub fn run(target: IpAddr, expect: Option<u32>) -> Result<IcmpResult, EngineError> {
    let t0 = Instant::now();
    let local = LocalView::toward(target)?;
    let mut echo = Echo::open(target)?;
    let v6 = target.is_ipv6();
    let both = search::search(&mut echo, base_size(v6), local.max_packet()).map_err(|_| {
        EngineError::Agent(format!(
            "{target} does not answer ICMP echo even at {} bytes",
            base_size(v6)
        ))
    })?;
    let expect = expect.unwrap_or(local.max_packet());
    let mut notes = vec![
        "ICMP echo measures the smaller of the two directions and cannot tell them apart; run with an agent to measure each".to_string(),
    ];
    notes.extend(local.notes(both.largest_ok));
    Ok(IcmpResult {
        target,
        v6,
        socket: if echo.raw { "raw" } else { "ping" }.into(),
        ok: both.largest_ok >= expect,
        local,
        both,
        expect,
        elapsed_ms: t0.elapsed().as_millis() as u64,
        notes,
    })
}
