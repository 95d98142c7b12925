//! The watch schedule: a cycle over every peer, checked side by side (at most
//! `fan_out` at once) by the cycle's deadline, then a sleep until `every` (times the
//! rate's factor under CPU pressure) ± jitter after the cycle's start. Between cycles
//! the thread sleeps on the agent's stop with the next cycle as its timeout: it wakes
//! for nothing else.
//!
//! A check still running at the deadline is reported failed ("no result within the
//! cycle's deadline") and its rr probe cut; its thread ends on its own timeouts, and
//! its peer is not checked again until it has.

use std::collections::{BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use mtuperf_proto::auth::Key;
use mtuperf_proto::failed::Failed;

use super::pressure::{HostPressure, PressureSource, Rate};
use super::{check_peer, cycle_deadline, Check, Cycle, Event, WatchConfig, JITTER};
use crate::agent::gate::{Gate, WatchGuard};
use crate::agent::AgentConfig;
use crate::said::Said;
use crate::{unix_ms, Shutdown};

/// How often the cycle looks at its deadline and the shutdown flag.
const POLL: Duration = Duration::from_millis(200);
/// A check's own waits end this long before the cycle's deadline, so that a silent
/// peer's check has ended (with its own error) when the next cycle may start.
const GRACE: Duration = Duration::from_secs(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Runs cycles until `shutdown`; each check and each cycle go to `sink` as they end.
/// Without a key nothing runs (the CLI refuses --watch without --key-file before this).
/// The rate follows the host's CPU pressure.
pub fn run(
    cfg: &WatchConfig,
    agent: &AgentConfig,
    shutdown: &Shutdown,
    sink: &mut dyn FnMut(Event),
) {
    run_with(cfg, agent, shutdown, &mut HostPressure::default(), sink);
}

/// [`run`] with the CPU pressure read from `pressure`.
pub fn run_with(
    cfg: &WatchConfig,
    agent: &AgentConfig,
    shutdown: &Shutdown,
    pressure: &mut dyn PressureSource,
    sink: &mut dyn FnMut(Event),
) {
    let Some(key) = agent.key.clone() else {
        agent.note(
            crate::agent::LogLevel::Warn,
            None,
            "watch",
            crate::agent::Note::WatchWithoutKey,
        );
        return;
    };
    let w = Watcher {
        cfg: Arc::new(cfg.clone()),
        agent,
        key,
        busy: Arc::default(),
    };
    // The first cycle soon after start, spread over a second so a fleet started at
    // once does not check in step.
    let mut next = Instant::now() + Duration::from_secs_f64(unit_random());
    let mut rate = Rate::default();
    for number in 1u64.. {
        if shutdown.wait_until(next) {
            return;
        }
        let start = Instant::now();
        let was = rate;
        rate = rate.next(pressure.read(), cfg.max_slowdown);
        if rate.factor != was.factor {
            log_rate(agent, cfg.every, was, rate);
        }
        let interval = cfg.every * rate.factor;
        let mut cycle = w.cycle(number, shutdown.flag(), sink);
        cycle.rate = rate;
        cycle.interval = interval;
        sink(Event::Cycle(cycle));
        let spread = 1.0 + JITTER * (2.0 * unit_random() - 1.0);
        next = start + interval.mul_f64(spread);
    }
}

/// One log line when the rate changes (never more often: at most once a cycle).
fn log_rate(agent: &AgentConfig, every: Duration, was: Rate, now: Rate) {
    let every_now = humane(every * now.factor);
    let why = match now.pressure {
        Some(p) => {
            let (high, low) = p.kind.thresholds();
            format!(
                "host CPU pressure {} {:.2} (stretched at {high:.2} or more, back below {low:.2})",
                p.kind.name(),
                p.value
            )
        }
        None => "host CPU pressure unreadable".to_string(),
    };
    let (level, message) = if now.factor > was.factor {
        (
            crate::agent::LogLevel::Warn,
            format!(
                "{why}: checking every {every_now} instead of every {} (rate 1/{}) until it falls",
                humane(every),
                now.factor
            ),
        )
    } else if now.reduced() {
        (
            crate::agent::LogLevel::Info,
            format!("{why}: checking every {every_now} (rate 1/{})", now.factor),
        )
    } else {
        (
            crate::agent::LogLevel::Info,
            format!("{why}: checking every {every_now} again, as asked"),
        )
    };
    agent.log(level, None, "watch_rate", message);
}

/// "5m", "1h 20m", "40s".
fn humane(d: Duration) -> String {
    let s = d.as_secs();
    let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60);
    let parts: Vec<String> = [(h, "h"), (m, "m"), (sec, "s")]
        .iter()
        .filter(|(v, _)| *v > 0)
        .map(|(v, u)| format!("{v}{u}"))
        .collect();
    if parts.is_empty() {
        format!("{} ms", d.as_millis())
    } else {
        parts.join(" ")
    }
}

/// What every cycle shares.
struct Watcher<'a> {
    cfg: Arc<WatchConfig>,
    agent: &'a AgentConfig,
    key: Key,
    /// Peers whose check thread still runs (perhaps from an earlier cycle).
    busy: Arc<Mutex<BTreeSet<String>>>,
}

