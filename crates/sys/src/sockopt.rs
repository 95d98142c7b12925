//! Socket options mtuperf reads and sets: buffer sizes, MSS, TCP_INFO, and the path
//! MTU probing options (IP_MTU_DISCOVER, IP_RECVERR, IP_MTU) with the error queue.
//! Every function takes any socket through `AsFd`.

pub(crate) mod errqueue;
pub mod mmsg;
mod tcpinfo;

use std::io;
use std::os::fd::{AsFd, AsRawFd};

pub use errqueue::{recv_err, ErrQueueEntry, Origin};
pub use tcpinfo::tcp_info;

/// How the kernel treats the Don't Fragment bit and the cached path MTU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmtuMode {
    /// Set DF but ignore the cached path MTU: probes of any size leave the host, so a
    /// stale low value cannot mask the live path (IP_PMTUDISC_PROBE).
    Probe,
    /// Set DF and honour the cached path MTU; larger sends fail with EMSGSIZE.
    Do,
    /// Never set DF; the kernel fragments.
    Dont,
}

/// Sets TCP_MAXSEG (on a listener it also caps the MSS advertised to peers).
pub fn set_tcp_maxseg(fd: &impl AsFd, mss: u32) -> io::Result<()> {
    set(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, int(mss)?)
}

/// TCP_MAXSEG: the current MSS of a connection (the configured one before connect).
pub fn tcp_maxseg(fd: &impl AsFd) -> io::Result<u32> {
    get_u32(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG)
}

/// SO_RCVBUFFORCE: a receive buffer beyond `net.core.rmem_max`, for a process with
/// CAP_NET_ADMIN (EPERM otherwise). The kernel doubles the value, as for SO_RCVBUF.
pub fn set_rcvbuf_force(fd: &impl AsFd, bytes: u32) -> io::Result<()> {
    set(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, int(bytes)?)
}

/// SO_SNDBUFFORCE: a send buffer beyond `net.core.wmem_max`, for a process with
/// CAP_NET_ADMIN (EPERM otherwise). The kernel doubles the value, as for SO_SNDBUF.
pub fn set_sndbuf_force(fd: &impl AsFd, bytes: u32) -> io::Result<()> {
    set(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, int(bytes)?)
}

/// SO_SNDBUF as granted by the kernel (twice the request, clamped to wmem_max).
pub fn sndbuf(fd: &impl AsFd) -> io::Result<u32> {
    get_u32(fd, libc::SOL_SOCKET, libc::SO_SNDBUF)
}

/// SO_RCVBUF as granted by the kernel (twice the request, clamped to rmem_max).
pub fn rcvbuf(fd: &impl AsFd) -> io::Result<u32> {
    get_u32(fd, libc::SOL_SOCKET, libc::SO_RCVBUF)
}

/// Requests a send buffer of `n` bytes (plain SO_SNDBUF).
pub fn set_sndbuf(fd: &impl AsFd, n: u32) -> io::Result<()> {
    set(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, int(n)?)
}

/// Requests a receive buffer of `n` bytes (plain SO_RCVBUF).
pub fn set_rcvbuf(fd: &impl AsFd, n: u32) -> io::Result<()> {
    set(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, int(n)?)
}

/// SO_INCOMING_CPU (asm-generic/socket.h; not in the libc crate): the CPU on which
/// the kernel last processed a packet received on this socket.
const SO_INCOMING_CPU: libc::c_int = 49;

/// The CPU that last received for this socket (SO_INCOMING_CPU, Linux 3.19+): with
/// RSS the CPU of the NIC queue its flow hashes to; over loopback or veth the CPU of
/// the sender. Fails before the socket received anything.
pub fn incoming_cpu(fd: &impl AsFd) -> io::Result<u32> {
    get_u32(fd, libc::SOL_SOCKET, SO_INCOMING_CPU)
}

/// SO_MEMINFO (asm-generic/socket.h; not in the libc crate): the socket's memory
/// counters, of which SK_MEMINFO_DROPS is the datagrams (or GRO-coalesced receives)
/// its receive queue dropped since it was made, mostly for a full buffer.
const SO_MEMINFO: libc::c_int = 55;

/// Packets this socket's receive queue dropped so far (SO_MEMINFO's
/// SK_MEMINFO_DROPS, Linux 4.11+): a full receive buffer, or a packet refused on
/// arrival. Unlike the SO_RXQ_OVFL control message, which rides only on a datagram
/// queued after the drop, it also counts drops no datagram followed.
pub fn socket_drops(fd: &impl AsFd) -> io::Result<u32> {
    const VARS: usize = libc::SK_MEMINFO_DROPS as usize + 1;
    let mut info = [0u32; VARS];
    let mut len = size_of_val(&info) as libc::socklen_t;
    // SAFETY: `info` and `len` are live and writable; `len` holds info's size, and the
    // kernel copies at most that many bytes.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::SOL_SOCKET,
            SO_MEMINFO,
            info.as_mut_ptr().cast(),
            &raw mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    if (len as usize) < size_of_val(&info) {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "SO_MEMINFO without a drop count",
        ));
    }
    Ok(info[VARS - 1])
}

/// IP_MTU_DISCOVER or IPV6_MTU_DISCOVER.
pub fn set_pmtu_discover(fd: &impl AsFd, v6: bool, mode: PmtuMode) -> io::Result<()> {
    // The IPv4 and IPv6 constants have the same values (DONT 0, DO 2, PROBE 3).
    let value = match mode {
        PmtuMode::Probe => libc::IP_PMTUDISC_PROBE,
        PmtuMode::Do => libc::IP_PMTUDISC_DO,
        PmtuMode::Dont => libc::IP_PMTUDISC_DONT,
    };
    if v6 {
        set(fd, libc::IPPROTO_IPV6, libc::IPV6_MTU_DISCOVER, value)
    } else {
        set(fd, libc::IPPROTO_IP, libc::IP_MTU_DISCOVER, value)
    }
}

