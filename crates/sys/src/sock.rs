//! The per-block socket calls (a stream's reads and writes, rr's datagrams) by a direct
//! system call.
//!
//! glibc's `recv`, `recvfrom`, `send` and `sendto` are thread cancellation points: in a
//! process with more than one thread each call is wrapped in two more calls that switch
//! asynchronous cancellation on and off. mtuperf cancels no thread, and on a loopback
//! round trip of about 14 µs, four such syscalls cost ~0.3% (BENCHMARKS.md §18).
//! rustix issues the syscall itself (its linux_raw backend); errors and timeouts come
//! back as the same `std::io::Error`s as from std's sockets (a receive timeout set with
//! `set_read_timeout` is `WouldBlock`; a signal is `Interrupted`).

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsFd;

use rustix::net::{RecvFlags, SendFlags};

/// `recv` on a connected socket, blocking up to its read timeout: the length read,
/// 0 at a stream's end.
pub fn recv(sock: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    Ok(rustix::net::recv(sock, buf, RecvFlags::empty())?.0)
}

/// `recv` without waiting: `WouldBlock` when nothing is queued.
pub fn recv_now(sock: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    Ok(rustix::net::recv(sock, buf, RecvFlags::DONTWAIT)?.0)
}

/// `send` on a connected socket; a peer that closed is `BrokenPipe`, never a SIGPIPE.
pub fn send(sock: impl AsFd, buf: &[u8]) -> io::Result<usize> {
    Ok(rustix::net::send(sock, buf, SendFlags::NOSIGNAL)?)
}

/// `recvfrom`: the length read and the sender.
pub fn recv_from(sock: &UdpSocket, buf: &mut [u8]) -> io::Result<(usize, SocketAddr)> {
    let (n, _, from) = rustix::net::recvfrom(sock, buf, RecvFlags::empty())?;
    let from = from
        .and_then(|a| SocketAddr::try_from(a).ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "datagram from no IP address"))?;
    Ok((n, from))
}

/// `sendto` one datagram to `to`.
pub fn send_to(sock: &UdpSocket, buf: &[u8], to: SocketAddr) -> io::Result<usize> {
    Ok(rustix::net::sendto(sock, buf, SendFlags::NOSIGNAL, &to)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::udp_pair;
    use std::time::Duration;

    #[test]
    fn a_datagram_goes_out_and_back_whole_with_its_sender() {
        let (a, b) = udp_pair();
        assert_eq!(send(&a, b"request").unwrap(), 7);
        let mut buf = [0u8; 64];
        let (n, from) = recv_from(&b, &mut buf).unwrap();
        assert_eq!(
            (&buf[..n], from),
            (&b"request"[..], a.local_addr().unwrap())
        );
        assert_eq!(send_to(&b, b"answer!!", from).unwrap(), 8);
        assert_eq!(recv(&a, &mut buf).unwrap(), 8);
        assert_eq!(&buf[..8], b"answer!!");
    }

    #[test]
    fn nothing_queued_is_would_block_and_a_read_timeout_is_too() {
        let (a, _b) = udp_pair();
        let mut buf = [0u8; 16];
        let e = recv_now(&a, &mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock, "{e}");
        a.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        let e = recv(&a, &mut buf).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock, "{e}");
    }

    #[test]
    fn a_stream_reads_its_bytes_then_its_end_and_a_closed_peer_is_broken_pipe() {
        use std::net::{TcpListener, TcpStream};
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        assert_eq!(send(&c, b"bytes").unwrap(), 5);
        c.shutdown(std::net::Shutdown::Write).unwrap();
        let mut buf = [0u8; 16];
        assert_eq!(recv(&s, &mut buf).unwrap(), 5);
        assert_eq!(recv(&s, &mut buf).unwrap(), 0, "the end of the stream");
        drop(s);
        // The peer is gone: the first send may still be taken, a later one fails.
        let err = (0..100)
            .find_map(|_| send(&c, &[0u8; 4096]).err())
            .expect("a send to a closed peer fails");
        assert!(
            matches!(
                err.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
            ),
            "{err}"
        );
    }

    #[test]
    fn a_longer_datagram_is_cut_to_the_buffer() {
        let (a, b) = udp_pair();
        send(&a, &[7u8; 100]).unwrap();
        let mut buf = [0u8; 10];
        let (n, _) = recv_from(&b, &mut buf).unwrap();
        assert_eq!(n, 10);
    }
}
