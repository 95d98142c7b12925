//! SQL text and row mapping for runs and groups.

use rusqlite::types::Value;
use rusqlite::Row as SqlRow;

use crate::model::{Filter, Group, Row, RunKind, StoredRun};

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
        args.push(Value::Text(kind.as_str().to_string()));
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

pub(crate) fn run_from_row(row: &SqlRow<'_>) -> rusqlite::Result<StoredRun> {
    let id = row.get(0)?;
    Ok(StoredRun {
        id,
        kind: kind_at(row, 1, Row::Run(id))?,
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

pub(crate) fn group_from_row(row: &SqlRow<'_>) -> rusqlite::Result<Group> {
    let id = row.get(0)?;
    Ok(Group {
        id,
        kind: kind_at(row, 1, Row::Group(id))?,
        created_unix_ms: row.get(2)?,
        plan_json: row.get(3)?,
        summary_json: row.get(4)?,
        finished: row.get(5)?,
    })
}

/// A kind column that names no [`RunKind`] this build knows: the row and the name.
#[derive(Debug, thiserror::Error)]
#[error("{row:?}: {kind}")]
pub(crate) struct BadKind {
    pub row: Row,
    pub kind: crate::UnknownKind,
}

/// The kind in column `col`: an unknown name is a conversion failure carrying
/// [`BadKind`], which [`crate::StoreError::sqlite`] turns into `UnknownKind`.
fn kind_at(row: &SqlRow<'_>, col: usize, at: Row) -> rusqlite::Result<RunKind> {
    let name: String = row.get(col)?;
    name.parse().map_err(|kind| {
        rusqlite::Error::FromSqlConversionFailure(
            col,
            rusqlite::types::Type::Text,
            Box::new(BadKind { row: at, kind }),
        )
    })
}
