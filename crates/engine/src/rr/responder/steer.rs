//! Steering TCP connections to the worker on the CPU that receives them
//! (SO_INCOMING_CPU): each worker is pinned to one CPU, and a connection whose packets
//! the kernel processes on CPU c is served by the worker pinned to c, so the wakeup,
//! the read and the answer stay on the CPU whose cache already holds the socket.
//! A connection is placed by its incoming CPU when it is handed out (that of its
//! handshake, i.e. of the thread that connected it, not of the thread that will drive
//! it), and re-checked when a request has just been read, before it is answered
//! (`recheck_due`: its 1st, 2nd, 3rd, 5th, 9th ... 257th request, then every `RECHECK`;
//! a getsockopt each); a worker hands a connection to another through that worker's
//! inbox and wakes it with its eventfd. Moving happens a few times per connection at
//! most, never per block.
//!
//! Why before the answer: writing the answer runs the receiving end's TCP on this
//! worker's CPU (loopback and veth deliver in the sender's softirq), and while that end
//! is in quick-ACK mode (its first blocks, when the first request came long after the
//! handshake, as in every run) it acknowledges at once, from this CPU: read just after
//! the answer, the incoming CPU is this worker's own, whatever CPU the requests come
//! from, and a misplaced connection stays for `RECHECK` requests (at 1024 clients,
//! longer than a run). Just after a request is read, the last segment in is that
//! request. BENCHMARKS.md §4 (2026-11-28): before, 3 runs in 16 at 1024 clients had
//! every connection on one worker, and the others some on the wrong one.

use std::os::fd::AsFd;
use std::sync::{Mutex, PoisonError};

use nix::sys::eventfd::{EfdFlags, EventFd};

/// Requests between two checks of a connection's incoming CPU once it has answered
/// this many (a power of two).
pub(super) const RECHECK: u64 = 256;

/// Whether the request read after `served` answered ones is checked: the first, then
/// after 1, 2, 4 ... `RECHECK` answered, then every `RECHECK`. Early checks settle a
/// connection within its first few requests (at 4096 clients a connection answers
/// ~25 a second, so `RECHECK` alone would take 10 s); a wrong early reading (a
/// request sent before its thread was pinned) is corrected within a few more.
pub(super) fn recheck_due(served: u64) -> bool {
    served.is_power_of_two() || served.is_multiple_of(RECHECK)
}

/// Where each worker runs and how connections reach it.
pub(super) struct Steer<C> {
    /// Worker k's CPU.
    cpus: Vec<u32>,
    /// CPU number → the worker pinned to it.
    by_cpu: Vec<Option<usize>>,
    inbox: Vec<Mutex<Vec<C>>>,
    wake: Vec<EventFd>,
}

impl<C> Steer<C> {
    /// Steering for `workers` workers over the online CPUs, one worker per CPU; None
    /// when there are fewer than two workers or more workers than CPUs (nothing to
    /// steer between, or two workers per CPU), or an eventfd cannot be made.
    pub fn new(workers: usize, online: &[u32]) -> Option<Steer<C>> {
        if workers < 2 || workers > online.len() {
            return None;
        }
        let cpus: Vec<u32> = online.iter().copied().take(workers).collect();
        let top = cpus.iter().copied().max()? as usize;
        let mut by_cpu = vec![None; top + 1];
        for (k, &c) in cpus.iter().enumerate() {
            if let Some(slot) = by_cpu.get_mut(c as usize) {
                *slot = Some(k);
            }
        }
        let wake = (0..workers)
            .map(|_| EventFd::from_flags(EfdFlags::EFD_CLOEXEC | EfdFlags::EFD_NONBLOCK).ok())
            .collect::<Option<Vec<_>>>()?;
        Some(Steer {
            cpus,
            by_cpu,
            inbox: (0..workers).map(|_| Mutex::new(Vec::new())).collect(),
            wake,
        })
    }

    /// Worker `k`'s CPU, which its thread is pinned to (`Pinning::pin_own`, recorded
    /// in its placement; a failure leaves it unpinned: steering then only costs the
    /// moves).
    pub fn cpu(&self, k: usize) -> Option<u32> {
        self.cpus.get(k).copied()
    }

    /// The worker for a connection the kernel last received on, if known.
    pub fn worker_for(&self, sock: &impl AsFd) -> Option<usize> {
        let cpu = mtuperf_sys::sockopt::incoming_cpu(sock).ok()?;
        self.by_cpu.get(cpu as usize).copied().flatten()
    }

    /// Worker `k`'s wakeup descriptor (to register with its epoll).
    pub fn waker(&self, k: usize) -> Option<&EventFd> {
        self.wake.get(k)
    }

    /// Hands `c` to worker `k` and wakes it.
    pub fn send(&self, k: usize, c: C) {
        if let Some(m) = self.inbox.get(k) {
            m.lock().unwrap_or_else(PoisonError::into_inner).push(c);
        }
        if let Some(w) = self.wake.get(k) {
            let _ = w.write(1);
        }
    }

    /// What was handed to worker `k` since it last looked (clears its wakeup).
    pub fn take(&self, k: usize, into: &mut Vec<C>) {
        if let Some(w) = self.wake.get(k) {
            let _ = w.read();
        }
        if let Some(m) = self.inbox.get(k) {
            into.append(&mut m.lock().unwrap_or_else(PoisonError::into_inner));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Steer;

    #[test]
    fn checks_early_then_every_recheck() {
        let due: Vec<u64> = (0..1100).filter(|&n| super::recheck_due(n)).collect();
        assert_eq!(due, [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 768, 1024]);
    }

    #[test]
    fn one_worker_per_cpu_or_none() {
        assert!(Steer::<u8>::new(1, &[0, 1]).is_none());
        assert!(Steer::<u8>::new(3, &[0, 1]).is_none());
        let s = Steer::<u8>::new(2, &[0, 2]).unwrap();
        assert_eq!(s.by_cpu, vec![Some(0), None, Some(1)]);
        s.send(1, 7);
        s.send(1, 8);
        let mut got = Vec::new();
        s.take(1, &mut got);
        assert_eq!(got, vec![7, 8]);
        s.take(0, &mut got);
        assert_eq!(got, vec![7, 8]);
    }
}
