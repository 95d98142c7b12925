//! `mtuperf history`: the list of stored runs (and comparison groups) as text or as
//! JSON rows, each row carrying its `schema` (`mtuperf.history/1`).
use std::fmt::Write;

use schemars::JsonSchema;
use serde::Serialize;

pub const SCHEMA: &str = "mtuperf.history/1";

/// `mtuperf history --json`: an array of stored runs, newest first, without their
/// documents. Each row names its schema. With `--kind compare` the rows are comparison
/// groups: `id` is the group id (for `report --compare` and `compare --resume`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct Rows(pub Vec<Row>);

/// One line of the history: a stored run, or (kind "compare") a comparison group,
/// whose `id` is then the group id that `report --compare` and `compare --resume` take.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Row {
    #[schemars(extend("const" = SCHEMA))]
    pub schema: &'static str,
    pub id: i64,
    /// RFC 3339, UTC, seconds.
    pub started: String,
    pub kind: String,
    /// The peer as the user named it; for a comparison, its path names.
    pub target: String,
    pub label: Option<String>,
    pub group_id: Option<i64>,
    /// The one-line result the history list shows.
    pub headline: String,
    /// The number behind the headline in the kind's base unit (stream bit/s, rr blocks/s,
    /// doctor FAIL count).
    pub headline_value: Option<f64>,
    /// The run stopped early; for a comparison: not finished.
    pub interrupted: bool,
}

/// The table for people: one line per row, newest first as given.
pub fn text(rows: &[Row]) -> String {
    let mut s = format!(
        "{:>5}  {:<20}  {:<8}  {:>5}  {:<28}  {:<10}  headline\n",
        "id", "time (UTC)", "kind", "group", "target", "label"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:>5}  {:<20}  {:<8}  {:>5}  {:<28}  {:<10}  {}{}",
            r.id,
            r.started,
            r.kind,
            r.group_id
                .map_or_else(|| "-".to_string(), |g| g.to_string()),
            r.target,
            r.label.as_deref().unwrap_or("-"),
            r.headline,
            if r.interrupted { " (interrupted)" } else { "" }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_has_a_group_column() {
        let row = Row {
            schema: SCHEMA,
            id: 7,
            started: "2026-01-01T00:00:00Z".into(),
            kind: "stream".into(),
            target: "h".into(),
            label: Some("std".into()),
            group_id: Some(3),
            headline: "9.41 Gbit/s".into(),
            headline_value: Some(9.41e9),
            interrupted: true,
        };
        let t = text(&[row]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].contains("group"), "{t}");
        assert!(lines[1].contains("stream        3  h"), "{t}");
        assert!(lines[1].ends_with("9.41 Gbit/s (interrupted)"), "{t}");
    }
}
