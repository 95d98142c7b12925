//! One node's bootstrap, step by step, each bounded by the node's deadline and by the
//! run's stop flag: connect (the script's greeting), run the node's own mtuperf or copy
//! this one (checksum checked there), hello, then, once every node has said hello,
//! start (key, addresses) and ready.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mtuperf_proto::text::escape_control;
use sha2::{Digest, Sha256};

use super::command::SshCommand;
use super::failure::{Cause, Failure, Step};
use super::node::SshNode;
use super::script::{self, Greeting, GREETING};
use super::session::{Channel, WaitError, Watchdog};
use super::wire::{Hello, NodeMsg, Start};

/// When this binary is copied to a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CopyPolicy {
    /// Unless the node's PATH has an mtuperf of this very version.
    Auto,
    /// Always (the node's own mtuperf is never run).
    Always,
    /// Never: the node must have this version on its PATH.
    Never,
}

/// The binary copied to nodes: read and hashed once, when the first node needs it.
pub struct Image {
    pub path: PathBuf,
    digest: OnceLock<Result<(u64, String), String>>,
}

impl Image {
    pub fn new(path: PathBuf) -> Image {
        Image {
            path,
            digest: OnceLock::new(),
        }
    }

    /// Size and SHA-256 (hex); the error: why it could not be read.
    pub fn digest(&self) -> Result<(u64, String), String> {
        self.digest
            .get_or_init(|| hash(&self.path).map_err(|e| e.to_string()))
            .clone()
    }
}

fn hash(path: &Path) -> std::io::Result<(u64, String)> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(buf.get(..n).unwrap_or_default());
        size += n as u64;
    }
    Ok((size, hex::encode(h.finalize())))
}

/// What one node's bootstrap needs to know.
pub struct NodeJob<'a> {
    pub node: &'a SshNode,
    pub command: &'a SshCommand,
    pub copy: CopyPolicy,
    /// `mtuperf --version` of the image.
    pub version: &'a str,
    pub image: &'a Image,
    pub lifetime: Duration,
    pub timeout: Duration,
}

/// A node that said hello: its channel, what it is, whether this binary was copied.
pub(crate) struct Greeted {
    pub channel: Channel,
    pub greeting: Greeting,
    pub hello: Hello,
    pub copied: bool,
}

fn wait_err(step: Step, w: WaitError, ch: &mut Channel, timeout: Duration) -> Failure {
    Failure::from_wait(step, w, ch, timeout)
}

fn write_err(step: Step, e: &dyn std::error::Error) -> Failure {
    Failure::new(
        step,
        Cause::Write {
            error: e.to_string(),
        },
    )
}

/// Connect, greeting, use or copy, hello.
pub(crate) fn greet(job: &NodeJob, stop: &Arc<AtomicBool>) -> Result<Greeted, Failure> {
    let deadline = Instant::now() + job.timeout;
    let remote = script::remote_command(job.lifetime);
    let argv = job.command.argv(job.node, &remote, job.timeout);
    let mut ch = Channel::spawn(&argv).map_err(|e| {
        Failure::new(
            Step::Connect,
            Cause::NoSsh {
                program: job.command.program().to_string(),
                error: e.to_string(),
            },
        )
    })?;
    // Lines before the greeting (a chatty login script) are skipped.
    loop {
        match ch.line(deadline, stop) {
            Ok(l) if l == GREETING => break,
            Ok(_) => {}
            Err(w) => return Err(wait_err(Step::Connect, w, &mut ch, job.timeout)),
        }
    }
    let mut g = Greeting::default();
    loop {
        match ch.line(deadline, stop) {
            Ok(l) if g.feed(&l) => break,
            Ok(_) => {}
            Err(w) => return Err(wait_err(Step::Connect, w, &mut ch, job.timeout)),
        }
    }
    let have = g.have.is_some() && g.version.as_deref() == Some(job.version);
    let copied = match (job.copy, have) {
        (CopyPolicy::Never, false) => {
            ch.end(Duration::from_secs(5));
            return Err(Failure::new(
                Step::Copy,
                Cause::NotOnPath {
                    version: job.version.to_string(),
                    found: g.version.as_deref().map(|v| escape_control(v).into_owned()),
                },
            ));
        }
        (CopyPolicy::Auto, true) => false,
        _ => true,
    };
    if copied {
        copy(job, &mut ch, &g, deadline, stop)?;
    } else {
        ch.write(b"use\n")
            .map_err(|e| write_err(Step::Connect, &e))?;
    }
    let hello = loop {
        match ch.line(deadline, stop) {
            Ok(l) => match mtuperf_proto::text::from_peer_json::<NodeMsg>(l.as_bytes()) {
                Ok(NodeMsg::Hello(h)) => break *h,
                Ok(NodeMsg::Failed(why)) => {
                    return Err(Failure::new(Step::Start, Cause::said(&why)))
                }
                _ => {}
            },
            Err(w) => {
                let step = if copied { Step::Copy } else { Step::Start };
                return Err(wait_err(step, w, &mut ch, job.timeout));
            }
        }
    };
    Ok(Greeted {
        channel: ch,
        greeting: g,
        hello,
        copied,
    })
}

