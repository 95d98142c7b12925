//! Which nodes still answer. A pair test is a quiet wait on the asked agent until its
//! result comes back, so a node that goes silent (its agent stopped, its host frozen)
//! looks like a slow test. While pair tests run, a watcher asks the nodes of every
//! pair running longer than [`LIVENESS_AFTER`] for a handshake (a new session, opened
//! and closed: any answer, a busy refusal included, is a sign of life). A node that
//! twice in a row gives none within [`PROBE_WAIT`] is silent: the pairs waiting on it
//! stop waiting, its other pairs are not started, and the rest of the mesh goes on.
//! A node whose agent answers but let a pair's deadline pass without a result is
//! silent as an asked node only: tests toward it still run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::cells::SilentNode;
use super::finding::Silence;
use super::model::MeshNode;
use crate::client::{ConnectOptions, Session};
use crate::EngineError;

/// A pair running longer than this has its two nodes asked whether they answer.
pub const LIVENESS_AFTER: Duration = Duration::from_secs(3);
/// How long a handshake of a liveness check may take.
pub const PROBE_WAIT: Duration = Duration::from_secs(2);
/// A node that answered is not asked again for this long.
pub const PROBE_EVERY: Duration = Duration::from_secs(5);
/// How often the watcher looks at the running pairs.
const TICK: Duration = Duration::from_millis(250);
const NAP: Duration = Duration::from_millis(10);

#[derive(Debug, Default, Clone)]
struct NodeState {
    silent: Option<SilentNode>,
    probed: Option<Instant>,
    probing: bool,
}

/// The nodes' health over one run, and the pair tests under way.
pub struct Health {
    t0: Instant,
    agents: Vec<String>,
    connect: ConnectOptions,
    nodes: Mutex<Vec<NodeState>>,
    /// Pair tests under way: (id, asked node, peer node, since).
    running: Mutex<Vec<(u64, usize, usize, Instant)>>,
    next_id: Mutex<u64>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// Whether `agent` completes (or answers) a handshake within [`PROBE_WAIT`].
fn answers(agent: &str, connect: &ConnectOptions) -> bool {
    let opts = ConnectOptions {
        connect_timeout: PROBE_WAIT,
        reply_timeout: PROBE_WAIT,
        ..connect.clone()
    };
    match Session::connect(agent, &opts) {
        Ok(s) => {
            s.close();
            true
        }
        // It answered, with a refusal or its proof.
        Err(EngineError::Refused(_) | EngineError::Auth(_)) => true,
        Err(_) => false,
    }
}

impl Health {
    pub fn new(t0: Instant, nodes: &[MeshNode], connect: &ConnectOptions) -> Health {
        Health {
            t0,
            agents: nodes.iter().map(|n| n.agent.clone()).collect(),
            connect: connect.clone(),
            nodes: Mutex::new(vec![NodeState::default(); nodes.len()]),
            running: Mutex::new(Vec::new()),
            next_id: Mutex::new(0),
        }
    }

    /// Whether node `n` is silent, as the asked node of a test (`asked`) or as its peer.
    pub fn silent(&self, n: usize, asked: bool) -> bool {
        lock(&self.nodes)
            .get(n)
            .and_then(|s| s.silent)
            .is_some_and(|s| asked || s.silence == Silence::NoAnswer)
    }

    /// Marks node `n` silent (the first mark stands), after `waited` on it.
    pub fn mark(&self, n: usize, silence: Silence, waited: Duration) {
        let at_ms = self.t0.elapsed().as_millis() as u64;
        if let Some(s) = lock(&self.nodes).get_mut(n) {
            s.silent.get_or_insert(SilentNode {
                node: n,
                silence,
                at_ms,
                waited_ms: waited.as_millis() as u64,
            });
        }
    }

    /// The nodes that went silent, in node order.
    pub fn silenced(&self) -> Vec<SilentNode> {
        lock(&self.nodes).iter().filter_map(|s| s.silent).collect()
    }

    /// Whether node `n` is due a liveness check (not silent, not being checked, not
    /// checked lately); claims the check when it is.
    fn claim(&self, n: usize) -> bool {
        let mut nodes = lock(&self.nodes);
        let Some(s) = nodes.get_mut(n) else {
            return false;
        };
        let lately = s.probed.is_some_and(|t| t.elapsed() < PROBE_EVERY);
        if s.silent.is_some() || s.probing || lately {
            return false;
        }
        s.probing = true;
        true
    }

    /// Whether node `n` answers: asks it now unless it was asked lately (then the
    /// last answer stands); a node that does not answer twice in a row is marked
    /// silent.
    pub fn check(&self, n: usize) -> bool {
        if !self.claim(n) {
            return !self.silent(n, false);
        }
        let agent = self.agents.get(n).map_or("", String::as_str);
        let t = Instant::now();
        let alive = answers(agent, &self.connect) || answers(agent, &self.connect);
        if let Some(s) = lock(&self.nodes).get_mut(n) {
            s.probing = false;
            s.probed = Some(Instant::now());
        }
        if !alive {
            self.mark(n, Silence::NoAnswer, t.elapsed());
        }
        alive
    }

    /// A pair test asked of `from` toward `to` starts; returns its id for [`end`].
    pub fn begin(&self, from: usize, to: usize) -> u64 {
        let id = {
            let mut next = lock(&self.next_id);
            *next += 1;
            *next
        };
        lock(&self.running).push((id, from, to, Instant::now()));
        id
    }

    pub fn end(&self, id: u64) {
        lock(&self.running).retain(|r| r.0 != id);
    }

    /// Until `done`: checks the nodes of the pairs running longer than
    /// [`LIVENESS_AFTER`], each node on its own thread.
    pub fn watch(&self, done: &AtomicBool) {
        std::thread::scope(|s| {
            while !done.load(Ordering::Relaxed) {
                let mut due: Vec<usize> = lock(&self.running)
                    .iter()
                    .filter(|r| r.3.elapsed() >= LIVENESS_AFTER)
                    .flat_map(|r| [r.1, r.2])
                    .collect();
                due.sort_unstable();
                due.dedup();
                for n in due.into_iter().filter(|&n| self.claim_free(n)) {
                    s.spawn(move || self.check(n));
                }
                // Short naps: the phase's end is not held up by the watcher.
                let tick = Instant::now();
                while tick.elapsed() < TICK && !done.load(Ordering::Relaxed) {
                    std::thread::sleep(NAP);
                }
            }
        });
    }

    /// Whether a check of `n` would ask it now (without claiming it).
    fn claim_free(&self, n: usize) -> bool {
        lock(&self.nodes).get(n).is_some_and(|s| {
            s.silent.is_none() && !s.probing && s.probed.is_none_or(|t| t.elapsed() >= PROBE_EVERY)
        })
    }
}
