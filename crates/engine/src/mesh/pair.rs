//! One pair's test through the asked agent (third-party), bounded once: from the
//! request to its result, busy retries included, it never outlasts its budget (the
//! pair's deadline) nor the run's deadline. Ctrl-C, or a node of the pair going
//! silent, ends the wait at once. Every outcome is typed: a result, an error (with
//! the time that really passed), or why it was not measured.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mtuperf_proto::msg::mesh::{ThirdPartyRequest, ThirdPartyResult, ThirdPartyTest};
use mtuperf_proto::msg::{ClientMsg, Refusal};

use super::finding::Silence;
use super::health::Health;
use super::model::{
    MeshConfig, MeshNetwork, MeshNode, MeshTests, NotMeasured, PairError, PairResult, TestFailure,
    TestSkipped,
};
use crate::client::{resolve, ConnectOptions, Session};
use crate::EngineError;

/// How often a wait looks at Ctrl-C, the nodes' health and the deadlines.
const POLL: Duration = Duration::from_millis(200);
/// Longest pause between busy retries.
const MAX_PAUSE: Duration = Duration::from_secs(1);
/// Longest the rest of a frame may take once it started to arrive.
const FRAME_WAIT: Duration = Duration::from_secs(2);

/// One ordered pair's test on one network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    pub net: usize,
    pub from: usize,
    pub to: usize,
    /// The session's TCP MSS clamp (a path measured short of the network's MTU).
    pub mss: Option<u32>,
}

/// How one pair's test ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    Done(Box<ThirdPartyResult>),
    Failed(PairError),
    NotMeasured(NotMeasured),
}

/// How one attempt (one session with the asked agent) ended.
enum Attempt {
    Result(Box<ThirdPartyResult>),
    Error(EngineError),
    Halted(NotMeasured),
    /// The pair's (or the run's) deadline passed; the time since the request.
    TimedOut(Duration),
}

/// What every pair test of a run shares.
pub struct Ctx<'a> {
    pub cfg: &'a MeshConfig,
    pub nodes: &'a [MeshNode],
    pub networks: &'a [MeshNetwork],
    pub stop: &'a AtomicBool,
    pub health: &'a Health,
    /// The run's deadline.
    pub deadline: Instant,
}

/// `opts` with its waits cut to what is left before `until`.
fn capped(opts: &ConnectOptions, until: Instant) -> ConnectOptions {
    let left = until
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100));
    ConnectOptions {
        connect_timeout: opts.connect_timeout.min(left),
        reply_timeout: opts.reply_timeout.min(left),
        ..opts.clone()
    }
}

/// An engine error of the asked node `node` as a pair error.
fn pair_error(e: EngineError, node: usize) -> PairError {
    match e {
        EngineError::Refused(refusal) => PairError::Refused { node, refusal },
        EngineError::PeerRefused { peer, refusal } => PairError::PeerRefused {
            node,
            peer,
            refusal,
        },
        EngineError::Agent(message) => PairError::Agent { node, message },
        e if e.is_unreachable() => PairError::Unreachable {
            node,
            detail: e.to_string(),
        },
        e => PairError::Protocol {
            node,
            detail: e.to_string(),
        },
    }
}