/// IP_RECVERR or IPV6_RECVERR: queue ICMP and local errors for [`recv_err`].
pub fn set_recverr(fd: &impl AsFd, v6: bool) -> io::Result<()> {
    if v6 {
        set(fd, libc::IPPROTO_IPV6, libc::IPV6_RECVERR, 1)
    } else {
        set(fd, libc::IPPROTO_IP, libc::IP_RECVERR, 1)
    }
}

/// IP_TTL or IPV6_UNICAST_HOPS.
pub fn set_ttl(fd: &impl AsFd, v6: bool, ttl: u32) -> io::Result<()> {
    if v6 {
        set(fd, libc::IPPROTO_IPV6, libc::IPV6_UNICAST_HOPS, int(ttl)?)
    } else {
        set(fd, libc::IPPROTO_IP, libc::IP_TTL, int(ttl)?)
    }
}

/// IP_MTU or IPV6_MTU: the kernel's current path MTU for a connected socket.
pub fn path_mtu(fd: &impl AsFd, v6: bool) -> io::Result<u32> {
    if v6 {
        get_u32(fd, libc::IPPROTO_IPV6, libc::IPV6_MTU)
    } else {
        get_u32(fd, libc::IPPROTO_IP, libc::IP_MTU)
    }
}

fn int(v: u32) -> io::Result<libc::c_int> {
    libc::c_int::try_from(v).map_err(|_| io::ErrorKind::InvalidInput.into())
}

fn set(
    fd: &impl AsFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `value` is a live c_int and the length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (&raw const value).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn get_u32(fd: &impl AsFd, level: libc::c_int, name: libc::c_int) -> io::Result<u32> {
    let mut value: libc::c_int = 0;
    let mut len = size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are live and writable; `len` holds value's size.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            level,
            name,
            (&raw mut value).cast(),
            &raw mut len,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    u32::try_from(value)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "negative option value"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream, UdpSocket};

    #[test]
    fn buffer_sizes_are_doubled_by_the_kernel() {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        set_sndbuf(&s, 16_384).unwrap();
        set_rcvbuf(&s, 16_384).unwrap();
        assert_eq!(sndbuf(&s).unwrap(), 32_768);
        assert_eq!(rcvbuf(&s).unwrap(), 32_768);
        assert!(set_sndbuf(&s, u32::MAX).is_err());
    }

    #[test]
    fn a_full_receive_buffer_counts_its_drops_on_the_socket() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        set_rcvbuf(&rx, 4096).unwrap();
        let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
        tx.connect(rx.local_addr().unwrap()).unwrap();
        assert_eq!(socket_drops(&rx).unwrap(), 0);
        for _ in 0..200 {
            tx.send(&[0u8; 1000]).unwrap();
        }
        // An 8 KiB buffer holds a few of them; the rest were dropped and counted.
        let mut buf = [0u8; 2000];
        rx.set_nonblocking(true).unwrap();
        let mut got = 0u32;
        while rx.recv(&mut buf).is_ok() {
            got += 1;
        }
        let drops = socket_drops(&rx).unwrap();
        assert!(drops > 0 && got > 0, "got {got}, drops {drops}");
        assert_eq!(got + drops, 200);
    }

    #[test]
    fn ttl_and_pmtu_options_on_loopback() {
        for (bind, dst, v6) in [
            ("127.0.0.1:0", "127.0.0.1:9", false),
            ("[::1]:0", "[::1]:9", true),
        ] {
            let s = UdpSocket::bind(bind).unwrap();
            s.connect(dst).unwrap();
            set_ttl(&s, v6, 7).unwrap();
            if !v6 {
                assert_eq!(s.ttl().unwrap(), 7);
            }
            for mode in [PmtuMode::Probe, PmtuMode::Do, PmtuMode::Dont] {
                set_pmtu_discover(&s, v6, mode).unwrap();
            }
            set_recverr(&s, v6).unwrap();
            // lo has MTU 65536; IPv4 caps it at IP_MAX_MTU (65535), IPv6 does not.
            let want = if v6 { 65_536 } else { 65_535 };
            assert_eq!(path_mtu(&s, v6).unwrap(), want, "{dst}");
        }
    }

    #[test]
    fn incoming_cpu_of_a_loopback_connection_is_an_online_cpu() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        std::io::Write::write_all(&mut client, b"x").unwrap();
        let mut b = [0u8; 1];
        std::io::Read::read_exact(&mut server, &mut b).unwrap();
        let cpu = incoming_cpu(&server).unwrap();
        let online = crate::affinity::online_cpus();
        assert!(online.contains(&cpu), "cpu {cpu} not in {online:?}");
    }

    #[test]
    fn maxseg_on_a_listener_caps_the_peer_mss() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        set_tcp_maxseg(&listener, 1000).unwrap();
        assert_eq!(tcp_maxseg(&listener).unwrap(), 1000);
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        let client_mss = tcp_maxseg(&client).unwrap();
        assert!(
            client_mss > 0 && client_mss <= 1000,
            "client mss {client_mss}"
        );
        assert!(tcp_maxseg(&server).unwrap() <= 1000);
        assert!(tcp_info(&client).unwrap().snd_mss <= 1000);
    }
}
