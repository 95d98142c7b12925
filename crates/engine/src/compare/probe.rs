//! A don't-fragment UDP probe that needs nothing at the far end but its kernel.
//!
//! A datagram sent with DF to a closed UDP port comes back as ICMP port unreachable
//! when it arrives, or as ICMP frag-needed / packet-too-big from the router that cannot
//! forward it. A PMTU black hole returns neither for a full-size datagram, while a
//! small one still draws port unreachable. Errors arrive on the socket's error queue
//! (IP_RECVERR); the wait is bounded by [`WAIT`].

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use mtuperf_sys::sockopt::{self, Origin, PmtuMode};

/// How long to wait for an ICMP answer to one probe.
pub const WAIT: Duration = Duration::from_secs(1);
/// The UDP port probed (traceroute's first port; nothing should listen there).
pub const PORT: u16 = 33434;

/// What became of one probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The datagram reached the host (ICMP port unreachable).
    Reached,
    /// A router (or this host's route) said it is too big, with the MTU it gave.
    TooBig { mtu: u32, from: String },
    /// No answer within [`WAIT`].
    Silent,
    /// Some other ICMP error (errno), from the named host.
    Other { errno: i32, from: String },
}

fn ip_header(v6: bool) -> usize {
    if v6 {
        48
    } else {
        28
    }
}

/// Sends one DF datagram making an IP packet of `packet` bytes and waits for its fate.
pub fn probe(dst: IpAddr, bind: Option<IpAddr>, packet: u32) -> std::io::Result<Answer> {
    let v6 = dst.is_ipv6();
    let local = bind.unwrap_or(if v6 {
        IpAddr::from([0u16; 8])
    } else {
        IpAddr::from([0u8; 4])
    });
    let sock = UdpSocket::bind(SocketAddr::new(local, 0))?;
    sockopt::set_pmtu_discover(&sock, v6, PmtuMode::Probe)?;
    sockopt::set_recverr(&sock, v6)?;
    sock.connect(SocketAddr::new(dst, PORT))?;
    let payload = vec![0u8; (packet as usize).saturating_sub(ip_header(v6)).max(1)];
    if let Err(e) = sock.send(&payload) {
        if e.raw_os_error() == Some(libc::EMSGSIZE) {
            let mtu = sockopt::path_mtu(&sock, v6).unwrap_or(0);
            return Ok(Answer::TooBig {
                mtu,
                from: "this host".into(),
            });
        }
        return Err(e);
    }
    let until = Instant::now() + WAIT;
    while Instant::now() < until {
        if let Some(e) = sockopt::recv_err(&sock, v6)? {
            let from = e
                .offender
                .map_or_else(|| "?".to_string(), |a| a.to_string());
            return Ok(match (e.errno, e.origin) {
                (libc::ECONNREFUSED, _) => Answer::Reached,
                (libc::EMSGSIZE, Origin::Local) => Answer::TooBig {
                    mtu: e.info,
                    from: "this host".into(),
                },
                (libc::EMSGSIZE, _) => Answer::TooBig { mtu: e.info, from },
                (errno, _) => Answer::Other { errno, from },
            });
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(Answer::Silent)
}