impl Ctx<'_> {
    fn agent(&self, n: usize) -> &str {
        self.nodes.get(n).map_or("", |x| x.agent.as_str())
    }

    fn request(&self, j: Job, test: ThirdPartyTest) -> Result<ThirdPartyRequest, PairError> {
        let bad = |detail: String| PairError::Protocol {
            node: j.from,
            detail,
        };
        let net = self
            .networks
            .get(j.net)
            .ok_or_else(|| bad("no such network".into()))?;
        let addr = |n: usize| {
            net.members
                .iter()
                .find(|m| m.node == n)
                .map(|m| m.addr)
                .ok_or_else(|| bad(format!("node {n} is not on net {}", net.name)))
        };
        let port = resolve(self.agent(j.to))
            .map_err(|e| bad(e.to_string()))?
            .port();
        Ok(ThirdPartyRequest {
            test,
            from: addr(j.from)?,
            to: SocketAddr::new(addr(j.to)?, port),
            mss: j.mss,
        })
    }

    /// Why `j` should not start, or stop waiting, now.
    fn halted(&self, j: Job) -> Option<NotMeasured> {
        if self.stop.load(Ordering::Relaxed) {
            Some(NotMeasured::Interrupted)
        } else if self.health.silent(j.from, true) {
            Some(NotMeasured::NodeSilent { node: j.from })
        } else if self.health.silent(j.to, false) {
            Some(NotMeasured::NodeSilent { node: j.to })
        } else if Instant::now() >= self.deadline {
            Some(NotMeasured::Deadline)
        } else {
            None
        }
    }

    /// One session with `j`'s asked agent: the request, then a wait for its answer
    /// that ends at `until`, at Ctrl-C or when a node of the pair goes silent.
    fn attempt(&self, j: Job, req: &ThirdPartyRequest, until: Instant) -> Attempt {
        let s = match self.connect(j, until) {
            Ok(s) => s,
            Err(a) => return a,
        };
        let sent = Instant::now();
        let r = match s.control.send(&ClientMsg::ThirdParty(req.clone())) {
            Err(e) => Attempt::Error(e),
            Ok(()) => loop {
                if let Some(why) = self.halted(j) {
                    break Attempt::Halted(why);
                }
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break Attempt::TimedOut(sent.elapsed());
                }
                if arrived(s.control.socket(), left.min(POLL)) {
                    let wait = left.max(FRAME_WAIT);
                    break match s
                        .control
                        .expect::<ThirdPartyResult>(Some(wait), "the third-party test's result")
                    {
                        Ok(r) => match r.check() {
                            Ok(()) => Attempt::Result(Box::new(r)),
                            Err(m) => Attempt::Error(EngineError::Protocol(format!(
                                "the third-party test's result: {m}"
                            ))),
                        },
                        Err(e) => Attempt::Error(e),
                    };
                }
            },
        };
        s.close();
        r
    }

    /// Opens a session with `j`'s asked agent. The handshake runs on its own thread
    /// so that Ctrl-C or the agent found silent ends the wait at once (a frozen
    /// agent's kernel still accepts the connection; the welcome never comes); an
    /// abandoned handshake ends by its own timeout and its session is closed.
    fn connect(&self, j: Job, until: Instant) -> Result<Session, Attempt> {
        let (tx, rx) = mpsc::channel();
        let agent = self.agent(j.from).to_string();
        let opts = capped(&self.cfg.connect, until);
        std::thread::spawn(move || {
            if let Err(mpsc::SendError(Ok(s))) = tx.send(Session::connect(&agent, &opts)) {
                s.close();
            }
        });
        loop {
            match rx.recv_timeout(POLL) {
                Ok(Ok(s)) => return Ok(s),
                Ok(Err(e)) => return Err(Attempt::Error(e)),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if let Some(why) = self.halted(j) {
                        return Err(Attempt::Halted(why));
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Attempt::Error(EngineError::Protocol(
                        "the handshake's thread ended without a word".into(),
                    )))
                }
            }
        }
    }

    /// Runs `test` of `j` within `budget` (and the run's deadline).
    pub fn ask(&self, j: Job, test: ThirdPartyTest, budget: Duration) -> (Outcome, Duration) {
        let t0 = Instant::now();
        if let Some(why) = self.halted(j) {
            return (Outcome::NotMeasured(why), Duration::ZERO);
        }
        let req = match self.request(j, test) {
            Ok(r) => r,
            Err(e) => return (Outcome::Failed(e), t0.elapsed()),
        };
        let pair_until = t0 + budget;
        let until = pair_until.min(self.deadline);
        let id = self.health.begin(j.from, j.to);
        let mut pause = Duration::from_millis(50);
        let attempt = loop {
            match self.attempt(j, &req, until) {
                // Busy (every session slot of A or of B taken, often by a session of
                // the last test still closing) is transient: tried again, with a
                // growing pause, within the same deadline.
                Attempt::Error(EngineError::Refused(Refusal::Busy { .. }))
                    if Instant::now() + pause < until && self.halted(j).is_none() =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(MAX_PAUSE);
                }
                a => break a,
            }
        };
        self.health.end(id);
        let outcome = match attempt {
            Attempt::Result(r) => Outcome::Done(r),
            Attempt::Halted(why) => Outcome::NotMeasured(why),
            Attempt::TimedOut(_) if until < pair_until => {
                Outcome::NotMeasured(NotMeasured::Deadline)
            }
            Attempt::TimedOut(waited) => {
                self.health.mark(j.from, Silence::NoResult, waited);
                Outcome::Failed(PairError::NoResult {
                    node: j.from,
                    waited_ms: waited.as_millis() as u64,
                })
            }
            Attempt::Error(e) => self.failed(j, e),
        };
        (outcome, t0.elapsed())
    }

    /// A failure, unless a node of the pair went silent (which explains it better).
    fn failed(&self, j: Job, e: EngineError) -> Outcome {
        if !matches!(e, EngineError::Refused(_)) {
            for n in [j.from, j.to] {
                if !self.health.check(n) {
                    return Outcome::NotMeasured(NotMeasured::NodeSilent { node: n });
                }
            }
        }
        if let Some(why) = self.halted(j) {
            return Outcome::NotMeasured(why);
        }
        Outcome::Failed(pair_error(e, j.from))
    }
}

