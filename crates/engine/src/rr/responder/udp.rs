//! The UDP responder: `workers` threads share one socket (each takes a batch of
//! requests per `recvmmsg`, blocking for the first with a short timeout to notice the
//! end, and answers the batch with one `sendmmsg`: `udp_batch`; a single client's
//! one request in flight is served with plain `recvfrom`/`sendto`). A datagram is answered only when it comes from
//! the control connection's address and one of the client's registered ports AND
//! carries the session token and a well-formed request header; the answer goes back
//! to that source and nowhere else. Everything else is counted as rejected and
//! dropped. Per datagram the work is at most one recv, one send and constant-time checks
//! (the registered ports are a bitmap), whatever the number of clients.
//!
//! One shared socket rather than one SO_REUSEPORT socket per worker: the kernel
//! spreads REUSEPORT traffic by 4-tuple, and the client sends from only a few sockets
//! (one per client thread), so REUSEPORT would leave most workers idle.

use std::net::{IpAddr, UdpSocket};
use std::time::Instant;

use mtuperf_proto::dgram::HEADER_LEN;

use super::udp_allow::Allowed;
use super::{fan_out, Block, Serving, Tally};

/// What one queued request costs the responder socket's receive buffer: the kernel
/// charges an skb's truesize, not the datagram's length, and a small datagram
/// received over veth or a NIC is charged about 1–2 KiB. Budget 2 KiB.
const REQUEST_TRUESIZE: u64 = 2048;
/// The floor every responder socket gets (as the requester's sockets).
const RCVBUF_FLOOR: u64 = 4 << 20;
/// The most a responder asks for: 4096 clients' requests with room to spare.
const RCVBUF_CEILING: u64 = 64 << 20;

/// Sizes the responder socket's receive buffer so every request in flight fits: in
/// a closed loop each of `clients` has one outstanding, and the workers may all be
/// busy while they arrive. Beyond `net.core.rmem_max` only SO_RCVBUFFORCE (root,
/// CAP_NET_ADMIN) can grant it. Returns a warning when the socket got less than the
/// clients need: their requests would then be dropped as RcvbufErrors, and the loss
/// would be the socket's, not the path's.
pub(in crate::rr) fn hold_requests(sock: &UdpSocket, clients: u32) -> Option<String> {
    let want = (u64::from(clients) * REQUEST_TRUESIZE).clamp(RCVBUF_FLOOR, RCVBUF_CEILING);
    // The kernel reports (and charges against) twice what was asked.
    let granted = || mtuperf_sys::sockopt::rcvbuf(sock).map_or(0, u64::from) / 2;
    if granted() >= want {
        return None;
    }
    let asked = u32::try_from(want).unwrap_or(u32::MAX);
    let _ = mtuperf_sys::sockopt::set_rcvbuf_force(sock, asked);
    let got = granted();
    (got < want).then(|| {
        format!(
            "UDP responder receive buffer {} KiB for {clients} clients' requests, which need {} KiB: requests may be dropped by the socket (RcvbufErrors); raise net.core.rmem_max or run the agent with CAP_NET_ADMIN",
            got / 1024,
            want / 1024
        )
    })
}

/// Serves until `shared.stop` or `deadline`; returns the summed tallies. `clients`:
/// how many requests can be in flight at once (each client has at most one), which
/// bounds the batch a worker takes per recvmmsg.
pub(in crate::rr) fn serve(
    sock: &UdpSocket,
    workers: u32,
    shared: &Serving,
    (peer, ports): (IpAddr, &[u16]),
    clients: u32,
    deadline: Instant,
) -> Tally {
    let block = Block::new(shared.block);
    let allowed = Allowed::new(shared, peer, ports, HEADER_LEN + shared.request as usize);
    let (allowed, block) = (&allowed, &block);
    fan_out(
        &shared.pin,
        (0..workers.max(1)).collect(),
        |_| None,
        |_| super::udp_batch::worker(sock, allowed, clients, deadline, block),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_responder_socket_holds_4096_clients_requests() {
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let warning = super::hold_requests(&sock, 4096);
        let got = u64::from(mtuperf_sys::sockopt::rcvbuf(&sock).unwrap()) / 2;
        let need = 4096 * super::REQUEST_TRUESIZE;
        // With CAP_NET_ADMIN (root: the test suite's and CI's setting) SO_RCVBUFFORCE grants it;
        // otherwise the shortfall must be said, never silent.
        if has_net_admin() {
            assert!(got >= need, "got {got} B, need {need} B; {warning:?}");
            assert_eq!(warning, None);
        } else if got < need {
            let w = warning.expect("a short buffer is reported");
            assert!(w.contains("4096 clients") && w.contains("rmem_max"), "{w}");
        }
    }

    #[test]
    fn one_client_with_several_requests_queued_has_every_one_answered() {
        use std::net::UdpSocket;
        use std::time::{Duration, Instant};

        use mtuperf_proto::dgram::{Header, Kind, HEADER_LEN};
        use mtuperf_proto::msg::rr::RrHooks;

        use crate::rr::responder::Serving;
        use crate::rr::wire::request_header;

        // One client, so the worker takes one request per recvmmsg: a re-sent request
        // queued behind its late original (or any burst) is still answered, one by one.
        let (token, block, request) = (0x5eed_u64, 1024u32, 64u32);
        let agent = UdpSocket::bind("127.0.0.1:0").unwrap();
        let client = UdpSocket::bind("127.0.0.1:0").unwrap();
        client.connect(agent.local_addr().unwrap()).unwrap();
        agent
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let port = client.local_addr().unwrap().port();
        let mut req = vec![0u8; HEADER_LEN + request as usize];
        for seq in 1..=5 {
            request_header(&mut req, 0, token, seq, 0, request);
            client.send(&req).unwrap();
        }
        let shared = Serving::new(token, block, request, RrHooks::default());
        let ip = std::net::IpAddr::from([127, 0, 0, 1]);
        let deadline = Instant::now() + Duration::from_millis(300);
        let t = super::serve(&agent, 1, &shared, (ip, &[port]), 1, deadline);
        assert_eq!((t.requests, t.responses, t.rejected), (5, 5, 0), "{t:?}");
        client
            .set_read_timeout(Some(Duration::from_secs(1)))
            .unwrap();
        let mut buf = vec![0u8; 65_536];
        let seqs: Vec<u64> = (0..5)
            .map(|_| {
                let n = client.recv(&mut buf).unwrap();
                let h = Header::read(&buf[..n]).unwrap();
                assert_eq!((h.kind, n), (Kind::RrResponse, HEADER_LEN + block as usize));
                h.seq
            })
            .collect();
        assert_eq!(seqs, [1, 2, 3, 4, 5]);
    }

    /// CAP_NET_ADMIN in the effective set, which SO_RCVBUFFORCE needs.
    fn has_net_admin() -> bool {
        use mtuperf_lab::env::{parse_cap_eff, CAP_NET_ADMIN};
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| parse_cap_eff(&s))
            .is_some_and(|caps| caps & (1 << CAP_NET_ADMIN) != 0)
    }
}
