//! CPU placement of one end's test threads: pinning them (`--cpu`, `--agent-cpu`)
//! and recording where they, and the receive softirqs, actually ran.
//!
//! Each test thread calls [`Pinning::enter`] first: it is pinned to the asked CPUs
//! (all of them: a processor set, not one CPU per thread) and registers its thread
//! id. A [`Watch`] started before Go samples the CPU each registered thread last ran
//! on every [`SAMPLE_MS`] ms (/proc/self/task/TID/stat field 39: sampled, not
//! assumed from the pinning) and takes the per-CPU NET_RX softirq counts
//! (/proc/softirqs) and softirq time (/proc/stat, in ticks) at its start and end
//! only. The sampling thread itself wakes 1000/SAMPLE_MS times a second and reads
//! one small file per test thread; it is not pinned.

mod check;
mod policy;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mtuperf_proto::placement::{Placement, SoftirqTime, ThreadPlacement, ThreadRole};

pub use check::{check_agent_cpus, check_cpus};
pub use policy::PlacementPolicy;

/// How often a [`Watch`] samples where the test threads run, once it has settled:
/// ten times a second gives a 3 s run 30 samples per thread, enough to say where it
/// mostly ran. It was 10 ms throughout: 100 wake-ups a second on each end, which
/// added about 40% to a 128K stream client's context switches (1 400 against 970
/// in 3 s, `perf stat`), each one landing on a CPU the data threads and their
/// softirqs keep busy.
pub const SAMPLE_MS: u32 = 100;

/// The first samples come sooner ([`FIRST_SAMPLE_MS`], then doubling up to
/// [`SAMPLE_MS`]: 10, 20, 40, 80, 100, 100 ms...), so a thread of a short test is
/// seen too.
pub const FIRST_SAMPLE_MS: u32 = 10;

/// The CPUs one end's test threads are pinned to, and the threads that entered.
#[derive(Debug, Default)]
pub struct Pinning {
    cpus: Option<Vec<u32>>,
    threads: Mutex<Vec<(ThreadRole, i32)>>,
    /// Threads the tool pinned to one CPU by its own policy: `(tid, cpu)`.
    own: Mutex<Vec<(i32, u32)>>,
    /// The CPU each thread was on when it entered (after its pin): `(tid, cpu)`.
    entered_on: Mutex<Vec<(i32, u32)>>,
    errors: Mutex<Vec<String>>,
}

impl Pinning {
    /// Threads that enter are pinned to `cpus` (None: left where the kernel puts them).
    pub fn new(cpus: Option<Vec<u32>>) -> Arc<Pinning> {
        Arc::new(Pinning {
            cpus,
            ..Pinning::default()
        })
    }

    pub fn cpus(&self) -> Option<&[u32]> {
        self.cpus.as_deref()
    }

    /// Called by every test thread before its work: pins it (a failure is recorded,
    /// and the thread runs unpinned) and registers it for sampling. A thread the
    /// tool pins by its own policy calls [`Pinning::pin_own`] first, so that no
    /// sample is taken before its pin.
    pub fn enter(&self, role: ThreadRole) {
        if let Some(cpus) = &self.cpus {
            if let Err(e) = mtuperf_sys::affinity::pin_current_thread(cpus) {
                let mut errs = self.errors.lock().unwrap_or_else(PoisonError::into_inner);
                let why = std::error::Error::source(&e).map(ToString::to_string);
                errs.push(format!("{role}: {e}: {}", why.unwrap_or_default()));
            }
        }
        let tid = mtuperf_sys::affinity::current_tid();
        if let Ok(cpu) = mtuperf_sys::affinity::thread_last_cpu(tid) {
            self.entered_on
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((tid, cpu));
        }
        self.threads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((role, tid));
    }

