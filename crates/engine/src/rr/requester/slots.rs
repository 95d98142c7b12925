//! Per-client state of a requester thread and the schedule that says which client
//! sends next. Nothing here scans the clients: what is due sits in queues, so the
//! work per block is the same at 16 clients as at 4096.
//!
//! - `ready`: clients free to send now (closed loop: their block arrived; open loop:
//!   their due time passed, or passed while they were still waiting).
//! - `due` (open loop): each free client's next due time, in a binary heap (O(log n)
//!   per send; every client has one entry).
//! - `deadlines` (UDP): (deadline, client, seq) in send order. One timeout for every
//!   request and a monotonic clock make the deadlines non-decreasing, so the front is
//!   always the earliest: a FIFO serves as the timer wheel. Entries of answered
//!   requests are skipped when they reach the front (their seq no longer matches).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use mtuperf_proto::dgram::HEADER_LEN;

#[derive(Clone, Copy)]
pub struct Slot {
    pub seq: u64,
    pub waiting: bool,
    pub due_ns: u64,
    /// Open loop: the due time passed while the slot still waited; it sends as soon
    /// as its block arrives.
    pub overdue: bool,
    pub intended_ns: u64,
    /// When the request waited for was sent (its re-send, after a timeout).
    pub sent_ns: u64,
    /// Bit d: block of request `seq - d` received.
    pub done: u64,
    pub highest_rx: u64,
    pub free_since_ns: u64,
    // TCP message being read.
    pub hdr: [u8; HEADER_LEN],
    pub hdr_got: usize,
    pub body_left: u64,
    pub fnv: u32,
    pub dead: bool,
}

impl Default for Slot {
    fn default() -> Self {
        Slot {
            seq: 0,
            waiting: false,
            due_ns: 0,
            overdue: false,
            intended_ns: 0,
            sent_ns: 0,
            done: 0,
            highest_rx: 0,
            free_since_ns: 0,
            hdr: [0; HEADER_LEN],
            hdr_got: 0,
            body_left: 0,
            fnv: 0,
            dead: false,
        }
    }
}

/// Which clients send next, and when the next timeout falls.
pub struct Schedule {
    pub ready: VecDeque<u32>,
    due: BinaryHeap<Reverse<(u64, u32)>>,
    deadlines: VecDeque<(u64, u32, u64)>,
}

impl Schedule {
    /// Closed loop: every client is ready at once. Open loop: client i (of this
    /// thread) is first due at `first(i)`.
    pub fn new(clients: u32, first: Option<&dyn Fn(u32) -> u64>) -> Schedule {
        let n = clients as usize;
        let mut s = Schedule {
            ready: VecDeque::with_capacity(n),
            due: BinaryHeap::with_capacity(n),
            // Grows (amortised) to the requests in flight within one timeout.
            deadlines: VecDeque::with_capacity(n.max(64) * 4),
        };
        for i in 0..clients {
            match first {
                None => s.ready.push_back(i),
                Some(f) => s.due.push(Reverse((f(i), i))),
            }
        }
        s
    }

    pub fn push_due(&mut self, at_ns: u64, i: u32) {
        self.due.push(Reverse((at_ns, i)));
    }

    /// Pops the next client due at or before `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<u32> {
        match self.due.peek() {
            Some(Reverse((at, _))) if *at <= now => self.due.pop().map(|Reverse((_, i))| i),
            _ => None,
        }
    }

    pub fn push_deadline(&mut self, at_ns: u64, i: u32, seq: u64) {
        self.deadlines.push_back((at_ns, i, seq));
    }

    /// Pops the next (client, seq) whose deadline passed at `now` (maybe answered
    /// since: the caller checks the seq).
    pub fn pop_expired(&mut self, now: u64) -> Option<(u32, u64)> {
        match self.deadlines.front() {
            Some(&(at, i, seq)) if at <= now => {
                self.deadlines.pop_front();
                Some((i, seq))
            }
            _ => None,
        }
    }

    /// The earliest instant something is due or times out (u64::MAX: nothing).
    pub fn next_ns(&self) -> u64 {
        let due = self.due.peek().map_or(u64::MAX, |Reverse((at, _))| *at);
        let dl = self.deadlines.front().map_or(u64::MAX, |d| d.0);
        due.min(dl)
    }
}

#[cfg(test)]
mod tests {
    use super::Schedule;

    #[test]
    fn due_times_come_out_in_order_and_only_when_due() {
        let first = |i: u32| [30u64, 10, 20][i as usize];
        let mut s = Schedule::new(3, Some(&first));
        assert!(s.ready.is_empty());
        assert_eq!(s.next_ns(), 10);
        assert_eq!(s.pop_due(9), None);
        assert_eq!(s.pop_due(25), Some(1));
        assert_eq!(s.pop_due(25), Some(2));
        assert_eq!(s.pop_due(25), None);
        s.push_due(12, 1);
        assert_eq!(s.next_ns(), 12);
    }

    #[test]
    fn deadlines_expire_in_send_order() {
        let mut s = Schedule::new(2, None);
        assert_eq!(s.ready.iter().copied().collect::<Vec<_>>(), [0, 1]);
        s.push_deadline(100, 0, 1);
        s.push_deadline(150, 1, 1);
        assert_eq!(s.next_ns(), 100);
        assert_eq!(s.pop_expired(99), None);
        assert_eq!(s.pop_expired(120), Some((0, 1)));
        assert_eq!(s.pop_expired(120), None);
        assert_eq!(s.pop_expired(150), Some((1, 1)));
        assert_eq!(s.next_ns(), u64::MAX);
    }
}
