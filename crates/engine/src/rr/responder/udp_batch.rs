//! The UDP responder's batched loop: one `recvmmsg` takes up to `BATCH` requests
//! (blocking for the first, up to the socket's read timeout, then whatever else is
//! queued), one `sendmmsg` answers all that passed the checks. Each answer is two
//! pieces, its own 40-byte header and the block every answer shares, so nothing is
//! copied or allocated per block: the buffers are made once per worker.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::Instant;

use mtuperf_proto::dgram::HEADER_LEN;
use mtuperf_sys::sockopt::mmsg::{Datagrams, RecvBatch, SendBatch};

use super::udp_allow::{accept, Allowed};
use super::{Block, Tally};
use crate::rr::wire::{flip, response_header};

/// Requests taken per recvmmsg at most.
const BATCH: usize = 32;

/// `clients`: the most requests that can be queued at once (one per client). A batch
/// no larger than that ends its recvmmsg at the last request that can be there,
/// instead of trying once more for one that cannot. One client is served one request
/// at a time with plain `recvfrom`/`sendto` ([`one_by_one`]).
pub(super) fn worker(
    sock: &UdpSocket,
    a: &Allowed<'_>,
    clients: u32,
    deadline: Instant,
    block: &Block,
) -> Tally {
    if clients <= 1 {
        return one_by_one(sock, a, deadline, block);
    }
    let batch = (clients as usize).clamp(1, BATCH);
    let shared = a.shared;
    let mut t = Tally::default();
    // One byte more than a request: a longer datagram shows as too long.
    let mut rx = RecvBatch::new(batch, a.expect_len + 1);
    let mut heads = [0u8; BATCH * HEADER_LEN];
    let mut to = [SocketAddr::from(([0u8; 4], 0)); BATCH];
    let mut out = SendBatch::new(BATCH, BATCH);
    // The corrupt-response hook's answers go out one by one from a whole copy.
    let mut whole = block.response_buffer();
    let mut stalled = false;
    let (mut end, mut idle) = (Deadline::new(deadline), true);
    while !shared.stop.load(Ordering::Relaxed) && !end.passed(idle) {
        let n = rx.recv(sock).unwrap_or(0);
        idle = n == 0;
        let mut answers = 0;
        for m in (0..n).filter_map(|j| rx.get(j)) {
            let Some((req, from)) = m
                .from
                .and_then(|f| accept(m.data, m.data.len(), f, a).map(|h| (h, f)))
            else {
                t.rejected += 1;
                continue;
            };
            t.requests += 1;
            shared.maybe_stall(&mut stalled);
            if shared.next_response_corrupt() {
                response_header(&mut whole, &req, block.sum, shared.block);
                flip(&mut whole);
                if let Ok(sent) = sock.send_to(&whole, from) {
                    t.responses += 1;
                    t.bytes_sent += sent as u64;
                }
                flip(&mut whole);
                continue;
            }
            let head = heads.get_mut(answers * HEADER_LEN..(answers + 1) * HEADER_LEN);
            if let (Some(h), Some(dst)) = (head, to.get_mut(answers)) {
                response_header(h, &req, block.sum, shared.block);
                *dst = from;
                answers += 1;
            }
        }
        send_all(
            sock,
            &mut out,
            &heads,
            &to,
            answers,
            block.payload(),
            &mut t,
        );
    }
    t
}

