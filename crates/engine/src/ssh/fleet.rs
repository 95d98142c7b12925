//! Every node at once: greet all (in parallel), choose their addresses from what they
//! said, start all (in parallel), keep them alive with `ping` lines while the run
//! goes on, and stop them all at the end (also when dropped: an error or a panic
//! unwinding through the caller still stops them).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mtuperf_proto::auth::Key;
use mtuperf_proto::msg::mesh::IfaceAddr;

use super::bootstrap::{self, CopyPolicy, Greeted, Image, NodeJob};
use super::command::SshCommand;
use super::failure::{Cause, Failure, Step};
use super::node::SshNode;
use super::plan::{self, Plan};
use super::session::Channel;
use super::wire::{Start, PING, PING_EVERY, STOP};

/// How long the agents take to stop, all together, before their ssh is ended.
const STOP_WAIT: Duration = Duration::from_secs(5);
/// The start order's answer (binding is quick; the node is already greeted).
const START_WAIT: Duration = Duration::from_secs(10);

/// What the bootstrap of every node needs.
#[derive(Debug, Clone)]
pub struct SshConfig {
    pub command: SshCommand,
    pub copy: CopyPolicy,
    /// Each node's deadline from ssh's start to its hello (connect, copy, start).
    pub timeout: Duration,
    /// The agents' hard lifetime (`serve --lifetime`): the run's deadline plus a margin.
    pub lifetime: Duration,
    /// The binary copied to nodes (the CLI's own, `/proc/self/exe`).
    pub exe: PathBuf,
    /// Its `--version` line, compared with the node's own mtuperf.
    pub version: String,
    pub plan: Plan,
    /// The agents' session limit (`serve --max-sessions`).
    pub max_sessions: u32,
}

/// A node whose agent listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadyNode {
    pub label: String,
    /// The SSH destination as given.
    pub ssh: String,
    /// Where this host reaches the agent.
    pub control: SocketAddr,
    pub binds: Vec<IpAddr>,
    /// This binary was copied (else the node's own mtuperf of the same version runs).
    pub copied: bool,
    /// The node's private directory.
    pub dir: String,
    pub hostname: String,
}

/// A node that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedNode {
    pub label: String,
    pub ssh: String,
    pub failure: Failure,
}

/// One node's bootstrap, in the nodes' order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Ready(ReadyNode),
    Failed(FailedNode),
}

/// How a node's agent ended at the end of the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stopped {
    pub label: String,
    /// The node's trap said its private directory is removed.
    pub cleaned: bool,
    /// Its ssh had to be ended (the agent did not stop in time; it ends by itself).
    pub forced: bool,
}

/// Progress of the bootstrap and of the stop (the CLI prints lines).
pub trait SshObserver: Sync {
    fn outcome(&self, _o: &Outcome) {}
    fn stopped(&self, _all: &[Stopped]) {}
}

/// An observer that ignores everything.
pub struct QuietSsh;
impl SshObserver for QuietSsh {}

/// The started agents; stops them when stopped or dropped.
pub struct Fleet {
    /// The one-time key every agent was given.
    pub key: Key,
    pub outcomes: Vec<Outcome>,
    channels: Vec<(String, Channel)>,
    pinger: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

fn one_time_key() -> Key {
    Key(crate::random_bytes::<32>())
}

/// Greets every node, plans, starts every agent. Never fails as a whole: each node's
/// failure is its outcome (a Ctrl-C makes the remaining nodes' outcome `interrupted`).
pub fn start(
    nodes: &[SshNode],
    cfg: &SshConfig,
    obs: &dyn SshObserver,
    stop: &Arc<AtomicBool>,
) -> Fleet {
    let image = Image::new(cfg.exe.clone());
    let job = |node| NodeJob {
        node,
        command: &cfg.command,
        copy: cfg.copy,
        version: &cfg.version,
        image: &image,
        lifetime: cfg.lifetime,
        timeout: cfg.timeout,
    };
    let greeted = each(
        nodes.iter().collect(),
        |node| bootstrap::greet(&job(node), stop),
        || Err(Failure::new(Step::Connect, Cause::Panicked)),
    );
    let own = mtuperf_sys::netdev::addresses().unwrap_or_default();
    let hellos: Vec<Option<(&str, &super::wire::Hello)>> = nodes
        .iter()
        .zip(&greeted)
        .map(|(n, g)| g.as_ref().ok().map(|g| (n.label(), &g.hello)))
        .collect();
    let binds = plan::binds(&cfg.plan, &hellos, &own);
    let listening: Vec<Vec<IpAddr>> = binds.iter().filter_map(|b| b.clone().ok()).collect();
    let allow = plan::allow(&own, &listening);
    let key = one_time_key();
    let order = |b: &[IpAddr]| Start {
        key: key.to_file(),
        binds: b.to_vec(),
        allow: allow.clone(),
        max_sessions: cfg.max_sessions,
    };
    let started = each(
        nodes.iter().zip(greeted).zip(&binds).collect(),
        |((node, g), b)| start_node(node, g, b, b.as_ref().ok().map(|b| order(b)), &own, stop),
        || (Err(Failure::new(Step::Start, Cause::Panicked)), None),
    );
    Fleet::assemble(key, nodes, started, obs)
}

/// `f` of every item, each on a thread of its own, in the items' order (`lost`: the
/// result of a thread that panicked).
fn each<I: Send, R: Send>(
    items: Vec<I>,
    f: impl Fn(I) -> R + Sync,
    lost: impl Fn() -> R,
) -> Vec<R> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = items.into_iter().map(|i| s.spawn(move || f(i))).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| lost()))
            .collect()
    })
}

