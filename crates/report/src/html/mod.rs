//! One self-contained HTML report for a comparison: inline CSS and inline SVG charts
//! (plotters), no scripts, nothing fetched from the network.

mod axis;
mod charts;
pub mod path;
mod placement;
pub mod trend;

pub use rr_charts::knee_lines;
mod rr_charts;

use std::fmt::Write as _;

use crate::compare::{cell_label, text::value, CompareDoc, Figure};
use mtuperf_engine::compare::Verdict;

pub(super) const CSS: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
th{background:#eee}td.l,th.l{text-align:left}.verdict{font-size:1.15em;background:#eef6ee;padding:.6em;border-left:4px solid #393}\
.flag{background:#fdd;padding:.6em;border-left:4px solid #c33}figure{margin:1em 0}figcaption{font-size:.9em;color:#555}";

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(super) fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
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

/// The whole report as one HTML document.
pub fn html(d: &CompareDoc) -> String {
    let mut o = String::new();
    let what = if d.plan.paths.len() == 1 {
        "report"
    } else {
        "compare"
    };
    let title = format!(
        "mtuperf {what}: {}",
        d.plan
            .paths
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(" vs ")
    );
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>{}</title><style>{CSS}</style></head><body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    // Stored runs picked by id have no plan of their own: say what was picked.
    let adhoc = d.group_id.is_none() && d.plan.time_ms == 0;
    let line = if adhoc {
        stored_line(d)
    } else {
        crate::compare::text::plan_line(d)
    };
    let _ = writeln!(o, "<p>{}</p>", esc(line.trim()));
    for f in &d.flagged {
        let _ = writeln!(o, "<p class=\"flag\">Path <b>{}</b> failed its pre-check and was measured only because of --force: its figures do not describe a healthy path.</p>", esc(f));
    }
    if let Some(r) = &d.refused {
        let _ = writeln!(o, "<p class=\"flag\">Refused: {}</p>", esc(r));
    }
    let knees = rr_charts::knee_lines(d);
    if !d.verdicts.is_empty() || !knees.is_empty() || d.answer.is_some() {
        o.push_str("<h2>Verdict</h2>\n");
    }
    if let Some(a) = &d.answer {
        let _ = writeln!(
            o,
            "<p class=\"verdict\"><b>{}</b></p>",
            esc(&crate::compare::answer::line(a))
        );
    }
    for v in d.verdicts.iter().chain(&knees) {
        let _ = writeln!(o, "<p class=\"verdict\">{}</p>", esc(v));
    }
    o.push_str("<h2>Summary</h2>\n");
    let rows: Vec<Vec<String>> = d
        .summaries
        .iter()
        .map(|c| {
            let m = &c.summary;
            vec![
                format!(
                    "{} {}",
                    cell_label(c.test, c.block, c.clients),
                    c.figure.label()
                ),
                c.path.clone(),
                value(c.figure, m.mean),
                crate::fmt::ci(m),
                value(c.figure, m.median),
                value(c.figure, m.min),
                value(c.figure, m.max),
                m.n.to_string(),
            ]
        })
        .collect();
    table(
        &mut o,
        &[
            "figure", "path", "mean", "95% CI", "median", "min", "max", "n",
        ],
        &rows,
    );
    o.push_str("<h2>Charts</h2>\n");
    for cell in d.plan.cells() {
        // One path has nothing to set its bars against: the summary table holds them.
        if d.plan.paths.len() > 1 {
            for f in Figure::ALL {
                o.push_str(&charts::bars(d, cell, f));
            }
        }
        o.push_str(&charts::rounds(d, cell));
    }
    let has_rr = d
        .plan
        .tests
        .contains(&mtuperf_engine::compare::TestKind::Rr);
    if has_rr {
        if d.plan.blocks.len() > 1 {
            o.push_str(&rr_charts::by_block(d));
        }
        o.push_str(&rr_charts::cpu(d));
        for &b in &d.plan.blocks {
            o.push_str(&rr_charts::curve(d, b));
            for &c in &d.plan.clients {
                o.push_str(&rr_charts::cdf(d, b, c));
                o.push_str(&rr_charts::spectrum(d, b, c));
            }
        }
    } else {
        o.push_str("<p>No request/response (rr) runs in this comparison: no latency-vs-throughput curves or latency CDFs.</p>\n");
    }
    if !d.checks.is_empty() {
        o.push_str("<h2>Path checks</h2>\n");
    }
    let rows: Vec<Vec<String>> = d
        .checks
        .iter()
        .map(|c| {
            vec![
                c.name.clone(),
                c.target.clone(),
                if c.verdict == Verdict::Ok {
                    "ok".into()
                } else {
                    "BROKEN".into()
                },
                c.method.clone(),
                c.reason.clone(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(
            &mut o,
            &["path", "target", "verdict", "method", "reason"],
            &rows,
        );
    }
    o.push_str(&placement::section(d));
    if !d.environment.ends.is_empty() || !d.environment.sysctls.is_empty() {
        o.push_str("<h2>Environment</h2>\n");
    }
    let rows: Vec<Vec<String>> = d
        .environment
        .ends
        .iter()
        .map(|e| {
            vec![
                format!("{} {}", e.path, e.end),
                e.hostname.clone(),
                e.kernel.clone(),
                e.iface.clone().unwrap_or_default(),
                e.mtu.map(|m| m.to_string()).unwrap_or_default(),
                e.offloads.clone(),
            ]
        })
        .collect();
    if !rows.is_empty() {
        table(
            &mut o,
            &["end", "host", "kernel", "interface", "MTU", "offloads"],
            &rows,
        );
    }
    let rows: Vec<Vec<String>> = d
        .environment
        .sysctls
        .iter()
        .map(|(k, v)| vec![k.clone(), v.clone()])
        .collect();
    if !rows.is_empty() {
        table(&mut o, &["sysctl (client host)", "value"], &rows);
    }
    o.push_str("</body></html>\n");
    o
}

/// What a report of stored runs picked by id shows:
/// "stored runs 4, 5, 6 of 127.0.0.1:7878: rr; blocks 8K; 1, 4 and 16 clients"
pub fn stored_line(d: &CompareDoc) -> String {
    let mut ids: Vec<i64> = d.runs.iter().filter_map(|r| r.run_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
    let paths: Vec<String> = d
        .plan
        .paths
        .iter()
        .map(|p| {
            if p.name == p.target {
                p.name.clone()
            } else {
                format!("{} ({})", p.name, p.target)
            }
        })
        .collect();
    let tests: Vec<&str> = d.plan.tests.iter().map(|t| t.name()).collect();
    let blocks: Vec<String> = d
        .plan
        .blocks
        .iter()
        .map(|b| crate::compare::block_label(*b))
        .collect();
    format!(
        "stored runs {} of {}: {}; blocks {}",
        ids.join(", "),
        paths.join(", "),
        tests.join(", "),
        blocks.join(", ")
    )
}
