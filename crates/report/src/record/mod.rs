//! The run-record layer: every measured result that the history keeps is a
//! [`RunRecord`] of one [`RunKind`]. The record says everything the rest of the tool asks
//! of a run: its one-line headline, its versioned JSON document, its figures (as data,
//! for CSV and the tables; next for OpenMetrics) and its text. `store`, `show`,
//! `history`, `export` and `report` dispatch on the kind, never on strings.
//!
//! Adding a kind (mesh, UDP stream, watch) is one variant here and one implementation
//! in [`kinds`].

mod kinds;

use std::fmt;
use std::str::FromStr;

pub use kinds::decode;

/// What a stored run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunKind {
    Stream,
    Rr,
    Path,
    Doctor,
    Compare,
    Mesh,
}

impl RunKind {
    pub const ALL: [RunKind; 6] = [
        RunKind::Stream,
        RunKind::Rr,
        RunKind::Path,
        RunKind::Doctor,
        RunKind::Compare,
        RunKind::Mesh,
    ];

    /// The name stored in the history and typed on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RunKind::Stream => "stream",
            RunKind::Rr => "rr",
            RunKind::Path => "path",
            RunKind::Doctor => "doctor",
            RunKind::Compare => "compare",
            RunKind::Mesh => "mesh",
        }
    }

    /// "stream, rr, path, doctor, compare": for error messages.
    pub fn allowed() -> String {
        RunKind::ALL.map(RunKind::name).join(", ")
    }
}

impl fmt::Display for RunKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RunKind {
    type Err = String;
    fn from_str(s: &str) -> Result<RunKind, String> {
        RunKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown run kind {s:?}; one of {}", RunKind::allowed()))
    }
}

/// One number a run yields, with what it counts: `value` in `unit`, told apart from
/// its siblings by `labels` (e.g. `proto=udp`).
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: &'static str,
    pub unit: &'static str,
    pub value: f64,
    pub labels: Vec<(&'static str, String)>,
}

impl Figure {
    pub fn new(name: &'static str, unit: &'static str, value: f64) -> Figure {
        Figure {
            name,
            unit,
            value,
            labels: Vec::new(),
        }
    }

    /// The same figure with one more label.
    #[must_use]
    pub fn label(mut self, key: &'static str, value: impl Into<String>) -> Figure {
        self.labels.push((key, value.into()));
        self
    }
}

/// Looks a figure up by name.
pub fn figure<'a>(figs: &'a [Figure], name: &str) -> Option<&'a Figure> {
    figs.iter().find(|f| f.name == name)
}

/// A measured result as the history keeps it.
pub trait RunRecord {
    fn kind(&self) -> RunKind;
    /// Wall-clock start, milliseconds since the Unix epoch.
    fn started_unix_ms(&self) -> i64;
    /// One line for lists, e.g. "9.41 Gbit/s".
    fn headline(&self) -> String;
    /// The number behind the headline, in the kind's base unit, when there is one.
    fn headline_value(&self) -> Option<f64>;
    /// The run stopped early; its numbers cover less than planned.
    fn interrupted(&self) -> bool {
        false
    }
    /// The versioned JSON document the history stores and `show --json` prints.
    fn document(&self) -> String;
    /// The run's figures, as data.
    fn figures(&self) -> Vec<Figure>;
    /// The run as text for people (what `show` prints).
    fn text(&self) -> String;
}
