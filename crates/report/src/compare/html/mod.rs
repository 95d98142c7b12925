//! The comparison's page (or stored runs picked by id): one self-contained HTML
//! report, inline CSS and inline SVG charts (plotters), no scripts, nothing fetched
//! from the network. Its sections: verdict, summary, UDP loss, charts (`charts`: each
//! figure per path; `rr`: the rr curves, CDFs and spectra), path checks, placement
//! (`placement`), environment.

mod charts;
mod placement;
mod rr;

pub use rr::knee_lines;

use std::fmt::Write as _;

use crate::compare::{cell_label, text::value, CompareDoc, Figure};
use crate::html::{esc, head, table, when, CSS};
use mtuperf_engine::compare::{TestKind, Verdict};
use rr::Load;

/// Stored runs picked by id, not a comparison: they have no plan of their own.
fn is_adhoc(d: &CompareDoc) -> bool {
    d.group_id.is_none() && d.plan.time_ms == 0
}

/// "1, 4 and 16"
fn and_list<S: AsRef<str>>(xs: &[S]) -> String {
    match xs {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [init @ .., last] => format!(
            "{} and {}",
            init.iter()
                .map(AsRef::as_ref)
                .collect::<Vec<_>>()
                .join(", "),
            last.as_ref()
        ),
    }
}

/// What was measured, for the title: "rr sweep (1, 4 and 16 clients)", "stream and
/// rr", "UDP stream".
fn kind_words(d: &CompareDoc) -> String {
    let mut clients = d.plan.clients.clone();
    clients.sort_unstable();
    let words: Vec<String> = d
        .plan
        .tests
        .iter()
        .map(|t| match t {
            TestKind::Rr if clients.len() > 1 => format!(
                "rr sweep ({} clients)",
                and_list(&clients.iter().map(ToString::to_string).collect::<Vec<_>>())
            ),
            TestKind::Udp => "UDP stream".into(),
            t => t.name().into(),
        })
        .collect();
    and_list(&words)
}

/// The report's title: what was measured, toward which peer, which runs, and when:
/// "mtuperf rr to 198.18.2.2: run 3, 2026-11-25 19:38:12 UTC",
/// "mtuperf compare std vs jumbo: group 2, 2026-11-25 19:38:25 UTC".
pub fn title(d: &CompareDoc) -> String {
    let paths = &d.plan.paths;
    let who = match paths.as_slice() {
        // Unnamed: "run7" for a stream run without a label, the target for rr.
        [p] if p.name == p.target
            || d.runs
                .iter()
                .any(|r| r.run_id.is_some_and(|id| p.name == format!("run{id}"))) =>
        {
            format!("to {}", p.target)
        }
        [p] => format!("{} to {}", p.name, p.target),
        _ => paths
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>()
            .join(" vs "),
    };
    let mut ids: Vec<i64> = d.runs.iter().filter_map(|r| r.run_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let which = match (d.group_id, ids.as_slice()) {
        (Some(g), _) => format!("group {g}"),
        (None, []) => "not stored".into(),
        (None, [one]) => format!("run {one}"),
        (None, [first, .., last]) if ids.len() > 6 => {
            format!("runs {first} to {last} ({} runs)", ids.len())
        }
        (None, _) => format!(
            "runs {}",
            and_list(&ids.iter().map(ToString::to_string).collect::<Vec<_>>())
        ),
    };
    let what = if is_adhoc(d) {
        kind_words(d)
    } else {
        "compare".into()
    };
    let started = d
        .runs
        .iter()
        .map(|r| r.started.as_str())
        .filter(|s| !s.is_empty())
        .min()
        .map_or(String::new(), |s| format!(", {}", when(s)));
    format!("mtuperf {what} {who}: {which}{started}")
}

/// The whole report as one HTML document.
pub fn html(d: &CompareDoc) -> String {
    let mut o = head(CSS, &title(d));
    let line = if is_adhoc(d) {
        stored_line(d)
    } else {
        crate::compare::text::plan_line(d)
    };
    let _ = writeln!(o, "<p class=\"run\">{}</p>", esc(line.trim()));
    for f in &d.flagged {
        let _ = writeln!(o, "<p class=\"flag\">Path <b>{}</b> failed its pre-check and was measured only because of --force: its figures do not describe a healthy path.</p>", esc(f));
    }
    if let Some(r) = &d.refused {
        let _ = writeln!(o, "<p class=\"flag\">Refused: {}</p>", esc(r));
    }
    let knees = rr::knee_lines(d);
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
    summary(&mut o, d);
    udp_loss(&mut o, d);
    charts(&mut o, d);
    checks(&mut o, d);
    o.push_str(&placement::section(d));
    environment(&mut o, d);
    o.push_str("</body></html>\n");
    o
}

/// The summary table: one row per figure and path, the figure named as the charts'
/// axes name it (one value per row when every figure was measured once; no path
/// column for one path).
fn summary(o: &mut String, d: &CompareDoc) {
    o.push_str("<h2>Summary</h2>\n");
    // One measurement per figure: its value, without statistics of one.
    let single = d.summaries.iter().all(|c| c.summary.n <= 1);
    let one_path = d.plan.paths.len() == 1;
    let rows: Vec<Vec<String>> = d
        .summaries
        .iter()
        .map(|c| {
            let m = &c.summary;
            let figure = format!(
                "{} {}",
                cell_label(c.test, c.block, c.clients),
                c.figure.measured(c.test)
            );
            let mut row = vec![figure];
            if !one_path {
                row.push(c.path.clone());
            }
            if single {
                row.push(value(c.figure, m.mean));
                return row;
            }
            row.extend([
                value(c.figure, m.mean),
                crate::fmt::ci(m),
                value(c.figure, m.median),
                value(c.figure, m.min),
                value(c.figure, m.max),
                m.n.to_string(),
            ]);
            row
        })
        .collect();
    let mut head = vec!["figure"];
    if !one_path {
        head.push("path");
    }
    if single {
        head.push("value");
    } else {
        head.extend(["mean", "95% CI", "median", "min", "max", "n"]);
    }
    table(o, &head, &rows);
}

/// UDP stream runs: each repetition's loss and the sender's fragments per datagram
/// (they have no figure of the comparison's).
fn udp_loss(o: &mut String, d: &CompareDoc) {
    let rows: Vec<Vec<String>> = d
        .runs
        .iter()
        .filter(|r| r.test == TestKind::Udp)
        .map(|r| {
            vec![
                r.run_id.map_or(String::new(), |id| format!("run {id}")),
                r.path.clone(),
                crate::compare::block_label(r.block),
                r.loss_pct.map_or("-".into(), |l| format!("{l:.3}%")),
                r.fragments_per_datagram
                    .map_or("-".into(), |f| format!("{f:.2}")),
            ]
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    o.push_str("<h2>UDP loss</h2>\n");
    table(
        o,
        &[
            "run",
            "path",
            "block",
            "datagrams lost",
            "IP fragments per datagram (sender)",
        ],
        &rows,
    );
}

/// Every chart with something to show (none for one run of one path: the summary
/// table holds its numbers).
fn charts(o: &mut String, d: &CompareDoc) {
    let mut c = String::new();
    for cell in d.plan.cells() {
        // One path has nothing to set its bars against: the summary table holds them.
        if d.plan.paths.len() > 1 {
            for f in Figure::ALL {
                c.push_str(&charts::bars(d, cell, f));
            }
        }
        c.push_str(&charts::rounds(d, cell));
    }
    if d.plan.tests.contains(&TestKind::Rr) {
        if d.plan.blocks.len() > 1 {
            c.push_str(&rr::by_block(d));
        }
        c.push_str(&rr::cpu(d));
        // One path swept over several loads: its loads side by side in one chart.
        let per_load = d.plan.paths.len() == 1 && d.plan.clients.len() > 1;
        for &b in &d.plan.blocks {
            c.push_str(&rr::curve(d, b));
            if per_load {
                c.push_str(&rr::cdf(d, b, Load::Each));
                c.push_str(&rr::spectrum(d, b, Load::Each));
                continue;
            }
            for &n in &d.plan.clients {
                c.push_str(&rr::cdf(d, b, Load::Clients(n)));
                c.push_str(&rr::spectrum(d, b, Load::Clients(n)));
            }
        }
    } else if !is_adhoc(d) {
        c.push_str("<p>No request/response (rr) test in this comparison: no latency-vs-throughput curves or latency CDFs.</p>\n");
    }
    if !c.is_empty() {
        let _ = write!(o, "<h2>Charts</h2>\n<div class=\"charts\">\n{c}</div>\n");
    }
}

/// The comparison's path checks.
fn checks(o: &mut String, d: &CompareDoc) {
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
                crate::compare::check_reason(c),
            ]
        })
        .collect();
    if !rows.is_empty() {
        o.push_str("<h2>Path checks</h2>\n");
        table(o, &["path", "target", "verdict", "reason"], &rows);
    }
}

