//! A responder serves blocks: the agent's (always) and the client's (the reverse
//! direction of `--bidir`) run this same code. Neither needs a session: a responder
//! gets a socket or connections, a token, its allowed peers, the sizes, a worker
//! count and the stop flag in `Serving`. `udp` and `tcp` hold the serving loops;
//! here is what their threads share and count, and the one fan-out both use.

mod steer;
pub(super) mod tcp;
pub(super) mod udp;
mod udp_allow;
mod udp_batch;

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::dgram::{checksum, HEADER_LEN};
use mtuperf_proto::host::ThreadsCpu;
use mtuperf_proto::msg::rr::RrHooks;

use crate::payload::incompressible;
use crate::placement::Pinning;

/// What every serving thread shares.
pub struct Serving {
    pub token: u64,
    pub block: u32,
    pub request: u32,
    pub t0: Instant,
    pub stop: AtomicBool,
    pub hooks: RrHooks,
    /// Responses sent so far, across workers, counted only while the corrupt hook is
    /// set (it numbers them).
    pub responses: AtomicU64,
    /// Where serving threads are pinned and registered for placement sampling.
    pub pin: Arc<Pinning>,
}

/// Per-worker tallies, summed at the end.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub requests: u64,
    pub responses: u64,
    pub bytes_sent: u64,
    pub rejected: u64,
    /// The serving threads' CPU (None if getrusage failed).
    pub cpu: Option<ThreadsCpu>,
}

impl Serving {
    /// Test hook: stalls the calling worker once, `stall_after_ms` into the test.
    pub fn maybe_stall(&self, stalled: &mut bool) {
        if *stalled || self.hooks.stall_ms == 0 {
            return;
        }
        if self.t0.elapsed() >= Duration::from_millis(self.hooks.stall_after_ms) {
            *stalled = true;
            thread::sleep(Duration::from_millis(self.hooks.stall_ms));
        }
    }

    /// Test hook: true when this response (1-based, across workers) must be corrupted.
    /// Without the hook the shared count is not touched: a locked add on one cache line
    /// from every worker's CPU on every block would cost what the hook never uses.
    #[inline]
    pub fn next_response_corrupt(&self) -> bool {
        if self.hooks.corrupt_response == 0 {
            return false;
        }
        let n = self.responses.fetch_add(1, Ordering::Relaxed) + 1;
        n == self.hooks.corrupt_response
    }
}

impl Serving {
    /// A responder without test hooks, started now.
    pub fn new(token: u64, block: u32, request: u32, hooks: RrHooks) -> Serving {
        Serving {
            token,
            block,
            request,
            t0: Instant::now(),
            stop: AtomicBool::new(false),
            hooks,
            responses: AtomicU64::new(0),
            pin: Pinning::new(None),
        }
    }
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.requests += o.requests;
        self.responses += o.responses;
        self.bytes_sent += o.bytes_sent;
        self.rejected += o.rejected;
        if let Some(c) = &o.cpu {
            self.cpu.get_or_insert_with(ThreadsCpu::default).add(c);
        }
    }
}

/// Runs one serving thread per item of `work`, each measuring its own CPU over its
/// life, and sums their tallies. `own_cpu` names the CPU the tool's own policy pins
/// an item's thread to (steering): it is pinned before it is registered for
/// sampling, so no sample predates its pin.
pub(super) fn fan_out<W: Send>(
    pin: &Pinning,
    work: Vec<W>,
    own_cpu: impl Fn(&W) -> Option<u32> + Sync,
    serve: impl Fn(W) -> Tally + Sync,
) -> Tally {
    let (serve, own_cpu) = (&serve, &own_cpu);
    thread::scope(|s| {
        let handles: Vec<_> = work
            .into_iter()
            .map(|w| {
                s.spawn(move || {
                    if let Some(c) = own_cpu(&w) {
                        pin.pin_own(c);
                    }
                    pin.enter(mtuperf_proto::placement::ThreadRole::Responder);
                    let born = Instant::now();
                    let mut t = serve(w);
                    t.cpu = crate::cpu_res::own_thread(born);
                    t
                })
            })
            .collect();
        let mut total = Tally::default();
        for h in handles {
            if let Ok(t) = h.join() {
                total.add(&t);
            }
        }
        total
    })
}

/// The block every response carries (incompressible, the same for all), with its
/// checksum.
pub(super) struct Block {
    payload: Vec<u8>,
    pub sum: u32,
}

impl Block {
    pub fn new(size: u32) -> Block {
        let payload = incompressible(size as usize, 0x6d74_7570_6572_7272);
        let sum = checksum(&payload);
        Block { payload, sum }
    }

    /// The block alone.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// A worker's response buffer: room for the header, then the block.
    pub fn response_buffer(&self) -> Vec<u8> {
        let mut tx = vec![0u8; HEADER_LEN + self.payload.len()];
        if let Some(body) = tx.get_mut(HEADER_LEN..) {
            body.copy_from_slice(&self.payload);
        }
        tx
    }
}

/// The same address, an IPv4-mapped IPv6 address counting as its IPv4 one.
pub(super) fn same_ip(a: IpAddr, b: IpAddr) -> bool {
    let canon = |ip: IpAddr| match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 @ IpAddr::V4(_) => v4,
    };
    canon(a) == canon(b)
}
