//! A comparison as Markdown, for tickets: verdict, summary table, checks, environment.

use std::fmt::Write as _;

use mtuperf_engine::compare::Verdict;

use crate::compare::{cell_label, text::value, CompareDoc};

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The comparison as GitHub-flavoured Markdown.
pub fn markdown(d: &CompareDoc) -> String {
    let mut o = String::new();
    let names: Vec<&str> = d.plan.paths.iter().map(|p| p.name.as_str()).collect();
    let what = if names.len() == 1 {
        "report"
    } else {
        "compare"
    };
    let _ = writeln!(o, "## mtuperf {what}: {}\n", names.join(" vs "));
    let line = if d.group_id.is_none() && d.plan.time_ms == 0 {
        super::html::stored_line(d)
    } else {
        crate::compare::text::plan_line(d)
    };
    let _ = writeln!(o, "{}\n", line.trim_end());
    for f in &d.flagged {
        let _ = writeln!(o, "> **Warning:** path `{f}` failed its pre-check and was measured only because of `--force`.\n");
    }
    if let Some(r) = &d.refused {
        let _ = writeln!(o, "> **Refused:** {r}\n");
    }
    o.push_str("### Verdict\n\n");
    if let Some(a) = &d.answer {
        let _ = writeln!(o, "**{}**\n", cell(&crate::compare::answer::line(a)));
    }
    for v in d.verdicts.iter().chain(&super::html::knee_lines(d)) {
        let _ = writeln!(o, "- {}", cell(v));
    }
    summary_and_checks(&mut o, d);
    environment(&mut o, d);
    o
}

/// The summary table and the path checks.
fn summary_and_checks(o: &mut String, d: &CompareDoc) {
    o.push_str("\n### Summary (mean, 95% CI half-width, median, min, max, n)\n\n");
    o.push_str("| figure | path | mean | 95% CI | median | min | max | n |\n|---|---|--:|--:|--:|--:|--:|--:|\n");
    for c in &d.summaries {
        let m = &c.summary;
        let _ = writeln!(
            o,
            "| {} {} | {} | {} | {} | {} | {} | {} | {} |",
            cell_label(c.test, c.block, c.clients),
            c.figure.label(),
            cell(&c.path),
            value(c.figure, m.mean),
            crate::fmt::ci(m),
            value(c.figure, m.median),
            value(c.figure, m.min),
            value(c.figure, m.max),
            m.n
        );
    }
    o.push_str("\n### Path checks\n\n| path | target | verdict | reason |\n|---|---|---|---|\n");
    for c in &d.checks {
        let v = if c.verdict == Verdict::Ok {
            "ok"
        } else {
            "**BROKEN**"
        };
        let _ = writeln!(
            o,
            "| {} | {} | {v} | {} |",
            cell(&c.name),
            cell(&c.target),
            cell(&crate::compare::check_reason(c))
        );
    }
}

/// Each path's two ends (host, kernel, interface, MTU, offloads) and the client's
/// sysctls.
fn environment(o: &mut String, d: &CompareDoc) {
    if !d.environment.ends.is_empty() {
        o.push_str("\n### Environment\n\n| end | host | kernel | interface | MTU | offloads |\n|---|---|---|---|--:|---|\n");
    }
    for e in &d.environment.ends {
        let _ = writeln!(
            o,
            "| {} {} | {} | {} | {} | {} | {} |",
            cell(&e.path),
            e.end,
            cell(&e.hostname),
            cell(&e.kernel),
            e.iface.as_deref().unwrap_or("-"),
            e.mtu.map_or_else(|| "-".into(), |m| m.to_string()),
            e.offloads
        );
    }
    if !d.environment.sysctls.is_empty() {
        o.push_str("\n| sysctl (client host) | value |\n|---|---|\n");
        for (k, v) in &d.environment.sysctls {
            let _ = writeln!(o, "| {k} | {} |", cell(v));
        }
    }
}