/// Both ends' hosts and interfaces, and the client host's sysctls.
fn environment(o: &mut String, d: &CompareDoc) {
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
            o,
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
        table(o, &["sysctl (client host)", "value"], &rows);
    }
}

/// What a report of stored runs picked by id shows:
/// "stored runs 4, 5 and 6: rr to 127.0.0.1:7878; block 8K; 1, 4 and 16 clients"
pub fn stored_line(d: &CompareDoc) -> String {
    let mut ids: Vec<i64> = d.runs.iter().filter_map(|r| r.run_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
    let runs = if ids.len() == 1 { "run" } else { "runs" };
    let paths: Vec<String> = d
        .plan
        .paths
        .iter()
        .map(|p| {
            if p.name == p.target || p.name.starts_with("run") {
                p.target.clone()
            } else {
                format!("{} ({})", p.name, p.target)
            }
        })
        .collect();
    let mut paths_dedup = paths.clone();
    paths_dedup.dedup();
    let tests: Vec<&str> = d.plan.tests.iter().map(|t| t.name()).collect();
    let blocks: Vec<String> = d
        .plan
        .blocks
        .iter()
        .map(|b| crate::compare::block_label(*b))
        .collect();
    let mut clients = d.plan.clients.clone();
    clients.sort_unstable();
    let clients = if clients.len() > 1 {
        let c: Vec<String> = clients.iter().map(ToString::to_string).collect();
        format!("; {} clients", and_list(&c))
    } else {
        String::new()
    };
    format!(
        "stored {runs} {}: {} to {}; block{} {}{clients}",
        and_list(&ids),
        and_list(&tests),
        and_list(&paths_dedup),
        if blocks.len() == 1 { "" } else { "s" },
        blocks.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_people_write_them() {
        assert_eq!(when("2026-11-25T19:38:14Z"), "2026-11-25 19:38:14 UTC");
        assert_eq!(and_list(&["1", "4", "16"]), "1, 4 and 16");
        assert_eq!(and_list(&["1"]), "1");
    }
}
