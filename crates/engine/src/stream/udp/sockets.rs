//! The data sockets of a UDP stream: one per index on each end, bound to the address
//! the control connection uses, connected to the peer's socket of the same index.

use std::net::{IpAddr, SocketAddr, UdpSocket};

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
            let r = socket2::SockRef::from(&s);
            let size = window.unwrap_or(DEFAULT_BUFFER) as usize;
            let _ = r.set_recv_buffer_size(size);
            let _ = r.set_send_buffer_size(size);
            Ok(s)
        })
        .collect()
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