/// One check's thread: the gate, the check, its result to the cycle.
struct Job {
    peer: String,
    cfg: Arc<WatchConfig>,
    key: Key,
    gate: Arc<Gate>,
    until: Instant,
    cancel: Arc<AtomicBool>,
    busy: Arc<Mutex<BTreeSet<String>>>,
    tx: Sender<(u64, Check)>,
    number: u64,
}

impl Job {
    fn run(self) {
        let c = match wait_idle(&self.gate, self.until, &self.cancel) {
            Some(_guard) => check_peer(&self.peer, &self.cfg, &self.key, self.until, &self.cancel),
            None => failed(
                &self.peer,
                "skipped this cycle: the agent served tests until the cycle's deadline".into(),
            ),
        };
        lock(&self.busy).remove(&self.peer);
        let _ = self.tx.send((self.number, c));
    }
}

/// A check that could not run, and why.
fn failed(peer: &str, why: String) -> Check {
    let now = unix_ms();
    Check {
        peer: peer.to_string(),
        address: peer.to_string(),
        network: "unknown".into(),
        started_unix_ms: now,
        ended_unix_ms: now,
        path: Err(Failed::error(why)),
        rr: None,
    }
}

impl Watcher<'_> {
    /// Logs a check and hands it on.
    fn report(&self, c: Check, sink: &mut dyn FnMut(Event)) {
        let level = if c.path.as_ref().is_ok_and(|p| p.ok) {
            crate::agent::LogLevel::Info
        } else {
            crate::agent::LogLevel::Warn
        };
        self.agent.log(level, None, "watch", said(&c));
        sink(Event::Check(Box::new(c)));
    }

    /// Starts the check of `peer` on its own thread, unless its last one still runs.
    fn start(
        &self,
        peer: String,
        until: Instant,
        cancel: &Arc<AtomicBool>,
        tx: &Sender<(u64, Check)>,
        number: u64,
    ) -> bool {
        if !lock(&self.busy).insert(peer.clone()) {
            return false;
        }
        let job = Job {
            peer,
            cfg: self.cfg.clone(),
            key: self.key.clone(),
            gate: self.agent.gate.clone(),
            until,
            cancel: cancel.clone(),
            busy: self.busy.clone(),
            tx: tx.clone(),
            number,
        };
        let peer = job.peer.clone();
        let spawned = std::thread::Builder::new()
            .name("mtuperf-check".into())
            .spawn(move || job.run());
        if spawned.is_err() {
            lock(&self.busy).remove(&peer);
            return false;
        }
        true
    }

    /// One cycle, number `number`: every peer checked by the deadline.
    fn cycle(&self, number: u64, shutdown: &AtomicBool, sink: &mut dyn FnMut(Event)) -> Cycle {
        let start = Instant::now();
        let started_unix_ms = unix_ms();
        let deadline = cycle_deadline(&self.cfg);
        let until = start + deadline;
        let checks_until = start + deadline.saturating_sub(GRACE.min(deadline / 4));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let mut queue: VecDeque<String> = self.cfg.peers.iter().cloned().collect();
        let mut running: BTreeSet<String> = BTreeSet::new();
        let fan_out = self.cfg.fan_out.clamp(1, super::MAX_FAN_OUT);
        while !shutdown.load(Ordering::Relaxed) && Instant::now() < until {
            while running.len() < fan_out {
                let Some(peer) = queue.pop_front() else { break };
                if self.start(peer.clone(), checks_until, &cancel, &tx, number) {
                    running.insert(peer);
                } else {
                    let why = "not checked this cycle: its last check has not ended".into();
                    self.report(failed(&peer, why), sink);
                }
            }
            if running.is_empty() && queue.is_empty() {
                break;
            }
            self.collect(&rx, number, &mut running, until, sink);
        }
        cancel.store(true, Ordering::Relaxed);
        // At shutdown nothing more is said: the checks cut were not late.
        let stopping = shutdown.load(Ordering::Relaxed);
        let late: Vec<String> = if stopping {
            Vec::new()
        } else {
            running.into_iter().collect()
        };
        for peer in queue.iter().filter(|_| !stopping) {
            let why = "not checked this cycle: the cycle's deadline came first".into();
            self.report(failed(peer, why), sink);
        }
        for peer in &late {
            let why = format!(
                "no result within the cycle's deadline ({:.1} s)",
                deadline.as_secs_f64()
            );
            self.report(failed(peer, why), sink);
        }
        Cycle {
            started_unix_ms,
            duration: start.elapsed(),
            deadline,
            late,
            rate: Rate::default(),
            interval: self.cfg.every,
        }
    }

    /// Waits a moment for checks of this cycle to end, reporting each.
    fn collect(
        &self,
        rx: &Receiver<(u64, Check)>,
        number: u64,
        running: &mut BTreeSet<String>,
        until: Instant,
        sink: &mut dyn FnMut(Event),
    ) {
        let wait = until.saturating_duration_since(Instant::now()).min(POLL);
        // A late result of an earlier cycle was already reported as failed.
        if let Ok((n, c)) = rx.recv_timeout(wait) {
            if n == number && running.remove(&c.peer) {
                self.report(c, sink);
            }
        }
    }
}

