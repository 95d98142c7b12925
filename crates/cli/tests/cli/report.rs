//! `mtuperf report` and `mtuperf export` on a real (loopback) comparison: the HTML is
//! well-formed, self-contained and holds every chart with data; Markdown and CSV rows.

use crate::agent_support;

use crate::inproc::mtuperf_in;
use agent_support::AgentProc;

/// The numbers of `attr="…"` in an SVG element's text.
fn num(el: &str, attr: &str) -> f64 {
    let key = format!(" {attr}=\"");
    let i = el.find(&key).unwrap_or_else(|| panic!("{attr} in {el}")) + key.len();
    el[i..].split('"').next().unwrap().parse().unwrap()
}

/// Every chart in `html`: has data, a title and tick labels, no Rust debug text or
/// "20000.0" ticks, and no legend box (found by its border colour) over a data point;
/// every legend box lies right of every point (outside the plot area). Load charts
/// label each point with its client count. Returns the number of charts.
fn check_charts(html: &str) -> usize {
    let charts: Vec<&str> = html.split("<figure class=\"chart\"").skip(1).collect();
    assert!(!charts.is_empty(), "no charts");
    for c in &charts {
        let body = &c[..c.find("</figure>").unwrap()];
        let caption = body.split("<figcaption>").nth(1).unwrap_or_default();
        let n: usize = body.split('"').nth(1).unwrap().parse().unwrap();
        assert!(n > 0, "chart without data: {caption}");
        let texts: Vec<&str> = body
            .split("<text")
            .skip(1)
            .map(|t| {
                t.split('>')
                    .nth(1)
                    .unwrap()
                    .split('<')
                    .next()
                    .unwrap()
                    .trim()
            })
            .collect();
        assert!(texts.len() >= 5, "no title or tick labels: {caption}");
        for t in &texts {
            assert!(!t.contains('['), "debug formatting {t:?} in {caption}");
            assert!(
                !(t.ends_with(".0") && t.len() > 3),
                "tick {t:?} in {caption}"
            );
        }
        let legends: Vec<[f64; 4]> = body
            .split("<rect")
            .skip(1)
            .filter(|r| r.contains("stroke=\"#5A5A5A\""))
            .map(|r| {
                let r = r.split("/>").next().unwrap();
                let (x, y) = (num(r, "x"), num(r, "y"));
                [x, y, x + num(r, "width"), y + num(r, "height")]
            })
            .collect();
        let points: Vec<(f64, f64)> = body
            .split("<circle")
            .skip(1)
            .map(|e| {
                let e = e.split("/>").next().unwrap();
                (num(e, "cx"), num(e, "cy"))
            })
            .collect();
        for l in &legends {
            for &(x, y) in &points {
                let inside = x >= l[0] && x <= l[2] && y >= l[1] && y <= l[3];
                assert!(!inside, "legend {l:?} covers point ({x}, {y}) in {caption}");
                assert!(
                    x < l[0],
                    "point ({x}, {y}) right of the legend in {caption}"
                );
            }
        }
        if caption.contains("vs blocks/s") {
            let labels = texts.iter().filter(|t| t.starts_with('×')).count();
            assert!(labels >= n, "{n} points, {labels} client labels: {caption}");
        }
    }
    charts.len()
}

/// Checks that every tag is closed in order (void elements must self-close, as the
/// renderer writes them) and that nothing is fetched from elsewhere.
fn well_formed(html: &str) -> Result<(), String> {
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        rest = &rest[start..];
        if rest.starts_with("<!--") {
            let end = rest.find("-->").ok_or("unclosed comment")?;
            rest = &rest[end + 3..];
            continue;
        }
        let end = rest.find('>').ok_or("unclosed tag")?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') || tag.starts_with('?') {
            continue;
        }
        if !tag.matches('"').count().is_multiple_of(2) {
            return Err(format!("unbalanced quotes in <{tag}>"));
        }
        if let Some(name) = tag.strip_prefix('/') {
            let open = stack
                .pop()
                .ok_or(format!("</{name}> without an open tag"))?;
            if open != name.trim() {
                return Err(format!("</{name}> closes <{open}>"));
            }
        } else if !tag.ends_with('/') {
            let name = tag
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            stack.push(name);
        }
    }
    if stack.is_empty() {
        Ok(())
    } else {
        Err(format!("unclosed: {stack:?}"))
    }
}

#[test]
fn checker_catches_bad_nesting() {
    assert!(well_formed("<a><b/></a>").is_ok());
    assert!(well_formed("<a><b></a></b>").is_err());
    assert!(well_formed("<a>").is_err());
    assert!(well_formed("<a x=\"1></a>").is_err());
}

