//! Retention for runs that accumulate on their own (watch checks): runs of one label
//! older than a cutoff are deleted. Deleted, not summarised: the Prometheus server
//! that scrapes the agent keeps the long-term series; the history keeps the detail of
//! the retention window (`serve --retain`).

use rusqlite::params;

use crate::{Store, StoreError};

impl Store {
    /// Deletes the runs labelled `label` (outside any group) that started before
    /// `before_unix_ms`; returns how many.
    pub fn prune_label(&self, label: &str, before_unix_ms: i64) -> Result<usize, StoreError> {
        self.conn
            .execute(
                "DELETE FROM runs WHERE label = ?1 AND group_id IS NULL AND started_unix_ms < ?2",
                params![label, before_unix_ms],
            )
            .map_err(|e| StoreError::sqlite("pruning old runs", &self.path, e))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::{NewRun, Store};

    fn run(at: i64, label: Option<&str>) -> NewRun {
        NewRun {
            kind: crate::RunKind::Path,
            target: "peer".into(),
            started_unix_ms: at,
            headline: "ok".into(),
            headline_value: None,
            interrupted: false,
            document: "{}".into(),
            group_id: None,
            label: label.map(str::to_string),
        }
    }

    #[test]
    fn only_old_runs_of_the_label_go() {
        let s = Store::open_in_memory().unwrap();
        s.insert(&run(1_000, Some("watch"))).unwrap();
        let kept = s.insert(&run(5_000, Some("watch"))).unwrap();
        let other = s.insert(&run(1_000, None)).unwrap();
        assert_eq!(s.prune_label("watch", 2_000).unwrap(), 1);
        assert!(s.get(kept).unwrap().is_some());
        assert!(s.get(other).unwrap().is_some());
        assert_eq!(s.prune_label("watch", 2_000).unwrap(), 0);
    }
}
