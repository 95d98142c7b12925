//! [`Figure`]: one number a run yields, as data. Each kind of result makes its own
//! (`stream::figures`, `rr::figures`, `path::figures`); the record layer hands them
//! out, and CSV, the compare statistics and the HTML tables read them.

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