/// One client has one request in flight: nothing to batch. `recvfrom` and `sendto`
/// of one whole answer cost less per request than a one-message `recvmmsg` and a
/// two-piece `sendmmsg` (the message header and iovec copied in and checked on each
/// call: about 5% of a loopback round trip, BENCHMARKS.md §18). The same checks and
/// counts as the batched loop.
fn one_by_one(sock: &UdpSocket, a: &Allowed<'_>, deadline: Instant, block: &Block) -> Tally {
    let shared = a.shared;
    let mut t = Tally::default();
    // One byte more than a request: a longer datagram shows as too long.
    let mut rx = vec![0u8; a.expect_len + 1];
    let mut tx = block.response_buffer();
    let mut stalled = false;
    let (mut end, mut idle) = (Deadline::new(deadline), true);
    while !shared.stop.load(Ordering::Relaxed) && !end.passed(idle) {
        // Blocks up to the socket's read timeout, so the stop and the end are seen.
        let Ok((n, from)) = mtuperf_sys::sock::recv_from(sock, &mut rx) else {
            idle = true;
            continue;
        };
        idle = false;
        let Some(req) = accept(&rx, n, from, a) else {
            t.rejected += 1;
            continue;
        };
        t.requests += 1;
        shared.maybe_stall(&mut stalled);
        response_header(&mut tx, &req, block.sum, shared.block);
        let corrupt = shared.next_response_corrupt();
        if corrupt {
            flip(&mut tx);
        }
        if let Ok(sent) = mtuperf_sys::sock::send_to(sock, &tx, from) {
            t.responses += 1;
            t.bytes_sent += sent as u64;
        }
        if corrupt {
            flip(&mut tx);
        }
    }
    t
}

/// How many requests a responder serves between two looks at the clock for its
/// deadline. A clock read per request was a third of the one-client loop's own user
/// time (BENCHMARKS.md §18); a client that keeps sending past the deadline is served
/// at most this many requests more, a few milliseconds at most.
const CLOCK_EVERY: u32 = 64;

/// A responder loop's deadline, looked at after every wait that timed out (nothing
/// came: the end may have passed unseen) and every [`CLOCK_EVERY`] requests otherwise.
struct Deadline {
    at: Instant,
    /// Requests left before the next look.
    left: u32,
}

impl Deadline {
    fn new(at: Instant) -> Deadline {
        Deadline { at, left: 0 }
    }

    /// True once the deadline passed. `idle`: the last wait timed out or failed.
    fn passed(&mut self, idle: bool) -> bool {
        if self.left > 0 && !idle {
            self.left -= 1;
            return false;
        }
        self.left = CLOCK_EVERY;
        Instant::now() >= self.at
    }
}

/// Sends the first `answers` answers (header `j` of `heads` + the block, to
/// `to[j]`), in as many sendmmsg calls as the kernel needs; an error drops the rest
/// (the requests time out at their clients, as a failed send_to's would).
fn send_all(
    sock: &UdpSocket,
    out: &mut SendBatch,
    heads: &[u8],
    to: &[SocketAddr],
    answers: usize,
    payload: &[u8],
    t: &mut Tally,
) {
    let mut done = 0;
    while done < answers {
        let (Some(h), Some(dst)) = (
            heads.get(done * HEADER_LEN..answers * HEADER_LEN),
            to.get(done..answers),
        ) else {
            return;
        };
        let d = Datagrams {
            heads: h,
            head_len: HEADER_LEN,
            body: payload,
            per_message: 1,
        };
        match out.send(sock, &d, Some(dst)) {
            Ok(0) => return,
            Ok(k) => {
                done += k;
                t.responses += k as u64;
                t.bytes_sent += (k * (HEADER_LEN + payload.len())) as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{Deadline, CLOCK_EVERY};

    #[test]
    fn a_passed_deadline_is_seen_within_the_clock_interval_or_at_once_when_idle() {
        // Not passed: every call says so.
        let mut d = Deadline::new(Instant::now() + Duration::from_mins(1));
        assert!((0..3 * CLOCK_EVERY).all(|_| !d.passed(false)));
        // Passed: a busy loop sees it within CLOCK_EVERY + 1 requests...
        let mut d = Deadline::new(Instant::now());
        d.left = CLOCK_EVERY;
        let seen = (0..=CLOCK_EVERY + 1).position(|_| d.passed(false));
        assert_eq!(seen, Some(CLOCK_EVERY as usize));
        // ...and a wait that timed out looks at once.
        let mut d = Deadline::new(Instant::now());
        d.left = CLOCK_EVERY;
        assert!(d.passed(true));
    }
}
