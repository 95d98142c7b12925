//! getsockopt(TCP_INFO) with a mirror of the kernel's `struct tcp_info`.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use mtuperf_proto::host::TcpInfo;

/// `struct tcp_info` from linux/tcp.h up to tcpi_delivery_rate (kernel 4.9+). libc's
/// copy stops earlier. Older kernels fill a prefix; the returned length says how much.
#[repr(C)]
#[derive(Default)]
struct RawTcpInfo {
    state: u8,
    ca_state: u8,
    retransmits: u8,
    probes: u8,
    backoff: u8,
    options: u8,
    wscale: u8,
    app_limited: u8,
    rto: u32,
    ato: u32,
    snd_mss: u32,
    rcv_mss: u32,
    unacked: u32,
    sacked: u32,
    lost: u32,
    retrans: u32,
    fackets: u32,
    last_data_sent: u32,
    last_ack_sent: u32,
    last_data_recv: u32,
    last_ack_recv: u32,
    pmtu: u32,
    rcv_ssthresh: u32,
    rtt: u32,
    rttvar: u32,
    snd_ssthresh: u32,
    snd_cwnd: u32,
    advmss: u32,
    reordering: u32,
    rcv_rtt: u32,
    rcv_space: u32,
    total_retrans: u32,
    pacing_rate: u64,
    max_pacing_rate: u64,
    bytes_acked: u64,
    bytes_received: u64,
    segs_out: u32,
    segs_in: u32,
    notsent_bytes: u32,
    min_rtt: u32,
    data_segs_in: u32,
    data_segs_out: u32,
    delivery_rate: u64,
}

// The layout must match the kernel's: 168 bytes with delivery_rate at 160.
const _: () = assert!(size_of::<RawTcpInfo>() == 168);
const DELIVERY_RATE_END: usize = std::mem::offset_of!(RawTcpInfo, delivery_rate) + 8;
/// Through tcpi_total_retrans: every field mtuperf needs except delivery_rate.
const REQUIRED_END: usize = std::mem::offset_of!(RawTcpInfo, total_retrans) + 4;

/// TCP_INFO of a TCP socket. `retransmits` is tcpi_total_retrans (whole connection);
/// `delivery_rate_bps` is `None` on kernels too old to report it.
pub fn tcp_info(fd: &impl AsFd) -> io::Result<TcpInfo> {
    let mut raw = RawTcpInfo::default();
    let mut len = size_of::<RawTcpInfo>() as libc::socklen_t;
    // SAFETY: `raw` is a writable repr(C) struct of `len` bytes; the kernel writes at
    // most `len` bytes and stores the length it wrote in `len`.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut raw).cast(),
            &raw mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let len = len as usize;
    if len < REQUIRED_END {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("TCP_INFO of only {len} bytes"),
        ));
    }
    Ok(TcpInfo {
        snd_mss: raw.snd_mss,
        rcv_mss: raw.rcv_mss,
        pmtu: raw.pmtu,
        retransmits: raw.total_retrans,
        rtt_us: raw.rtt,
        rttvar_us: raw.rttvar,
        snd_cwnd: raw.snd_cwnd,
        delivery_rate_bps: (len >= DELIVERY_RATE_END).then_some(raw.delivery_rate),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream, UdpSocket};

    #[test]
    fn loopback_connection_reports_mss_and_rtt() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let block = vec![7u8; 64 * 1024];
        client.write_all(&block).unwrap();
        let mut got = vec![0u8; block.len()];
        server.read_exact(&mut got).unwrap();
        server.write_all(b"ok").unwrap();
        client.read_exact(&mut [0u8; 2]).unwrap();

        let info = tcp_info(&client).unwrap();
        assert!(info.snd_mss > 0, "{info:?}");
        assert!(info.rcv_mss > 0, "{info:?}");
        assert!(info.rtt_us > 0, "{info:?}");
        // IPv4 caps lo's 65536 at IP_MAX_MTU (65535).
        assert_eq!(info.pmtu, 65_535);
        assert!(info.snd_cwnd > 0);
        assert!(info.delivery_rate_bps.is_some_and(|r| r > 0), "{info:?}");
    }

    #[test]
    fn non_tcp_sockets_are_an_error() {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(tcp_info(&udp).is_err());
    }
}