/// Whether the agent's answer started to arrive (or the connection ended) within
/// `wait`. Peeking leaves the frame whole for the reader.
fn arrived(sock: &std::net::TcpStream, wait: Duration) -> bool {
    let mut b = [0u8; 1];
    let _ = sock.set_read_timeout(Some(wait.max(Duration::from_millis(1))));
    match sock.peek(&mut b) {
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock
                | std::io::ErrorKind::TimedOut
                | std::io::ErrorKind::Interrupted
        ),
        // Data, or the end of the stream: the reader says which.
        Ok(_) => true,
    }
}

/// Records `test`'s outcome in its pair.
pub fn record(p: &mut PairResult, test: MeshTests, outcome: Outcome, took: Duration) {
    let elapsed_ms = took.as_millis() as u64;
    let fail = |error| TestFailure {
        test,
        error,
        elapsed_ms,
    };
    let outcome = match outcome {
        Outcome::Done(r) => Ok(*r),
        Outcome::Failed(error) => Err(Ok(error)),
        Outcome::NotMeasured(why) => Err(Err(why)),
    };
    match outcome {
        Ok(ThirdPartyResult::Path(s)) => p.path = Some(s),
        Ok(ThirdPartyResult::Rr(s)) => {
            if !s.interrupted_by.is_empty() {
                let causes = s.interrupted_by.clone();
                p.failed.push(fail(PairError::Cut { causes }));
            }
            p.rr = Some(s);
        }
        Ok(ThirdPartyResult::Stream(s)) => {
            if !s.interrupted_by.is_empty() {
                let causes = s.interrupted_by.clone();
                p.failed.push(fail(PairError::Cut { causes }));
            }
            p.stream = Some(s);
        }
        // The mesh asks for no rr load.
        Ok(ThirdPartyResult::RrLoad(_)) => p.failed.push(fail(PairError::Protocol {
            node: p.from,
            detail: "an rr load result where none was asked".into(),
        })),
        Err(Ok(error)) => p.failed.push(fail(error)),
        Err(Err(why)) => p.not_measured.push(TestSkipped { test, why }),
    }
    p.elapsed_ms += elapsed_ms;
}
