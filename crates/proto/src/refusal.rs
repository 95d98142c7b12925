//! Why an agent will not do what was asked ([`Refusal`]), with the sizes a refusal on
//! the wire may have. A leaf of the protocol: messages (`msg`), kept failures
//! (`failed`) and interrupt causes (`interrupt`) all carry refusals.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a busy agent has no room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Full {
    /// Every session slot (`serve --max-sessions`).
    Sessions,
    /// Its connection cap (from its RLIMIT_NOFILE).
    Connections,
    /// Its handshake slots, or this source address's share of them.
    Handshakes,
}

/// Why the agent will not do what was asked. Each says which limit or rule applies;
/// its words are report's (`mtuperf_report::refusal`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "reason", rename_all = "snake_case", deny_unknown_fields)]
pub enum Refusal {
    /// The agent is full: `full` says of what. The counts (of sessions) are given only
    /// to an authenticated client (or by an open agent): before authentication a keyed
    /// agent tells nothing.
    Busy {
        active: Option<u32>,
        max: Option<u32>,
        full: Full,
    },
    VersionMismatch {
        agent: u16,
        client: u16,
    },
    NotMtuperf,
    AuthRequired,
    AuthFailed,
    NotAllowed {
        peer: String,
    },
    /// A request beyond a limit: `limit` is the agent flag that sets it, or
    /// [`CONNECTIONS_LIMIT`] for the data connections the agent has room for now.
    Limit {
        limit: String,
        requested: u64,
        allowed: u64,
    },
    BadRequest {
        detail: String,
    },
    /// `--agent-cpu` asked for CPUs outside what the agent may pin to (`asked`, empty
    /// when the list was empty): its processor set (`serve --cpus`) or, without one,
    /// its host's online CPUs (`allowed`).
    AgentCpus {
        asked: Vec<u32>,
        allowed: Vec<u32>,
        limit: CpuLimit,
    },
    /// The request asked for fault-injection hooks, which the agent honours only when
    /// started to (its test-hooks flag).
    TestHooksOff,
    UnknownSession,
    Timeout {
        waiting_for: String,
    },
    /// A third-party (mesh) test asked of an agent that holds no key: only keyed
    /// agents test toward other agents.
    KeyRequired {
        what: String,
    },
    /// The peer of a third-party test did not complete the keyed handshake, so no
    /// test traffic was sent to it: `why` (protocol 19: typed, not words).
    PeerNotAuthenticated {
        peer: String,
        why: PeerAuth,
    },
}

/// Why the peer of a third-party test did not complete the keyed handshake with the
/// agent asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PeerAuth {
    /// The peer refused the agent (no key, another key, not on its allow list).
    Refused { refusal: Box<Refusal> },
    /// The peer holds no key: it does not authenticate.
    PeerOpen,
    /// The peer could not prove it holds the same key.
    PeerProof,
}

/// Longest text (a detail, an address, a name) in a refusal on the wire, in bytes.
pub const MAX_REFUSAL_TEXT: usize = 512;
/// Longest CPU list in a refusal on the wire (every CPU a host may have).
pub const MAX_REFUSAL_CPUS: usize = crate::placement::MAX_CPU as usize + 1;

impl Refusal {
    /// Checks a decoded refusal's sizes: each text at most [`MAX_REFUSAL_TEXT`] bytes,
    /// each CPU list at most [`MAX_REFUSAL_CPUS`] long, and a peer's refusal nested
    /// in [`Refusal::PeerNotAuthenticated`] nesting no further.
    pub fn check(&self) -> Result<(), String> {
        self.check_at(0)
    }

    fn check_at(&self, depth: usize) -> Result<(), String> {
        if let Some(t) = self
            .texts()
            .into_iter()
            .find(|t| t.len() > MAX_REFUSAL_TEXT)
        {
            return Err(format!(
                "a refusal's text of {} bytes, at most {MAX_REFUSAL_TEXT} allowed",
                t.len()
            ));
        }
        match self {
            Refusal::AgentCpus { asked, allowed, .. } => {
                let longest = asked.len().max(allowed.len());
                if longest > MAX_REFUSAL_CPUS {
                    return Err(format!(
                        "a refusal's CPU list of {longest}, at most {MAX_REFUSAL_CPUS} allowed"
                    ));
                }
            }
            Refusal::PeerNotAuthenticated {
                why: PeerAuth::Refused { refusal },
                ..
            } => {
                if depth > 0 {
                    return Err("a peer's refusal nested in a peer's refusal".into());
                }
                refusal.check_at(depth + 1)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The refusal cut to what [`Refusal::check`] lets through, for an agent that
    /// passes on a refusal it received: texts cut at [`MAX_REFUSAL_TEXT`] bytes (at
    /// a character boundary), CPU lists at [`MAX_REFUSAL_CPUS`], and a peer's
    /// refusal nested in a peer's refusal replaced by a bad request saying so.
    #[must_use]
    pub fn fit(&self) -> Refusal {
        self.fit_at(0)
    }

    fn fit_at(&self, depth: usize) -> Refusal {
        let mut r = self.clone();
        for t in r.texts_mut() {
            crate::text::cut_at(t, MAX_REFUSAL_TEXT);
        }
        match &mut r {
            Refusal::AgentCpus { asked, allowed, .. } => {
                asked.truncate(MAX_REFUSAL_CPUS);
                allowed.truncate(MAX_REFUSAL_CPUS);
            }
            Refusal::PeerNotAuthenticated {
                why: PeerAuth::Refused { .. },
                ..
            } if depth > 0 => {
                return Refusal::BadRequest {
                    detail: "a peer's refusal nested in a peer's refusal".into(),
                }
            }
            Refusal::PeerNotAuthenticated {
                why: PeerAuth::Refused { refusal },
                ..
            } => **refusal = refusal.fit_at(depth + 1),
            _ => {}
        }
        r
    }

    /// The refusal's own texts (a nested refusal's are its own).
    fn texts(&self) -> Vec<&String> {
        match self {
            Refusal::NotAllowed { peer: t }
            | Refusal::Limit { limit: t, .. }
            | Refusal::BadRequest { detail: t }
            | Refusal::Timeout { waiting_for: t }
            | Refusal::KeyRequired { what: t }
            | Refusal::PeerNotAuthenticated { peer: t, .. } => vec![t],
            Refusal::Busy { .. }
            | Refusal::VersionMismatch { .. }
            | Refusal::NotMtuperf
            | Refusal::AuthRequired
            | Refusal::AuthFailed
            | Refusal::AgentCpus { .. }
            | Refusal::TestHooksOff
            | Refusal::UnknownSession => Vec::new(),
        }
    }

    fn texts_mut(&mut self) -> Vec<&mut String> {
        match self {
            Refusal::NotAllowed { peer: t }
            | Refusal::Limit { limit: t, .. }
            | Refusal::BadRequest { detail: t }
            | Refusal::Timeout { waiting_for: t }
            | Refusal::KeyRequired { what: t }
            | Refusal::PeerNotAuthenticated { peer: t, .. } => vec![t],
            _ => Vec::new(),
        }
    }
}

/// What bounds the CPUs an agent pins its test threads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CpuLimit {
    /// The agent's processor set, `serve --cpus`.
    ProcessorSet,
    /// The agent host's online CPUs (the agent has no processor set).
    Online,
}

/// `Refusal::Limit`'s name for the agent's connections: the data connections a test
/// asks for beyond those that tests already running hold.
pub const CONNECTIONS_LIMIT: &str = "connections";
