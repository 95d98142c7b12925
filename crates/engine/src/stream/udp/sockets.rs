//! The data sockets of a UDP stream: one per index on each end, bound to the address
//! the control connection uses, connected to the peer's socket of the same index.

use std::net::{IpAddr, SocketAddr, UdpSocket};

use mtuperf_proto::msg::udp::{IoFallback, IoMode, IoOption, UdpIo};
use mtuperf_sys::sockopt;

use crate::EngineError;

/// Receive and send buffer asked for when the user gives no --window: enough for
/// 512 datagrams of 8 KiB, as iperf's UDP default is not; the kernel caps it at
/// net.core.rmem_max/wmem_max and the granted size is reported.
pub const DEFAULT_BUFFER: u32 = 4 << 20;

/// `n` sockets bound to `ip`, port chosen by the kernel.
pub fn bind(ip: IpAddr, n: u32, window: Option<u32>) -> Result<Vec<UdpSocket>, EngineError> {
    (0..n)
        .map(|_| {
            let addr = SocketAddr::new(ip, 0);
            let s = UdpSocket::bind(addr).map_err(|source| EngineError::Bind { addr, source })?;
            size_buffers(&s, window);
            Ok(s)
        })
        .collect()
}

/// Asks for `window` (or [`DEFAULT_BUFFER`]) of receive and send buffer. A
/// `--window` the kernel capped at net.core.rmem_max/wmem_max is forced where this
/// process may (CAP_NET_ADMIN: SO_RCVBUFFORCE, SO_SNDBUFFORCE), so the receiver's
/// buffer is what the user said; either way each socket reports what it got.
fn size_buffers(s: &UdpSocket, window: Option<u32>) {
    let size = window.unwrap_or(DEFAULT_BUFFER);
    let _ = sockopt::set_rcvbuf(s, size);
    let _ = sockopt::set_sndbuf(s, size);
    if window.is_none() {
        return;
    }
    // The kernel reports (and charges) twice what it was asked.
    let short = |got: std::io::Result<u32>| got.map_or(true, |g| g / 2 < size);
    if short(sockopt::rcvbuf(s)) {
        let _ = sockopt::set_rcvbuf_force(s, size);
    }
    if short(sockopt::sndbuf(s)) {
        let _ = sockopt::set_sndbuf_force(s, size);
    }
}

pub fn ports(socks: &[UdpSocket]) -> Result<Vec<u16>, EngineError> {
    socks
        .iter()
        .map(|s| {
            s.local_addr()
                .map(|a| a.port())
                .map_err(|e| EngineError::io("udp local address", e))
        })
        .collect()
}

/// Connects socket `i` to `ip`:`ports[i]`: from then on the kernel hands it only
/// that peer's datagrams, and it sends nowhere else.
pub fn connect(socks: &[UdpSocket], ip: IpAddr, ports: &[u16]) -> Result<(), EngineError> {
    for (s, &p) in socks.iter().zip(ports) {
        let to = SocketAddr::new(ip, p);
        s.connect(to)
            .map_err(|e| EngineError::io(format!("udp connect to {to}"), e))?;
    }
    Ok(())
}

/// How one socket moves its datagrams, decided once before the data phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnIo {
    pub mode: IoMode,
    /// Senders with GSO: datagrams per message; 1 otherwise.
    pub segments: u32,
    pub fallback: Option<IoFallback>,
}

/// UDP GSO's limits: at most 64 segments a send (UDP_MAX_SEGMENTS before Linux
/// 6.x raised it), and one send's payload at most an IPv4 datagram's.
const GSO_MAX_SEGMENTS: u32 = 64;
const GSO_MAX_BYTES: u32 = 65_507;

/// The best of `asked` this socket can use: a sender uses GSO only for datagrams
/// that fit the path MTU whole (larger ones must leave as IP fragments, which GSO
/// cannot make) and only where the kernel takes UDP_SEGMENT; a receiver uses GRO
/// where the kernel takes UDP_GRO. Otherwise batches (`fallback` says why).
pub fn io_for(sock: &UdpSocket, sending: bool, asked: UdpIo, block: u32) -> ConnIo {
    let plain = |mode| ConnIo {
        mode,
        segments: 1,
        fallback: None,
    };
    let fell = |fallback| ConnIo {
        fallback: Some(fallback),
        ..plain(IoMode::Batch)
    };
    let errno = |e: &std::io::Error| e.raw_os_error().unwrap_or(0);
    match asked {
        UdpIo::Plain => plain(IoMode::Plain),
        UdpIo::Batch => plain(IoMode::Batch),
        UdpIo::Gso if !sending => match sockopt::mmsg::set_udp_gro(sock, true) {
            Ok(()) => plain(IoMode::Gro),
            Err(e) => fell(IoFallback::Unsupported {
                option: IoOption::UdpGro,
                errno: errno(&e),
            }),
        },
        UdpIo::Gso => {
            let v6 = sock.peer_addr().is_ok_and(|a| a.is_ipv6());
            let headers = if v6 { 48 } else { 28 };
            let mtu = match sockopt::path_mtu(sock, v6) {
                Ok(mtu) => mtu,
                Err(e) => {
                    return fell(IoFallback::Unsupported {
                        option: IoOption::IpMtu,
                        errno: errno(&e),
                    })
                }
            };
            if block + headers > mtu {
                return fell(IoFallback::AboveMtu { block, mtu });
            }
            let size = u16::try_from(block).unwrap_or(u16::MAX);
            match sockopt::mmsg::set_udp_segment(sock, size) {
                Ok(()) => ConnIo {
                    mode: IoMode::Gso,
                    segments: (GSO_MAX_BYTES / block.max(1)).clamp(1, GSO_MAX_SEGMENTS),
                    fallback: None,
                },
                Err(e) => fell(IoFallback::Unsupported {
                    option: IoOption::UdpSegment,
                    errno: errno(&e),
                }),
            }
        }
    }
}