fn start_node(
    node: &SshNode,
    g: Result<Greeted, Failure>,
    binds: &Result<Vec<IpAddr>, Cause>,
    order: Option<Start>,
    own: &[IfaceAddr],
    stop: &AtomicBool,
) -> (Result<ReadyNode, Failure>, Option<Channel>) {
    let mut g = match g {
        Ok(g) => g,
        Err(f) => return (Err(f), None),
    };
    let (Ok(binds), Some(order)) = (binds, order) else {
        let why = binds.as_ref().err().cloned().unwrap_or(Cause::NotGreeted);
        return (Err(Failure::new(Step::Plan, why)), Some(g.channel));
    };
    if stop.load(Ordering::Relaxed) {
        return (Err(Failure::stopped()), Some(g.channel));
    }
    match bootstrap::start(&mut g.channel, &order, START_WAIT, stop) {
        Ok(port) => {
            let ip =
                plan::control(binds, own).unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
            let ready = ReadyNode {
                label: node.label().to_string(),
                ssh: node.to_string(),
                control: SocketAddr::new(ip, port),
                binds: binds.clone(),
                copied: g.copied,
                dir: g.greeting.dir.clone(),
                hostname: g.hello.discovery.facts.hostname.clone(),
            };
            (Ok(ready), Some(g.channel))
        }
        Err(f) => (Err(f), Some(g.channel)),
    }
}

/// Writes `ping` to every channel every [`PING_EVERY`] until told to stop.
fn pinger(channels: &[(String, Channel)]) -> (Arc<AtomicBool>, JoinHandle<()>) {
    let done = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = channels.iter().map(|(_, c)| c.stdin_handle()).collect();
    let d = done.clone();
    let t = std::thread::spawn(move || {
        let mut next = Instant::now() + PING_EVERY;
        while !d.load(Ordering::Relaxed) {
            if Instant::now() >= next {
                for h in &handles {
                    if let Ok(mut g) = h.lock() {
                        if let Some(s) = g.as_mut() {
                            let _ = std::io::Write::write_all(s, format!("{PING}\n").as_bytes());
                        }
                    }
                }
                next = Instant::now() + PING_EVERY;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    (done, t)
}

/// Says `stop` to every channel and closes it, waits for all together (at most
/// [`STOP_WAIT`]), ends the ssh of those still running, and reads whether each
/// node's trap removed its directory.
fn stop_all(channels: &mut [(String, Channel)]) -> Vec<Stopped> {
    for (_, c) in channels.iter() {
        let _ = c.write(format!("{STOP}\n").as_bytes());
        c.close_stdin();
    }
    let until = Instant::now() + STOP_WAIT;
    channels
        .iter_mut()
        .map(|(label, c)| {
            let exited = c
                .wait(until.saturating_duration_since(Instant::now()))
                .is_some();
            if !exited {
                c.kill(Duration::from_secs(1));
            }
            c.drain(Duration::from_millis(500));
            Stopped {
                label: label.clone(),
                cleaned: c.cleaned,
                forced: !exited,
            }
        })
        .collect()
}

impl Fleet {
    /// The outcomes in the nodes' order; the ready nodes' channels kept (and pinged),
    /// the others' ended.
    fn assemble(
        key: Key,
        nodes: &[SshNode],
        started: Vec<(Result<ReadyNode, Failure>, Option<Channel>)>,
        obs: &dyn SshObserver,
    ) -> Fleet {
        let mut fleet = Fleet {
            key,
            outcomes: Vec::new(),
            channels: Vec::new(),
            pinger: None,
        };
        let mut leftovers = Vec::new();
        for (node, (r, ch)) in nodes.iter().zip(started) {
            let label = node.label().to_string();
            let outcome = match r {
                Ok(ready) => {
                    fleet.channels.extend(ch.map(|c| (label, c)));
                    Outcome::Ready(ready)
                }
                Err(failure) => {
                    leftovers.extend(ch.map(|c| (label.clone(), c)));
                    Outcome::Failed(FailedNode {
                        label,
                        ssh: node.to_string(),
                        failure,
                    })
                }
            };
            obs.outcome(&outcome);
            fleet.outcomes.push(outcome);
        }
        // Greeted nodes that will not run: end their channel (the agent sees end of input).
        stop_all(&mut leftovers);
        fleet.pinger = Some(pinger(&fleet.channels));
        fleet
    }

    /// The ready nodes.
    pub fn ready(&self) -> impl Iterator<Item = &ReadyNode> {
        self.outcomes.iter().filter_map(|o| match o {
            Outcome::Ready(r) => Some(r),
            Outcome::Failed(_) => None,
        })
    }

    /// The failed nodes.
    pub fn failed(&self) -> impl Iterator<Item = &FailedNode> {
        self.outcomes.iter().filter_map(|o| match o {
            Outcome::Failed(f) => Some(f),
            Outcome::Ready(_) => None,
        })
    }

    /// Stops every agent (see [`stop_all`]); a second call does nothing.
    pub fn stop(&mut self, obs: &dyn SshObserver) -> Vec<Stopped> {
        if let Some((done, t)) = self.pinger.take() {
            done.store(true, Ordering::Relaxed);
            let _ = t.join();
        }
        let mut channels = std::mem::take(&mut self.channels);
        let all = stop_all(&mut channels);
        if !all.is_empty() {
            obs.stopped(&all);
        }
        all
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.stop(&QuietSsh);
    }
}
