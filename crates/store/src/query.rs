//! SQL text and row mapping for runs and groups.

use rusqlite::types::Value;
use rusqlite::Row;

use crate::model::{Filter, Group, StoredRun};

pub(crate) const RUN_COLUMNS: &str = "id, kind, target, started_unix_ms, headline, \
     headline_value, interrupted, document, group_id, label";
pub(crate) const GROUP_COLUMNS: &str =
    "id, kind, created_unix_ms, plan_json, summary_json, finished";

/// The `SELECT` for [`crate::Store::list`] and its positional arguments.
pub(crate) fn list_sql(filter: &Filter) -> (String, Vec<Value>) {
    let mut sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE 1 = 1");
    let mut args: Vec<Value> = Vec::new();
    if let Some(since) = filter.since_unix_ms {
        sql.push_str(" AND started_unix_ms >= ?");
        args.push(Value::Integer(since));
    }
    if let Some(target) = &filter.target {
        sql.push_str(" AND instr(target, ?) > 0");
        args.push(Value::Text(target.clone()));
    }
    if let Some(kind) = &filter.kind {
        sql.push_str(" AND kind = ?");
        args.push(Value::Text(kind.clone()));
    }
    if let Some(group) = filter.group_id {
        sql.push_str(" AND group_id = ?");
        args.push(Value::Integer(group));
    }
    if !filter.ids.is_empty() {
        sql.push_str(" AND id IN (");
        sql.push_str(&vec!["?"; filter.ids.len()].join(", "));
        sql.push(')');
        args.extend(filter.ids.iter().map(|&id| Value::Integer(id)));
    }
    sql.push_str(" ORDER BY started_unix_ms DESC, id DESC");
    if let Some(limit) = filter.limit {
        sql.push_str(" LIMIT ?");
        args.push(Value::Integer(i64::try_from(limit).unwrap_or(i64::MAX)));
    }
    (sql, args)
}

pub(crate) fn run_from_row(row: &Row<'_>) -> rusqlite::Result<StoredRun> {
    Ok(StoredRun {
        id: row.get(0)?,
        kind: row.get(1)?,
        target: row.get(2)?,
        started_unix_ms: row.get(3)?,
        headline: row.get(4)?,
        headline_value: row.get(5)?,
        interrupted: row.get(6)?,
        document: row.get(7)?,
        group_id: row.get(8)?,
        label: row.get(9)?,
    })
}

pub(crate) fn group_from_row(row: &Row<'_>) -> rusqlite::Result<Group> {
    Ok(Group {
        id: row.get(0)?,
        kind: row.get(1)?,
        created_unix_ms: row.get(2)?,
        plan_json: row.get(3)?,
        summary_json: row.get(4)?,
        finished: row.get(5)?,
    })
}
