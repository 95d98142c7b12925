//! Why a measurement ended early or abnormally: the typed causes a stream, UDP stream
//! or rr result stores (`interrupted_by`), each with its numbers and names.
//!
//! The type lives here, below both the engine and report, because the causes cross
//! the wire (protocol 17): a mesh third-party summary and an `rr --from` host's load
//! summary carry them typed, checked for size as they are decoded ([`check`]) after
//! the sender fitted them ([`fit`]). Their words are report's
//! (`mtuperf_report::interrupt`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::failed::Failed;

/// Which end of a test a connection or socket error happened at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// This end (the client).
    Client,
    /// The agent.
    Agent,
}

/// What did not move during a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Stalled {
    /// stream: no byte moved between this end and the agent.
    Bytes,
    /// rr: no block came back from the agent.
    Blocks,
}

/// A span of a stall, in ns after Go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Span {
    pub from_ns: u64,
    pub to_ns: u64,
}

/// One cause of an interrupted run. Times are ns after Go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum Interrupt {
    /// Ctrl-C or SIGTERM.
    Signal,
    /// The agent fell silent for `silence_s` while the test ran, last heard at
    /// `heard_ns`.
    AgentSilent { silence_s: u64, heard_ns: u64 },
    /// No report within `wait_s` of this end's finish at `finished_ns`.
    NoReport { wait_s: u64, finished_ns: u64 },
    /// The control connection fell silent waiting for the report, at `at_ns`.
    ControlSilent { at_ns: u64 },
    /// The agent reported an error instead of its report, at `at_ns`.
    AgentFailed { at_ns: u64, message: String },
    /// The agent answered with something other than its report, or refused (its
    /// refusal typed).
    AgentAnswer { error: Failed },
    /// The control connection failed at `at_ns`: only this end's figures are complete.
    AgentGone { at_ns: u64, error: String },
    /// The agent's report never came (the relay ended without it).
    ReportNeverCame,
    /// A TCP connection's error at one end, with how many more connections failed.
    Connection {
        end: Side,
        index: u32,
        error: String,
        more: u32,
    },
    /// A UDP socket's error at one end.
    Socket {
        end: Side,
        index: u32,
        error: String,
    },
    /// This rr requester's first error.
    Requester { error: String },
    /// A `--bytes` run cut at the agent's maximum duration (`serve --max-duration`)
    /// before all bytes were sent.
    AgentMaxDuration { secs: u64 },
    /// Nothing moved for long in these spans.
    Stalled { what: Stalled, spans: Vec<Span> },
    /// The agent marked its side interrupted and said no more.
    AgentSide,
    /// `rr --from`: only `measured` of `hosts` hosts measured; the totals are theirs.
    FromHostsMissing { measured: u32, hosts: u32 },
    /// `rr --from`: a host that failed once the sessions were open (a refusal, its
    /// own or the target's, typed).
    FromHostFailed { host: String, error: Failed },
    /// `rr --from`: a host's own run was interrupted, for these causes (as the host
    /// sent them).
    FromHost {
        host: String,
        causes: Vec<Interrupt>,
    },
}

/// Most causes one list on the wire may hold, those nested in a [`Interrupt::FromHost`]
/// counted too (a run has a handful: a signal, a silent agent, a few connections').
pub const MAX_CAUSES: usize = 32;
/// Most stall spans one [`Interrupt::Stalled`] on the wire may list (the first ones).
pub const MAX_SPANS: usize = 64;
/// Longest text (an error, a host) in a cause on the wire, in bytes.
pub const MAX_CAUSE_TEXT: usize = 512;
/// Deepest nesting of [`Interrupt::FromHost`] on the wire: a host's causes are its own
/// run's, which nest nothing.
pub const MAX_NESTING: usize = 1;

/// Checks a decoded list of causes against [`MAX_CAUSES`], [`MAX_SPANS`],
/// [`MAX_CAUSE_TEXT`] and [`MAX_NESTING`].
pub fn check(causes: &[Interrupt]) -> Result<(), String> {
    let mut count = 0;
    check_in(causes, 0, &mut count)
}

