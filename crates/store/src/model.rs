//! The plain data that goes in and out of the store.

use std::fmt;
use std::str::FromStr;

/// What a stored run measured, and what a group of runs is (a `compare`, an `rr`
/// load sweep). The history keeps it as its name (`as_str`) in a TEXT column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    Stream,
    Rr,
    Path,
    Doctor,
    Compare,
    /// `stream --udp`.
    Udp,
    Mesh,
}

impl RunKind {
    pub const ALL: [RunKind; 7] = [
        RunKind::Stream,
        RunKind::Rr,
        RunKind::Path,
        RunKind::Doctor,
        RunKind::Compare,
        RunKind::Udp,
        RunKind::Mesh,
    ];

    /// The name stored in the history and typed on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Stream => "stream",
            RunKind::Rr => "rr",
            RunKind::Path => "path",
            RunKind::Doctor => "doctor",
            RunKind::Compare => "compare",
            RunKind::Udp => "udp",
            RunKind::Mesh => "mesh",
        }
    }

    /// "stream, rr, path, doctor, compare, udp, mesh": for error messages.
    pub fn allowed() -> String {
        RunKind::ALL.map(RunKind::as_str).join(", ")
    }
}

impl fmt::Display for RunKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A row of the history, by id: a run's or a group's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    Run(i64),
    Group(i64),
}

impl fmt::Display for Row {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Row::Run(id) => write!(f, "run {id}"),
            Row::Group(id) => write!(f, "group {id}"),
        }
    }
}

/// A kind name this build does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown run kind {0:?}; one of {known}", known = RunKind::allowed())]
pub struct UnknownKind(pub String);

impl FromStr for RunKind {
    type Err = UnknownKind;
    fn from_str(s: &str) -> Result<RunKind, UnknownKind> {
        RunKind::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownKind(s.to_string()))
    }
}

/// A run to save. `document` is the run's full JSON document, as the report layer emits it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRun {
    pub kind: RunKind,
    /// The peer as the user named it (host, host:port, address).
    pub target: String,
    /// Wall-clock start, milliseconds since the Unix epoch.
    pub started_unix_ms: i64,
    /// One line for lists, e.g. "9.41 Gbit/s".
    pub headline: String,
    /// The number behind the headline, in the run kind's base unit, when there is one.
    pub headline_value: Option<f64>,
    /// The run was stopped early (Ctrl-C, timeout); its numbers cover less than planned.
    pub interrupted: bool,
    /// The run's full JSON document.
    pub document: String,
    /// The comparison group this run belongs to.
    pub group_id: Option<i64>,
    /// The run's role inside its group, e.g. the path name in a compare, "std".
    pub label: Option<String>,
}

/// A saved run: its id and everything it was saved with.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredRun {
    pub id: i64,
    pub kind: RunKind,
    pub target: String,
    pub started_unix_ms: i64,
    pub headline: String,
    pub headline_value: Option<f64>,
    pub interrupted: bool,
    pub document: String,
    pub group_id: Option<i64>,
    pub label: Option<String>,
}

/// A group of runs, e.g. one `compare`: its plan, and its summary once finished.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    pub id: i64,
    /// [`RunKind::Compare`] or [`RunKind::Rr`] (a load sweep).
    pub kind: RunKind,
    /// Wall-clock creation time, milliseconds since the Unix epoch.
    pub created_unix_ms: i64,
    pub plan_json: String,
    /// Set by [`Store::finish_group`](crate::Store::finish_group).
    pub summary_json: Option<String>,
    pub finished: bool,
}

/// Which runs [`Store::list`](crate::Store::list) returns. Every field narrows; the default is everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Runs started at or after this time (ms since the Unix epoch).
    pub since_unix_ms: Option<i64>,
    /// Runs whose target contains this text (case-sensitive substring).
    pub target: Option<String>,
    /// Runs of exactly this kind.
    pub kind: Option<RunKind>,
    /// Runs of this group.
    pub group_id: Option<i64>,
    /// Only these ids; empty means any id.
    pub ids: Vec<i64>,
    /// At most this many runs (the newest).
    pub limit: Option<usize>,
}