    /// The CPU thread `tid` was on when it entered.
    fn entered_on(&self, tid: i32) -> Option<u32> {
        self.entered_on
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(t, _)| *t == tid)
            .map(|(_, c)| *c)
    }

    /// Pins the calling thread to `cpu` by the tool's own policy (used only when the
    /// end has no `--cpu`/`--agent-cpu`) and records it, so the placement says so
    /// rather than "unpinned". A failure leaves the thread where it was, unrecorded.
    pub fn pin_own(&self, cpu: u32) {
        if mtuperf_sys::affinity::pin_current_thread(&[cpu]).is_ok() {
            let tid = mtuperf_sys::affinity::current_tid();
            self.own
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((tid, cpu));
        }
    }

    fn own_cpu(&self, tid: i32) -> Option<u32> {
        self.own
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .rev()
            .find(|(t, _)| *t == tid)
            .map(|(_, c)| *c)
    }

    fn registered(&self) -> Vec<(ThreadRole, i32)> {
        self.threads
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// Per thread id: `[cpu, samples]`.
type Seen = Vec<(i32, Vec<[u32; 2]>)>;

/// Samples where a [`Pinning`]'s threads run, from `start` to `finish`.
pub struct Watch {
    pin: Arc<Pinning>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Seen>>,
    rx_before: Option<Vec<u64>>,
    softirq_before: Option<Vec<u64>>,
    iface: Option<String>,
}

impl Watch {
    /// Starts sampling; `iface` is the test interface (for its queue IRQs).
    pub fn start(pin: &Arc<Pinning>, iface: Option<&str>) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let handle = {
            let (pin, stop) = (pin.clone(), stop.clone());
            thread::Builder::new()
                .name("placement".into())
                .spawn(move || sample_loop(&pin, &stop))
                .ok()
        };
        Watch {
            pin: pin.clone(),
            stop,
            handle,
            rx_before: mtuperf_sys::affinity::net_rx_softirqs().ok(),
            softirq_before: mtuperf_sys::cpu::softirq_ticks().ok(),
            iface: iface.map(str::to_string),
        }
    }

    /// Stops sampling and returns what was seen.
    pub fn finish(mut self) -> Placement {
        let rx_after = mtuperf_sys::affinity::net_rx_softirqs().ok();
        let softirq_after = mtuperf_sys::cpu::softirq_ticks().ok();
        self.stop.store(true, Ordering::Relaxed);
        let seen = self
            .handle
            .take()
            .and_then(|h| {
                // Not a wait for its next period: it stops now.
                h.thread().unpark();
                h.join().ok()
            })
            .unwrap_or_default();
        let registered = self.pin.registered();
        let threads = registered
            .iter()
            .map(|(role, tid)| ThreadPlacement {
                role: *role,
                // A thread the sampler never saw (a short test on a busy host: the
                // sampler's first turn came after the thread ended) counts the CPU
                // it entered on, once, rather than nothing.
                cpus: seen
                    .iter()
                    .find(|(t, _)| t == tid)
                    .map(|(_, c)| c.clone())
                    .or_else(|| self.pin.entered_on(*tid).map(|c| vec![[c, 1]]))
                    .unwrap_or_default(),
                pinned: self.pin.own_cpu(*tid),
            })
            .collect();
        let mut errors = self
            .pin
            .errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let softirq = if let (Some(b), Some(a)) = (&self.softirq_before, &softirq_after) {
            Some(SoftirqTime {
                tick_ns: 1_000_000_000 / mtuperf_sys::cpu::clk_tck(),
                per_cpu: per_cpu_delta(b, a),
                plus_minus_ticks_per_cpu: 1,
            })
        } else {
            errors.push("/proc/stat's per-CPU softirq time could not be read".into());
            None
        };
        let net_rx = if let (Some(b), Some(a)) = (&self.rx_before, &rx_after) {
            per_cpu_delta(b, a)
        } else {
            errors.push("/proc/softirqs could not be read".into());
            Vec::new()
        };
        Placement {
            pinned: self.pin.cpus.clone(),
            online: mtuperf_sys::affinity::online_cpus(),
            threads,
            sample_ms: SAMPLE_MS,
            net_rx,
            irqs: self
                .iface
                .as_deref()
                .map(mtuperf_sys::affinity::iface_irqs)
                .unwrap_or_default(),
            errors,
            softirq,
        }
    }
}