fn check_in(causes: &[Interrupt], depth: usize, count: &mut usize) -> Result<(), String> {
    for c in causes {
        *count += 1;
        if *count > MAX_CAUSES {
            return Err(format!(
                "more than {MAX_CAUSES} interrupt causes, at most {MAX_CAUSES} allowed"
            ));
        }
        if let Some(t) = texts(c).into_iter().find(|t| t.len() > MAX_CAUSE_TEXT) {
            return Err(format!(
                "an interrupt cause's text of {} bytes, at most {MAX_CAUSE_TEXT} allowed",
                t.len()
            ));
        }
        if let Some(f) = failed(c) {
            f.check(MAX_CAUSE_TEXT)?;
        }
        match c {
            Interrupt::Stalled { spans, .. } if spans.len() > MAX_SPANS => {
                return Err(format!(
                    "{} stall spans, at most {MAX_SPANS} allowed",
                    spans.len()
                ));
            }
            Interrupt::FromHost { causes, .. } => {
                if depth >= MAX_NESTING {
                    return Err(format!(
                        "interrupt causes nested deeper than {MAX_NESTING} allowed"
                    ));
                }
                check_in(causes, depth + 1, count)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The failure a cause carries, checked as [`Failed::check`].
fn failed(c: &Interrupt) -> Option<&Failed> {
    match c {
        Interrupt::AgentAnswer { error } | Interrupt::FromHostFailed { error, .. } => Some(error),
        _ => None,
    }
}

/// The texts a cause carries (errors, messages, a host), its failure's aside.
fn texts(c: &Interrupt) -> Vec<&String> {
    match c {
        Interrupt::AgentFailed { message: t, .. }
        | Interrupt::AgentGone { error: t, .. }
        | Interrupt::Connection { error: t, .. }
        | Interrupt::Socket { error: t, .. }
        | Interrupt::Requester { error: t }
        | Interrupt::FromHost { host: t, .. }
        | Interrupt::FromHostFailed { host: t, .. } => vec![t],
        Interrupt::AgentAnswer { .. }
        | Interrupt::Signal
        | Interrupt::AgentSilent { .. }
        | Interrupt::NoReport { .. }
        | Interrupt::ControlSilent { .. }
        | Interrupt::ReportNeverCame
        | Interrupt::AgentMaxDuration { .. }
        | Interrupt::Stalled { .. }
        | Interrupt::AgentSide
        | Interrupt::FromHostsMissing { .. } => Vec::new(),
    }
}

/// `causes` cut to what [`check`] lets through, for the sender: the first
/// [`MAX_CAUSES`] (nested ones counted), each text cut to [`MAX_CAUSE_TEXT`] bytes
/// (at a character boundary), the first [`MAX_SPANS`] of a stall, and a
/// [`Interrupt::FromHost`] nested too deep left out.
pub fn fit(causes: &[Interrupt]) -> Vec<Interrupt> {
    let mut left = MAX_CAUSES;
    fit_in(causes, 0, &mut left)
}

fn fit_in(causes: &[Interrupt], depth: usize, left: &mut usize) -> Vec<Interrupt> {
    let mut out = Vec::new();
    for c in causes {
        if *left == 0 {
            break;
        }
        let mut c = c.clone();
        match &mut c {
            Interrupt::FromHost { .. } if depth >= MAX_NESTING => continue,
            Interrupt::FromHost { causes, .. } => {
                *left -= 1;
                *causes = fit_in(causes, depth + 1, left);
            }
            Interrupt::Stalled { spans, .. } => {
                *left -= 1;
                spans.truncate(MAX_SPANS);
            }
            _ => *left -= 1,
        }
        cut_texts(&mut c);
        out.push(c);
    }
    out
}

fn cut_texts(c: &mut Interrupt) {
    let cut = |t: &mut String| crate::text::cut_at(t, MAX_CAUSE_TEXT);
    match c {
        Interrupt::AgentFailed { message: t, .. }
        | Interrupt::AgentGone { error: t, .. }
        | Interrupt::Connection { error: t, .. }
        | Interrupt::Socket { error: t, .. }
        | Interrupt::Requester { error: t }
        | Interrupt::FromHost { host: t, .. } => cut(t),
        Interrupt::AgentAnswer { error } => *error = error.fit(MAX_CAUSE_TEXT),
        Interrupt::FromHostFailed { host, error } => {
            cut(host);
            *error = error.fit(MAX_CAUSE_TEXT);
        }
        _ => {}
    }
}
