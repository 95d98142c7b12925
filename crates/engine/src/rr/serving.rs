//! What a responder's serving threads share and count: the agent's (always) and the
//! client's (the reverse direction of `--bidir`). Neither needs a session: a
//! responder gets a socket or connections, a token, its allowed peers, the sizes, a
//! worker count and this stop flag.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::rr::RrHooks;

/// What every serving thread shares.
pub struct Serving {
    pub token: u64,
    pub block: u32,
    pub request: u32,
    pub t0: Instant,
    pub stop: AtomicBool,
    pub hooks: RrHooks,
    /// Responses sent so far, across workers (numbers responses for the corrupt hook).
    pub responses: AtomicU64,
}

/// Per-worker tallies, summed at the end.
#[derive(Debug, Default, Clone, Copy)]
pub struct Tally {
    pub requests: u64,
    pub responses: u64,
    pub bytes_sent: u64,
    pub rejected: u64,
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
    pub fn next_response_corrupt(&self) -> bool {
        let n = self.responses.fetch_add(1, Ordering::Relaxed) + 1;
        self.hooks.corrupt_response != 0 && n == self.hooks.corrupt_response
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
        }
    }
}

impl Tally {
    pub fn add(&mut self, o: &Tally) {
        self.requests += o.requests;
        self.responses += o.responses;
        self.bytes_sent += o.bytes_sent;
        self.rejected += o.rejected;
    }
}