/// `[cpu, after - before]` for each CPU that counted something.
fn per_cpu_delta(before: &[u64], after: &[u64]) -> Vec<[u64; 2]> {
    after
        .iter()
        .enumerate()
        .map(|(cpu, n)| {
            [
                cpu as u64,
                n.saturating_sub(before.get(cpu).copied().unwrap_or(0)),
            ]
        })
        .filter(|c| c[1] > 0)
        .collect()
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Every [`SAMPLE_MS`] (sooner at first) until `stop`: the CPU each registered thread
/// last ran on, counted.
/// Threads that have exited (their stat file gone) are skipped.
fn sample_loop(pin: &Pinning, stop: &AtomicBool) -> Seen {
    let mut seen: Seen = Vec::new();
    let mut period = Duration::from_millis(u64::from(FIRST_SAMPLE_MS));
    let settled = Duration::from_millis(u64::from(SAMPLE_MS));
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        for (_, tid) in pin.registered() {
            let Ok(cpu) = mtuperf_sys::affinity::thread_last_cpu(tid) else {
                continue;
            };
            let slot = if let Some(i) = seen.iter().position(|(t, _)| *t == tid) {
                i
            } else {
                seen.push((tid, Vec::new()));
                seen.len() - 1
            };
            if let Some((_, cpus)) = seen.get_mut(slot) {
                match cpus.iter_mut().find(|c| c[0] == cpu) {
                    Some(c) => c[1] += 1,
                    None => cpus.push([cpu, 1]),
                }
            }
        }
        next += period;
        period = (period * 2).min(settled);
        // Parked, not asleep: `finish` unparks it rather than waiting out a period.
        thread::park_timeout(next.saturating_duration_since(Instant::now()));
    }
    for (_, cpus) in &mut seen {
        cpus.sort_unstable();
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A thread that enters and ends between two of the sampler's turns is not lost:
    /// it counts the CPU it entered on, once.
    #[test]
    fn a_thread_the_sampler_never_caught_counts_the_cpu_it_entered_on() {
        let online = mtuperf_sys::affinity::online_cpus();
        let cpu = *online.last().unwrap_or(&0);
        let pin = Pinning::new(Some(vec![cpu]));
        let watch = Watch::start(&pin, None);
        // Past the sampler's first turn (at its start); its next is 10 ms later.
        thread::sleep(Duration::from_millis(2));
        let p2 = pin.clone();
        thread::spawn(move || p2.enter(ThreadRole::Responder))
            .join()
            .unwrap_or_default();
        let placed = watch.finish();
        assert_eq!(placed.threads.len(), 1, "{placed:?}");
        assert_eq!(placed.threads[0].cpus, vec![[cpu, 1]], "{placed:?}");
        assert_eq!(placed.thread_cpus(), vec![cpu]);
    }

    #[test]
    fn a_watch_sees_a_pinned_thread_on_its_cpu_only() {
        let online = mtuperf_sys::affinity::online_cpus();
        let cpu = *online.last().unwrap_or(&0);
        let pin = Pinning::new(Some(vec![cpu]));
        let watch = Watch::start(&pin, Some("lo"));
        let p2 = pin.clone();
        thread::spawn(move || {
            p2.enter(ThreadRole::Sender);
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(80) {
                std::hint::black_box(0);
            }
        })
        .join()
        .unwrap_or_default();
        let placed = watch.finish();
        assert_eq!(placed.pinned, Some(vec![cpu]));
        assert_eq!(placed.threads.len(), 1);
        assert!(placed.errors.is_empty(), "{:?}", placed.errors);
        let samples: u32 = placed.threads[0].cpus.iter().map(|c| c[1]).sum();
        assert!(samples >= 1, "{placed:?}");
        assert_eq!(placed.thread_cpus(), vec![cpu]);
        assert!(placed.irqs.is_empty(), "lo has no queue IRQs");
        let s = placed
            .softirq
            .expect("per-CPU softirq time read at start and end");
        assert_eq!((s.tick_ns, s.plus_minus_ticks_per_cpu), (10_000_000, 1));
    }
}
