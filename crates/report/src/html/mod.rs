//! What every HTML page shares: its style, its head, its tables, escaping and
//! times (`mod.rs`), the axes' ticks, colours and legend (`axis`), and the charts'
//! frames (`chart`). Each kind's page lives in its own folder (`compare/html`,
//! `path/html.rs`, `mesh/html.rs`, `watch/html.rs`) and draws with these; nothing
//! here knows a kind.

pub(crate) mod axis;
pub(crate) mod chart;

use std::fmt::Write as _;

/// The reports' style: type of at least 11 px (13 px small print), charts side by side
/// where they fit and never wider than the page, long lines wrapped (no sideways
/// scrolling at any width).
pub(crate) const CSS: &str = "body{font-family:system-ui,sans-serif;font-size:15px;margin:2em;max-width:1340px;color:#222}\
h1{font-size:1.6em;overflow-wrap:anywhere}h2{margin-top:1.4em}\
table{border-collapse:collapse;margin:1em 0;max-width:100%}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;overflow-wrap:anywhere}\
th{background:#eee}td.l,th.l{text-align:left}.verdict{font-size:1.1em;background:#eef6ee;padding:.6em;border-left:4px solid #009e73}\
.flag{background:#fbe9dd;padding:.6em;border-left:4px solid #d55e00}.run{color:#444}\
.charts{display:flex;flex-wrap:wrap;gap:.5em 1.5em;align-items:flex-start}\
figure{margin:1em 0;max-width:100%}figcaption{font-size:.9em;color:#444}svg{max-width:100%;height:auto}\
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:13px}";

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// "2026-11-25 19:38:14 UTC" from the documents' RFC 3339 "2026-11-25T19:38:14Z".
pub fn when(rfc3339: &str) -> String {
    match rfc3339.strip_suffix('Z') {
        Some(t) => format!("{} UTC", t.replacen('T', " ", 1)),
        None => rfc3339.replacen('T', " ", 1),
    }
}

/// The start of a report page: its title in `<title>` and `<h1>`.
pub(crate) fn head(css: &str, title: &str) -> String {
    let t = esc(title);
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><meta name=\"viewport\" content=\"width=device-width\"/><title>{t}</title><style>{css}</style></head><body>\n<h1>{t}</h1>\n"
    )
}

pub(crate) fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table><tr>");
    for (i, h) in head.iter().enumerate() {
        let c = if i == 0 { " class=\"l\"" } else { "" };
        let _ = write!(out, "<th{c}>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, v) in r.iter().enumerate() {
            let c = if i == 0 { " class=\"l\"" } else { "" };
            let _ = write!(out, "<td{c}>{}</td>", esc(v));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}
