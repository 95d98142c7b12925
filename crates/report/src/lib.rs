//! Renderers. The engine produces typed results; this crate turns them into what
//! people and programs read: text tables, JSON documents with a versioned `schema`
//! field, CSV, Markdown and HTML. One folder per kind (`stream`, `rr`, `path`,
//! `compare`, `mesh`, `watch`, ...): its model, its text and its HTML side by side;
//! `html` holds what every page shares.

pub mod adhoc;
pub mod agent;
pub mod compare;
pub mod csv;
pub mod demo;
pub mod diagnosis;
pub mod doctor;
pub mod error;
pub mod explain;
pub mod figure;
pub mod fmt;
pub mod history;
pub mod html;
pub mod interrupt;
pub mod live;
pub mod mesh;
pub mod path;
pub mod placement;
pub mod record;
pub mod refusal;
pub mod rr;
pub mod ssh;
pub mod stream;
pub mod watch;

/// Wall-clock timestamp for people (RFC 3339, UTC, seconds).
pub fn timestamp(unix_ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_ms.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}