#[test]
fn html_markdown_and_export_of_a_comparison() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let t = agent.target();
    let out = mtuperf_in(&db)
        .args([
            "compare",
            "--path",
            &format!("one={t}"),
            "--path",
            &format!("two={t}"),
        ])
        .args([
            "--tests",
            "stream,rr",
            "--clients",
            "1,2",
            "--block",
            "8K,16K",
            "--time",
            "150ms",
            "--repeat",
            "2",
            "--force",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let html_path = dir.path().join("r.html");
    let out = mtuperf_in(&db)
        .args(["report", "--compare", "1", "-o"])
        .arg(&html_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&html_path).unwrap();
    well_formed(&html).unwrap();
    assert!(!html.contains("<script"), "no scripts");
    assert!(
        !html.contains("src=\"http"),
        "nothing fetched from the network"
    );
    let charts: Vec<&str> = html.split("<figure class=\"chart\"").skip(1).collect();
    for c in &charts {
        let body = &c[..c.find("</figure>").unwrap()];
        let n: usize = body.split('"').nth(1).unwrap().parse().unwrap();
        assert!(n > 0, "chart without data");
        let marks = body.matches("<rect").count() + body.matches("<circle").count();
        assert!(marks >= n, "{n} points but {marks} marks drawn");
    }
    check_charts(&html);
    let with = |caption: &str| charts.iter().filter(|c| c.contains(caption)).count();
    assert_eq!(
        with("rr: p99 latency vs blocks/s per block size (8K, 16K)"),
        1
    );
    assert_eq!(with("rr: client CPU per block vs blocks/s"), 1);
    for b in ["8K", "16K"] {
        assert_eq!(
            with(&format!("stream {b}: mean goodput (received), 95% CI")),
            1
        );
        assert_eq!(with(&format!("stream {b}: goodput of each repetition")), 1);
        assert_eq!(with(&format!("rr {b}: p99 latency vs blocks/s")), 1);
        for c in ["1 client", "2 clients"] {
            assert_eq!(with(&format!("rr {b}, {c}: block latency CDF")), 1);
            assert_eq!(with(&format!("rr {b}, {c}: latency by percentile")), 1);
        }
        assert_eq!(with(&format!("rr {b}: mean p50 block latency, 95% CI")), 1);
        assert_eq!(
            with(&format!("rr {b} x2: mean p99 block latency, 95% CI")),
            1
        );
    }
    assert!(html.contains("one") && html.contains("two vs one"));
    // Summary rows name the client count, so x1 and x2 rows are told apart.
    assert!(
        html.contains("<td class=\"l\">rr 8K x2 p99 block latency</td>"),
        "summary rows without x2"
    );

    let out = mtuperf_in(&db)
        .args(["report", "--compare", "1", "--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("| stream 8K goodput | one |"), "{md}");
    assert!(md.contains("| rr 16K x2 blocks/s | two |"), "{md}");
    assert!(md.contains("### Verdict"));

    let out = mtuperf_in(&db).args(["export", "--csv"]).output().unwrap();
    let csv = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    // stream: 2 paths x 2 blocks x 2 repetitions; rr: the same for each of 2 client counts.
    assert_eq!(lines.len(), 1 + 8 + 16);
    let cols = lines[0].split(',').count();
    // Stream headlines hold no comma; rr headlines do and arrive quoted.
    assert!(lines
        .iter()
        .filter(|l| l.contains(",stream,"))
        .all(|l| l.split(',').count() == cols));
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.contains(",rr,") && l.contains("\"rr udp"))
            .count(),
        16
    );
    let out = mtuperf_in(&db)
        .args(["export", "--json", "1", "2"])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "mtuperf.export/1");
    assert_eq!(doc["runs"].as_array().unwrap().len(), 2);
    assert!(doc["runs"][0]["goodput_bps"].as_f64().unwrap() > 0.0);

    // Ad-hoc report of two stored runs, and --last (which belongs to the group).
    let out = mtuperf_in(&db)
        .args(["report", "1", "2", "--format", "md"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = mtuperf_in(&db).args(["report", "--last"]).output().unwrap();
    well_formed(&String::from_utf8(out.stdout).unwrap()).unwrap();
    let out = mtuperf_in(&db).args(["report", "999"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `report` for each kind of stored run: an rr load sweep (`--last`), two sweeps of
/// different block sizes in one chart, and a path run; every chart readable.
#[test]
fn reports_for_rr_sweeps_and_path_runs() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    let t = agent.target();
    for block in ["4K", "8K"] {
        let out = mtuperf_in(&db)
            .args(["rr", &t, "--clients", "1,2,4", "--time", "300ms"])
            .args(["--block", block])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let report = |args: &[&str]| {
        let out = mtuperf_in(&db).arg("report").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let html = String::from_utf8(out.stdout).unwrap();
        well_formed(&html).unwrap();
        html
    };
    // --last: the 8K sweep, all three steps (runs 4 to 6), one line for its target;
    // one path: its loads side by side in one CDF and one spectrum.
    let html = report(&["--last"]);
    assert!(
        check_charts(&html) >= 4,
        "load, CPU, CDF and spectrum per load"
    );
    assert!(html.contains("rr 8K: p99 latency vs blocks/s, 1, 2 and 4 clients"));
    assert!(html.contains("rr 8K, 1, 2 and 4 clients: latency by percentile per load"));
    assert!(!html.contains("per block size"), "one block size");
    assert!(
        html.contains("<p class=\"run\">stored runs 4, 5 and 6: rr to "),
        "what was picked"
    );
    assert!(html.contains(" rr 8K: knee at ") || html.contains(" rr 8K: no knee over these loads"));
    // rr-only: the Environment table has its rows (hosts of both ends).
    assert!(html.contains("<h2>Environment</h2>") && html.contains(" client</td>"));
    // One step of each sweep brings its sweep: both block sizes in one chart.
    let html = report(&["1", "4"]);
    check_charts(&html);
    assert!(html.contains("rr: p99 latency vs blocks/s per block size (4K, 8K)"));
    let out = mtuperf_in(&db).args(["path", &t]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = report(&["--last"]);
    assert_eq!(check_charts(&html), 1);
    assert!(html.contains("<h2>Searches</h2>") && html.contains("<td class=\"l\">reverse</td>"));
    // A path run mixed with others is refused with the way out.
    let out = mtuperf_in(&db).args(["report", "1", "7"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("report on it alone"));
}
