//! Steering TCP connections to the worker on the CPU that receives them
//! (SO_INCOMING_CPU): each worker is pinned to one CPU, and a connection whose packets
//! the kernel processes on CPU c is served by the worker pinned to c, so the wakeup,
//! the read and the answer stay on the CPU whose cache already holds the socket.
//! A connection is placed by its incoming CPU when it is handed out, and re-checked
//! on its first request and every `RECHECK` requests after (a getsockopt, amortised);
//! a worker hands a connection to another through that worker's inbox and wakes it
//! with its eventfd. Moving happens a few times per connection at most, never per block.

use std::os::fd::AsFd;
use std::sync::{Mutex, PoisonError};

use nix::sys::eventfd::{EfdFlags, EventFd};

/// Requests between two checks of a connection's incoming CPU (a power of two).
pub(super) const RECHECK: u64 = 256;

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
