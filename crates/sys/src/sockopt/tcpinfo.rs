//! getsockopt(TCP_INFO) with a mirror of the kernel's `struct tcp_info`.

use std::io;
use std::os::fd::{AsFd, AsRawFd};

use mtuperf_proto::host::TcpInfo;

/// `struct tcp_info` from linux/tcp.h up to tcpi_rehash (kernel 6.2+). libc's copy
/// stops earlier. Older kernels fill a prefix; the returned length says how much, and
/// every field past the prefix is reported as unknown (`None`), never as 0.
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
    busy_time: u64,
    rwnd_limited: u64,
    sndbuf_limited: u64,
    delivered: u32,
    delivered_ce: u32,
    bytes_sent: u64,
    bytes_retrans: u64,
    dsack_dups: u32,
    reord_seen: u32,
    rcv_ooopack: u32,
    snd_wnd: u32,
    rcv_wnd: u32,
    rehash: u32,
}

// The layout must match the kernel's: delivery_rate at 160, busy_time at 168,
// delivered at 192, bytes_retrans at 208, snd_wnd at 228, 240 bytes in all.
const _: () = assert!(std::mem::offset_of!(RawTcpInfo, delivery_rate) == 160);
const _: () = assert!(std::mem::offset_of!(RawTcpInfo, busy_time) == 168);
const _: () = assert!(std::mem::offset_of!(RawTcpInfo, delivered) == 192);
const _: () = assert!(std::mem::offset_of!(RawTcpInfo, bytes_retrans) == 208);
const _: () = assert!(std::mem::offset_of!(RawTcpInfo, snd_wnd) == 228);
const _: () = assert!(size_of::<RawTcpInfo>() == 240);

/// End offset of a field: the kernel filled it when it wrote at least this many bytes.
macro_rules! end_of {
    ($f:ident) => {
        std::mem::offset_of!(RawTcpInfo, $f) + {
            let r = RawTcpInfo::default();
            size_of_val(&r.$f)
        }
    };
}

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
    Ok(decode(&raw, len))
}

/// The fields of `raw` the kernel filled in its first `len` bytes.
fn decode(raw: &RawTcpInfo, len: usize) -> TcpInfo {
    // `Some(v)` when the kernel's copy covered the field.
    macro_rules! known {
        ($f:ident) => {
            (len >= end_of!($f)).then_some(raw.$f)
        };
    }
    TcpInfo {
        snd_mss: raw.snd_mss,
        rcv_mss: raw.rcv_mss,
        pmtu: raw.pmtu,
        retransmits: raw.total_retrans,
        rtt_us: raw.rtt,
        rttvar_us: raw.rttvar,
        snd_cwnd: raw.snd_cwnd,
        delivery_rate_bps: (len >= DELIVERY_RATE_END).then_some(raw.delivery_rate),
        // tcpi_delivery_rate_app_limited is bit 0 of the byte after tcpi_wscale.
        delivery_rate_app_limited: (len >= DELIVERY_RATE_END).then_some(raw.app_limited & 1 == 1),
        min_rtt_us: known!(min_rtt),
        notsent_bytes: known!(notsent_bytes),
        bytes_acked: known!(bytes_acked),
        bytes_received: known!(bytes_received),
        busy_time_us: known!(busy_time),
        rwnd_limited_us: known!(rwnd_limited),
        sndbuf_limited_us: known!(sndbuf_limited),
        delivered: known!(delivered),
        delivered_ce: known!(delivered_ce),
        bytes_sent: known!(bytes_sent),
        bytes_retrans: known!(bytes_retrans),
        snd_wnd: known!(snd_wnd),
        rcv_space: Some(raw.rcv_space),
    }
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
    fn loopback_connection_reports_the_limit_clocks() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        client.write_all(&vec![1u8; 256 * 1024]).unwrap();
        let mut got = vec![0u8; 256 * 1024];
        server.read_exact(&mut got).unwrap();
        let info = tcp_info(&client).unwrap();
        // This test runs on 4.19+ kernels: every extended field is known. The limit
        // clocks tick in jiffies (1-10 ms), so this short transfer may read 0.
        assert!(info.busy_time_us.is_some(), "{info:?}");
        assert!(info.rwnd_limited_us.is_some(), "{info:?}");
        assert!(info.sndbuf_limited_us.is_some(), "{info:?}");
        assert!(info.min_rtt_us.is_some_and(|r| r > 0), "{info:?}");
        assert!(info.bytes_sent.is_some_and(|b| b >= 256 * 1024), "{info:?}");
        assert!(info.delivered.is_some_and(|d| d > 0), "{info:?}");
        assert_eq!(info.delivered_ce, Some(0));
    }

    #[test]
    fn a_short_copy_leaves_later_fields_unknown() {
        let raw = RawTcpInfo {
            busy_time: 7,
            min_rtt: 9,
            delivery_rate: 5,
            snd_wnd: 3,
            ..RawTcpInfo::default()
        };
        // (bytes the kernel wrote, delivery rate, min RTT, busy time, snd_wnd)
        let cases = [
            (REQUIRED_END, None, None, None, None),
            (152, None, Some(9), None, None),
            (168, Some(5), Some(9), None, None),
            (192, Some(5), Some(9), Some(7), None),
            (232, Some(5), Some(9), Some(7), Some(3)),
            (240, Some(5), Some(9), Some(7), Some(3)),
        ];
        for (len, rate, rtt, busy, wnd) in cases {
            let i = decode(&raw, len);
            assert_eq!(
                (i.delivery_rate_bps, i.min_rtt_us, i.busy_time_us, i.snd_wnd),
                (rate, rtt, busy, wnd),
                "len {len}"
            );
        }
    }

    #[test]
    fn non_tcp_sockets_are_an_error() {
        let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
        assert!(tcp_info(&udp).is_err());
    }
}