/// The gate once no test is served, or None past `until` or once cancelled.
fn wait_idle<'a>(gate: &'a Gate, until: Instant, cancel: &AtomicBool) -> Option<WatchGuard<'a>> {
    loop {
        if let Some(g) = gate.try_watch() {
            return Some(g);
        }
        if Instant::now() >= until || cancel.load(Ordering::Relaxed) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A uniform number in [0, 1).
fn unit_random() -> f64 {
    let b: [u8; 8] = crate::random_bytes();
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

/// One log line per check: its figures, or why it failed (a refusal typed, which the
/// log function words).
pub fn said(c: &Check) -> Said {
    let mut s = match &c.path {
        Ok(p) => format!(
            "{} ({} via {}): {} (forward {} B, reverse {} B, expect {} B)",
            c.peer,
            c.address,
            c.network,
            if p.ok { "ok" } else { "NOT ok" },
            p.forward_mtu,
            p.reverse_mtu,
            p.expect
        ),
        Err(e) => {
            return Said::Failed {
                text: format!("{} ({}): check failed: ", c.peer, c.address),
                failed: e.clone(),
            }
        }
    };
    match &c.rr {
        Some(Ok(r)) => {
            match (r.p50_ns, r.p99_ns) {
                (Some(p50), Some(p99)) => {
                    let _ = write!(
                        s,
                        "; rr p50 {:.1} us, p99 {:.1} us",
                        p50 as f64 / 1e3,
                        p99 as f64 / 1e3
                    );
                }
                _ => s.push_str("; rr: no block answered"),
            }
            let _ = write!(s, ", loss {:.4}", r.loss_ratio());
        }
        Some(Err(e)) => {
            s.push_str("; rr probe failed: ");
            return Said::Failed {
                text: s,
                failed: e.clone(),
            };
        }
        None => {}
    }
    Said::Text(s)
}
