//! The run-record layer: every measured result that the history keeps is a
//! [`RunRecord`] of one [`RunKind`]. The record says everything the rest of the tool asks
//! of a run: its one-line headline, its versioned JSON document, its figures (as data,
//! for CSV and the tables; next for OpenMetrics) and its text. `store`, `show`,
//! `history`, `export` and `report` dispatch on the kind, never on strings.
//!
//! Adding a kind (mesh, UDP stream, watch) is one variant here and one implementation
//! in [`kinds`].

mod kinds;

pub use crate::figure::{figure, Figure};
pub use kinds::decode;

/// What a stored run measured: the history's own type, kept there as its name.
pub use mtuperf_store::RunKind;

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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::RunKind;

    #[test]
    fn a_run_kind_reads_back_as_the_name_it_is_stored_under() {
        let names = ["stream", "rr", "path", "doctor", "compare", "udp", "mesh"];
        for (kind, name) in RunKind::ALL.into_iter().zip(names) {
            assert_eq!(kind.to_string(), name);
            assert_eq!(name.parse::<RunKind>(), Ok(kind));
        }
    }

    #[test]
    fn an_unknown_run_kind_is_refused_with_the_known_ones() {
        assert_eq!(
            "watch".parse::<RunKind>().unwrap_err().to_string(),
            r#"unknown run kind "watch"; one of stream, rr, path, doctor, compare, udp, mesh"#
        );
        assert!("Stream".parse::<RunKind>().is_err());
    }
}
