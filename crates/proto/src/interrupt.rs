//! Why a measurement ended early or abnormally: the typed causes a stream, UDP stream
//! or rr result stores (`interrupted_by`), each with its numbers and names, and their
//! words.
//!
//! The type and its words live here, below both the engine and report, because the
//! engine still sends the words on the wire: a mesh third-party summary and an
//! `rr --from` host's load summary carry the cause as text (typing those is a
//! protocol change). Report re-exports [`words`]; nothing else words a cause.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// The agent answered with something other than its report, or refused.
    AgentAnswer { error: String },
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
    /// `rr --from`: a host that failed once the sessions were open.
    FromHostFailed { host: String, error: String },
    /// `rr --from`: a host's own run was interrupted, for this reason (its words, as
    /// the host sent them).
    FromHost { host: String, reason: String },
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

fn end(e: Side) -> &'static str {
    match e {
        Side::Client => "this end",
        Side::Agent => "the agent",
    }
}

/// One cause, in words.
pub fn word(i: &Interrupt) -> String {
    match i {
        Interrupt::Signal => "stopped by a signal (Ctrl-C or SIGTERM)".into(),
        Interrupt::AgentSilent {
            silence_s,
            heard_ns,
        } => format!(
            "no word from the agent for {silence_s} s after {:.1} s",
            secs(*heard_ns)
        ),
        Interrupt::NoReport {
            wait_s,
            finished_ns,
        } => format!(
            "no report from the agent within {wait_s} s of this end's finish at {:.1} s",
            secs(*finished_ns)
        ),
        Interrupt::ControlSilent { at_ns } => format!(
            "no report from the agent (control connection silent) at {:.1} s",
            secs(*at_ns)
        ),
        Interrupt::AgentFailed { at_ns, message } => {
            format!("the agent failed at {:.1} s: {message}", secs(*at_ns))
        }
        Interrupt::AgentAnswer { error } => error.clone(),
        Interrupt::AgentGone { at_ns, error } => format!(
            "the agent went away at {:.1} s ({error}); only this end's figures are complete",
            secs(*at_ns)
        ),
        Interrupt::ReportNeverCame => "the agent's report never came".into(),
        Interrupt::Connection {
            end: e,
            index,
            error,
            more: 0,
        } => format!("{}, connection {index}: {error}", end(*e)),
        Interrupt::Connection {
            end: e,
            index,
            error,
            more,
        } => format!(
            "{}, connection {index}: {error} (and {more} more connections)",
            end(*e)
        ),
        Interrupt::Socket {
            end: e,
            index,
            error,
        } => format!("{}, socket {index}: {error}", end(*e)),
        Interrupt::Requester { error } => format!("this end: {error}"),
        Interrupt::AgentMaxDuration { secs } => format!(
            "ended at the agent's maximum duration of {secs} s (serve --max-duration) before all bytes were sent"
        ),
        Interrupt::Stalled { what, spans } => {
            let what = match what {
                Stalled::Bytes => "no bytes moved between this end and the agent",
                Stalled::Blocks => "no block came back from the agent",
            };
            let parts: Vec<String> = spans
                .iter()
                .map(|s| format!("{:.1} s to {:.1} s", secs(s.from_ns), secs(s.to_ns)))
                .collect();
            format!("stalled: {what} from {}", parts.join(", and from "))
        }
        Interrupt::AgentSide => "the agent marked its side interrupted".into(),
        Interrupt::FromHostsMissing { measured, hosts } => {
            format!("{measured} of {hosts} --from hosts measured, the totals are theirs")
        }
        Interrupt::FromHostFailed { host, error } => format!("{host} failed: {error}"),
        Interrupt::FromHost { host, reason } => format!("{host}: {reason}"),
    }
}

/// The causes in words, "; "-separated (None: not interrupted).
pub fn words(causes: &[Interrupt]) -> Option<String> {
    (!causes.is_empty()).then(|| causes.iter().map(word).collect::<Vec<_>>().join("; "))
}
