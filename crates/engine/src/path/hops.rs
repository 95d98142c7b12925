//! `path --hops`: per-hop discovery like tracepath. TTL-limited DF UDP probes; the
//! error queue gives each hop's address (ICMP time exceeded) and the MTU a hop
//! reports (frag-needed / packet too big); port unreachable marks the destination.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use mtuperf_sys::sockopt::{self, ErrQueueEntry, Origin, PmtuMode};
use serde::{Deserialize, Serialize};

use super::LocalView;
use crate::EngineError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    pub ttl: u32,
    /// None when the hop did not answer.
    pub addr: Option<IpAddr>,
    /// The MTU this hop reported in frag-needed / packet too big.
    pub reports_mtu: Option<u32>,
    pub destination: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HopsResult {
    pub target: IpAddr,
    pub v6: bool,
    pub local: LocalView,
    pub hops: Vec<Hop>,
    /// Size (IP packet) that reached the destination, if it answered.
    pub path_mtu: Option<u32>,
    pub reached: bool,
    pub expect: u32,
    pub ok: bool,
    pub elapsed_ms: u64,
}

const MAX_TTL: u32 = 30;
const PORT: u16 = 44_444;
const WAIT: Duration = Duration::from_millis(500);

fn wait_error(sock: &UdpSocket, v6: bool) -> Option<ErrQueueEntry> {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let Ok(Some(e)) = sockopt::recv_err(sock, v6) {
            return Some(e);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

pub fn run(target: IpAddr, expect: Option<u32>) -> Result<HopsResult, EngineError> {
    let t0 = Instant::now();
    let v6 = target.is_ipv6();
    let local = LocalView::toward(target)?;
    let bind: SocketAddr = if v6 { "[::]:0" } else { "0.0.0.0:0" }
        .parse()
        .map_err(|_| EngineError::Protocol("bind address".into()))?;
    let sock = UdpSocket::bind(bind).map_err(|e| EngineError::io("binding the hops socket", e))?;
    sock.connect(SocketAddr::new(target, PORT))
        .map_err(|e| EngineError::io("connecting the hops socket", e))?;
    sockopt::set_pmtu_discover(&sock, v6, PmtuMode::Probe)
        .and_then(|()| sockopt::set_recverr(&sock, v6))
        .map_err(|e| EngineError::io("setting hops socket options", e))?;
    let ovh = super::verdict::udp_overhead(v6);
    let mut size = local.mtu;
    let mut hops: Vec<Hop> = Vec::new();
    let mut reached = false;
    let mut ttl = 1;
    let mut tries = 0;
    while ttl <= MAX_TTL && !reached && tries < 3 * MAX_TTL {
        tries += 1;
        sockopt::set_ttl(&sock, v6, ttl).map_err(|e| EngineError::io("setting the TTL", e))?;
        let buf = vec![0u8; size.saturating_sub(ovh) as usize];
        let _ = sock.send(&buf);
        let Some(e) = wait_error(&sock, v6) else {
            hops.push(Hop {
                ttl,
                addr: None,
                reports_mtu: None,
                destination: false,
            });
            ttl += 1;
            continue;
        };
        let (time_exceeded, too_big, unreach) = if v6 {
            (e.icmp_type == 3, e.icmp_type == 2, e.icmp_type == 1)
        } else {
            (
                e.icmp_type == 11,
                e.icmp_type == 3 && e.icmp_code == 4,
                e.icmp_type == 3,
            )
        };
        if e.errno == libc::EMSGSIZE && e.origin == Origin::Local {
            size = e.info.min(size.saturating_sub(1));
            continue;
        }
        if too_big {
            match hops.iter_mut().find(|h| h.addr == e.offender) {
                Some(h) => h.reports_mtu = Some(e.info),
                None => hops.push(Hop {
                    ttl,
                    addr: e.offender,
                    reports_mtu: Some(e.info),
                    destination: false,
                }),
            }
            size = e.info.min(size.saturating_sub(1));
            continue;
        }
        reached = unreach && e.offender == Some(target) || e.errno == libc::ECONNREFUSED;
        if time_exceeded || reached || unreach {
            hops.push(Hop {
                ttl,
                addr: e.offender,
                reports_mtu: None,
                destination: reached,
            });
            if unreach && !reached {
                break;
            }
        }
        ttl += 1;
    }
    let expect = expect.unwrap_or(local.mtu);
    let path_mtu = reached.then_some(size);
    Ok(HopsResult {
        target,
        v6,
        local,
        hops,
        path_mtu,
        reached,
        expect,
        ok: path_mtu.is_some_and(|m| m >= expect),
        elapsed_ms: t0.elapsed().as_millis() as u64,
    })
}