/// Sends `copy SIZE SHA256` and the image; the script checks the sum.
fn copy(
    job: &NodeJob,
    ch: &mut Channel,
    g: &Greeting,
    deadline: Instant,
    stop: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    if g.os != "Linux" || g.arch != script::this_arch() {
        ch.end(Duration::from_secs(5));
        return Err(Failure::new(
            Step::Copy,
            Cause::Platform {
                os: escape_control(&g.os).into_owned(),
                arch: escape_control(&g.arch).into_owned(),
                ours: script::this_arch().to_string(),
                version: job.version.to_string(),
            },
        ));
    }
    let (size, sum) = job.image.digest().map_err(|error| {
        Failure::new(
            Step::Copy,
            Cause::Unreadable {
                path: job.image.path.display().to_string(),
                error,
            },
        )
    })?;
    let dog = Watchdog::arm(ch.pid(), deadline, stop.clone());
    let sent = std::fs::File::open(&job.image.path).and_then(|mut f| {
        ch.write(format!("copy {size} {sum}\n").as_bytes())?;
        ch.copy_from(&mut f)
    });
    let fired = dog.fired();
    drop(dog);
    match sent {
        Ok(n) if n == size => Ok(()),
        Ok(sent) => Err(Failure::new(
            Step::Copy,
            Cause::Changed {
                path: job.image.path.display().to_string(),
                sent,
                size,
            },
        )),
        Err(_) if fired => Err(wait_err(
            Step::Copy,
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                WaitError::Stopped
            } else {
                WaitError::Deadline
            },
            ch,
            job.timeout,
        )),
        // The node stopped reading: its status and words say why.
        Err(_) => Err(wait_err(Step::Copy, WaitError::Ended, ch, job.timeout)),
    }
}

/// Sends the start order and waits for ready: the agent's port.
pub(crate) fn start(
    ch: &mut Channel,
    order: &Start,
    timeout: Duration,
    stop: &AtomicBool,
) -> Result<u16, Failure> {
    let deadline = Instant::now() + timeout;
    let line = serde_json::to_string(order).map_err(|e| write_err(Step::Start, &e))?;
    ch.write(format!("{line}\n").as_bytes())
        .map_err(|e| write_err(Step::Start, &e))?;
    loop {
        match ch.line(deadline, stop) {
            Ok(l) => match mtuperf_proto::text::from_peer_json::<NodeMsg>(l.as_bytes()) {
                Ok(NodeMsg::Ready(r)) => return Ok(r.port),
                Ok(NodeMsg::Failed(why)) => {
                    return Err(Failure::new(Step::Start, Cause::said(&why)))
                }
                _ => {}
            },
            Err(w) => return Err(wait_err(Step::Start, w, ch, timeout)),
        }
    }
}
