//! When each pair runs. Path probes are light: all ordered pairs run in parallel,
//! each node in at most `per_node` tests at once (as sender or as peer), so one
//! node's agent limits are respected and a black hole costs only its own pair's
//! deadline. Load tests (rr, stream) run in rounds of disjoint pairs (a round-robin
//! tournament, the circle method) so no node is in two load tests at once.

use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Threads that run pair tests at once, at most: each waits on one agent.
pub(crate) const MAX_THREADS: usize = 64;

/// Ordered pairs of `n` members: (i, j) for every i != j.
pub fn ordered_pairs(n: usize) -> Vec<(usize, usize)> {
    (0..n)
        .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
        .collect()
}

/// A round-robin tournament over `n` members: every ordered pair exactly once, in
/// rounds where no member appears twice. The circle method gives n−1 rounds (n even;
/// an odd n gets a bye) of unordered pairs; each is played both ways, 2(n−1) rounds.
pub fn tournament(n: usize) -> Vec<Vec<(usize, usize)>> {
    if n < 2 {
        return Vec::new();
    }
    let m = n + n % 2; // with a bye when odd
    let mut ring: Vec<usize> = (0..m).collect();
    let mut rounds = Vec::new();
    for _ in 0..m - 1 {
        let round: Vec<(usize, usize)> = (0..m / 2)
            .filter_map(|k| {
                let (a, b) = (*ring.get(k)?, *ring.get(m - 1 - k)?);
                (a < n && b < n).then_some((a, b))
            })
            .collect();
        rounds.push(round);
        // Keep the first member fixed, rotate the others.
        if let Some(last) = ring.pop() {
            ring.insert(1, last);
        }
    }
    let back: Vec<Vec<(usize, usize)>> = rounds
        .iter()
        .map(|r| r.iter().map(|&(a, b)| (b, a)).collect())
        .collect();
    rounds.extend(back);
    rounds
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Which jobs have started, and how many running jobs touch each node: the one
/// state the threads of [`run_bounded`] share, behind one lock.
struct Slots<'a, J, N> {
    jobs: &'a [J],
    nodes: &'a N,
    per_node: usize,
    state: Mutex<SlotState>,
    cv: Condvar,
}

struct SlotState {
    started: Vec<bool>,
    busy: Vec<usize>,
}

impl<'a, J, N: Fn(&J) -> (usize, usize)> Slots<'a, J, N> {
    fn new(jobs: &'a [J], nodes: &'a N, per_node: usize) -> Self {
        let max_node = jobs
            .iter()
            .map(|j| {
                let (a, b) = nodes(j);
                a.max(b)
            })
            .max()
            .map_or(0, |m| m + 1);
        Slots {
            jobs,
            nodes,
            per_node: per_node.max(1),
            state: Mutex::new(SlotState {
                started: vec![false; jobs.len()],
                busy: vec![0; max_node],
            }),
            cv: Condvar::new(),
        }
    }

