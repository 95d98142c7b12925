//! The watch schedule: a cycle over every peer, then a sleep of `every` ± jitter.
//! Between cycles the thread sleeps (one wake-up a second to see the shutdown flag).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{check_peer, Check, WatchConfig, JITTER};
use crate::agent::AgentConfig;

/// How long a check waits for the tests the agent serves to end before it is skipped
/// for this cycle.
const BUSY_WAIT: Duration = Duration::from_mins(1);

/// Runs cycles until `shutdown`; each check goes to `sink` as it ends. Without a key
/// nothing runs (the CLI refuses --watch without --key-file before this).
pub fn run(
    cfg: &WatchConfig,
    agent: &AgentConfig,
    shutdown: &AtomicBool,
    sink: &mut dyn FnMut(Check),
) {
    let Some(key) = agent.key.clone() else {
        agent.log(
            "warn",
            None,
            "watch",
            "watch needs a key (--key-file): no check runs".into(),
        );
        return;
    };
    // The first cycle soon after start, spread over a second so a fleet started at
    // once does not check in step.
    let mut next = Instant::now() + Duration::from_secs_f64(unit_random());
    loop {
        if !sleep_until(next, shutdown) {
            return;
        }
        let cycle = Instant::now();
        for peer in &cfg.peers {
            if shutdown.load(Ordering::Relaxed) {
                return;
            }
            let Some(_guard) = wait_idle(agent, shutdown) else {
                agent.log(
                    "warn",
                    None,
                    "watch",
                    format!(
                        "check of {peer} skipped this cycle: the agent served tests for {} s",
                        BUSY_WAIT.as_secs()
                    ),
                );
                continue;
            };
            let c = check_peer(peer, cfg, &key);
            let level = if c.path.as_ref().is_ok_and(|p| p.ok) {
                "info"
            } else {
                "warn"
            };
            agent.log(level, None, "watch", summary(&c));
            sink(c);
        }
        let spread = 1.0 + JITTER * (2.0 * unit_random() - 1.0);
        next = cycle + cfg.every.mul_f64(spread);
    }
}

/// The gate once no test is served, or None past `BUSY_WAIT` or at shutdown.
fn wait_idle<'a>(
    agent: &'a AgentConfig,
    shutdown: &AtomicBool,
) -> Option<crate::agent::gate::WatchGuard<'a>> {
    let deadline = Instant::now() + BUSY_WAIT;
    loop {
        if let Some(g) = agent.gate.try_watch() {
            return Some(g);
        }
        if Instant::now() >= deadline || shutdown.load(Ordering::Relaxed) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Sleeps until `at`; false when shutdown came first.
fn sleep_until(at: Instant, shutdown: &AtomicBool) -> bool {
    loop {
        if shutdown.load(Ordering::Relaxed) {
            return false;
        }
        let left = at.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_secs(1)));
    }
}

/// A uniform number in [0, 1).
fn unit_random() -> f64 {
    let b: [u8; 8] = crate::random_bytes();
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

/// One log line per check.
pub fn summary(c: &Check) -> String {
    let mut s = match &c.path {
        Ok(p) => format!(
            "{} ({} via {}): {} (forward {} B, reverse {} B, expect {} B)",
            c.peer,
            c.address,
            c.network,
            if p.ok { "ok" } else { "NOT ok" },
            p.forward_mtu.map_or_else(|| "-".into(), |m| m.to_string()),
            p.reverse_mtu.map_or_else(|| "-".into(), |m| m.to_string()),
            p.expect
        ),
        Err(e) => format!("{} ({}): check failed: {e}", c.peer, c.address),
    };
    match &c.rr {
        Some(Ok(r)) => {
            let _ = write!(
                s,
                "; rr p50 {:.1} us, p99 {:.1} us, loss {:.4}",
                r.p50_ns as f64 / 1e3,
                r.p99_ns as f64 / 1e3,
                r.loss_ratio()
            );
        }
        Some(Err(e)) => {
            let _ = write!(s, "; rr probe failed: {e}");
        }
        None => {}
    }
    s
}