    /// The first job not started whose two nodes are in fewer than `per_node` jobs,
    /// now marked started; waits for one while none is free. None: every job has
    /// started, or `stop`.
    fn take(&self, stop: &dyn Fn() -> bool) -> Option<usize> {
        let mut st = lock(&self.state);
        loop {
            if stop() || st.started.iter().all(|&b| b) {
                return None;
            }
            let free = |st: &SlotState, i: usize| {
                let (a, b) = (self.nodes)(&self.jobs[i]);
                !st.started[i] && st.busy[a] < self.per_node && st.busy[b] < self.per_node
            };
            if let Some(i) = (0..self.jobs.len()).find(|&i| free(&st, i)) {
                st.started[i] = true;
                let (a, b) = (self.nodes)(&self.jobs[i]);
                st.busy[a] += 1;
                st.busy[b] += 1;
                return Some(i);
            }
            // Bounded wait: re-checks `stop` even if nobody notifies.
            st = match self.cv.wait_timeout(st, Duration::from_millis(200)) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }

    /// Job `i` is over: its nodes have room again.
    fn release(&self, i: usize) {
        {
            let mut st = lock(&self.state);
            let (a, b) = (self.nodes)(&self.jobs[i]);
            st.busy[a] -= 1;
            st.busy[b] -= 1;
        }
        self.cv.notify_all();
    }
}

/// Runs `work` on every job on up to `threads` threads, never more than `per_node`
/// jobs at once touching the same node (`nodes(job)` names the two). `done` sees each
/// result as it arrives (progress); results come back in the jobs' order. `stop`
/// ends it early: jobs not started are skipped (None).
pub fn run_bounded<J, R>(
    jobs: &[J],
    nodes: impl Fn(&J) -> (usize, usize) + Sync,
    per_node: usize,
    threads: usize,
    stop: &(dyn Fn() -> bool + Sync),
    work: impl Fn(&J) -> R + Sync,
    done: &(dyn Fn(usize, &R) + Sync),
) -> Vec<Option<R>>
where
    J: Sync,
    R: Send,
{
    let slots = Slots::new(jobs, &nodes, per_node);
    let results: Mutex<Vec<Option<R>>> = Mutex::new(jobs.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            s.spawn(|| {
                while let Some(i) = slots.take(stop) {
                    let r = work(&jobs[i]);
                    done(i, &r);
                    if let Some(slot) = lock(&results).get_mut(i) {
                        *slot = Some(r);
                    }
                    slots.release(i);
                }
            });
        }
    });
    match results.into_inner() {
        Ok(r) => r,
        Err(p) => p.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn a_tournament_plays_every_ordered_pair_once_in_disjoint_rounds() {
        for n in 2..=9 {
            let rounds = tournament(n);
            let mut seen = BTreeSet::new();
            for r in &rounds {
                let mut in_round = BTreeSet::new();
                for &(a, b) in r {
                    assert!(a != b && a < n && b < n);
                    assert!(in_round.insert(a) && in_round.insert(b), "n={n} {r:?}");
                    assert!(seen.insert((a, b)), "n={n}: {a}->{b} twice");
                }
            }
            assert_eq!(seen.len(), n * (n - 1), "n={n}");
            assert_eq!(rounds.len(), 2 * (n + n % 2 - 1), "n={n}");
        }
        assert!(tournament(1).is_empty());
    }

    #[test]
    fn ordered_pairs_are_all_pairs_both_ways() {
        assert_eq!(
            ordered_pairs(3),
            vec![(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
        );
    }

    #[test]
    fn no_node_is_in_more_than_per_node_jobs_at_once() {
        let jobs = ordered_pairs(6);
        let busy: Vec<AtomicUsize> = (0..6).map(|_| AtomicUsize::new(0)).collect();
        let worst = AtomicUsize::new(0);
        let count = Mutex::new(0usize);
        let done = |_: usize, _: &u32| {
            if let Ok(mut c) = count.lock() {
                *c += 1;
            }
        };
        let r = run_bounded(
            &jobs,
            |&(a, b)| (a, b),
            2,
            8,
            &|| false,
            |&(a, b)| {
                for n in [a, b] {
                    let now = busy[n].fetch_add(1, Ordering::SeqCst) + 1;
                    worst.fetch_max(now, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(5));
                for n in [a, b] {
                    busy[n].fetch_sub(1, Ordering::SeqCst);
                }
                (a * 10 + b) as u32
            },
            &done,
        );
        assert!(worst.load(Ordering::SeqCst) <= 2);
        assert_eq!(*count.lock().unwrap(), jobs.len());
        for (j, got) in jobs.iter().zip(&r) {
            assert_eq!(*got, Some((j.0 * 10 + j.1) as u32));
        }
    }

    #[test]
    fn a_stop_skips_jobs_not_started() {
        let jobs = ordered_pairs(4);
        let started = AtomicUsize::new(0);
        let done = |_: usize, (): &()| {};
        let r = run_bounded(
            &jobs,
            |&(a, b)| (a, b),
            1,
            1,
            &|| started.load(Ordering::SeqCst) >= 3,
            |_| {
                started.fetch_add(1, Ordering::SeqCst);
            },
            &done,
        );
        assert_eq!(r.iter().filter(|x| x.is_some()).count(), 3);
    }
}
