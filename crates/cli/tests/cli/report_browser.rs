//! Every kind of `mtuperf report` (stream, UDP stream, rr, rr sweep, path, comparison,
//! watch trend, and mesh where a lab can be built) from real runs, opened in headless
//! Chromium 1400 px wide (and 700): nothing reaches past the page's width (no sideways
//! scrolling), and no text is under 11 px. Also what each report says: a title naming
//! the kind, the peer and the time; the table's words on the charts' axes; latency by
//! percentile on a log axis. Without Chromium the browser checks are skipped with the
//! reason printed (CI installs it: `.ci/run`).
use crate::agent_support;
use crate::inproc;
use crate::lab_support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::inproc::mtuperf_in;
use agent_support::AgentProc;

/// The page widths the reports are checked at: a desktop window, and a narrow one
/// (where a long line of the path report's details used to push the page sideways).
const WIDTHS: [u32; 2] = [1400, 700];

/// The marker around what the page script writes into the DOM.
const MARK: &str = "@@mtuperf-layout@@";

/// Appended to a copy of each report: lists every element reaching past the page's
/// width, the page's own overflow, every HTML element whose content overflows its box
/// sideways (a scrolling `pre` too), and every text under 11 px (computed, SVG text
/// included).
const PROBE: &str = r#"<script>
(function () {
  var W = document.documentElement.clientWidth, out = [];
  function name(e) {
    var t = (e.textContent || "").trim().slice(0, 40);
    return e.tagName.toLowerCase() + (e.className && e.className.baseVal === undefined ? "." + e.className : "") + " \"" + t + "\"";
  }
  if (document.documentElement.scrollWidth > W)
    out.push("OVERFLOW page scrollWidth " + document.documentElement.scrollWidth + " > " + W);
  var all = document.body.querySelectorAll("*");
  for (var i = 0; i < all.length; i++) {
    var e = all[i];
    if (e.tagName === "SCRIPT") continue;
    var r = e.getBoundingClientRect();
    if (r.right > W + 0.5) out.push("OVERFLOW " + name(e) + " right " + Math.round(r.right));
    if (e instanceof HTMLElement && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      out.push("OVERFLOW " + name(e) + " content " + e.scrollWidth + " in " + e.clientWidth);
    var own = false;
    for (var n = e.firstChild; n; n = n.nextSibling)
      if (n.nodeType === 3 && n.data.trim() !== "") own = true;
    var px = parseFloat(getComputedStyle(e).fontSize);
    if (own && px < 11) out.push("SMALL " + name(e) + " " + px + "px");
  }
  var p = document.createElement("pre");
  var mark = "@@mtuperf-" + "layout@@";
  p.textContent = mark + "\n" + out.join("\n") + "\n" + mark;
  document.body.appendChild(p);
})();
</script>"#;

/// A headless Chromium in PATH, or None with the reason printed.
fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| mtuperf_lab::env::tool_in_path(b));
    if found.is_none() {
        eprintln!("skipping the browser checks: no chromium in PATH (apt-get install chromium)");
    }
    found
}

/// Collects each frame's probe output into the host page, in frame order: a frame whose
/// probe wrote nothing reads as one problem, so a page that failed to load fails the check.
const HOST_SCRIPT: &str = r#"<script>
window.addEventListener("load", function () {
  var mark = "@@mtuperf-" + "layout@@";
  document.querySelectorAll("iframe").forEach(function (f) {
    var got = null, pres = f.contentDocument ? f.contentDocument.querySelectorAll("pre") : [];
    for (var i = 0; i < pres.length; i++)
      if (pres[i].textContent.indexOf(mark) === 0) got = pres[i].textContent;
    var p = document.createElement("pre");
    p.textContent = got || (mark + "\nNO LAYOUT: the page's probe did not run\n" + mark);
    document.body.appendChild(p);
  });
});
</script>"#;

/// One page to check: a name for messages, the report's HTML, the width to lay it out at.
struct Page<'a> {
    name: &'a str,
    html: &'a str,
    width: u32,
}

/// What the probe found in each page (one line per problem, "OVERFLOW …" or
/// "SMALL …"; empty when it reads well), in `pages`' order. One Chromium lays them all
/// out: each page is an iframe of its own width (its `srcdoc`, so the host page may read
/// what the frame's probe wrote), which is the viewport its layout and media queries see.
/// Starting Chromium costs about 2 s of CPU, so one launch instead of one per page.
fn layout_problems(browser: &str, dir: &Path, pages: &[Page]) -> Vec<Vec<String>> {
    let mut frames = String::new();
    for p in pages {
        let probed = match p.html.rfind("</body>") {
            Some(i) => format!("{}{PROBE}{}", &p.html[..i], &p.html[i..]),
            None => format!("{}{PROBE}", p.html),
        };
        let _ = write!(
            frames,
            "<iframe style=\"display:block;border:0;width:{}px;height:2000px\" srcdoc=\"{}\"></iframe>",
            p.width,
            mtuperf_report::html::esc(&probed)
        );
    }
    let host = dir.join("layout.probe.html");
    std::fs::write(
        &host,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\">{frames}{HOST_SCRIPT}</body></html>"
        ),
    )
    .unwrap();
    let widest = pages.iter().map(|p| p.width).max().unwrap_or(1400);
    let profile = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(browser);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg(format!("--window-size={widest},2000"))
    .arg("--dump-dom")
    .arg(format!("file://{}", host.display()));
    let out = lab_support::output_within(cmd, Duration::from_secs(90));
    let dom = String::from_utf8_lossy(&out.stdout);
    // The marker is split in both scripts' sources, so it appears only in the probes'
    // output: between the 1st and 2nd is page 0's, between the 3rd and 4th page 1's...
    let bodies: Vec<&str> = dom.split(MARK).skip(1).step_by(2).collect();
    assert_eq!(
        bodies.len(),
        pages.len(),
        "no layout from chromium for every page: {}",
        lab_support::text(&out)
    );
    bodies
        .iter()
        .map(|body| {
            body.lines()
                .map(|l| {
                    l.replace("&lt;", "<")
                        .replace("&gt;", ">")
                        .replace("&amp;", "&")
                })
                .filter(|l| !l.trim().is_empty())
                .collect()
        })
        .collect()
}

/// Runs mtuperf with the test's history; it must succeed.
fn ok(db: &Path, args: &[&str]) -> String {
    let out = mtuperf_in(db).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", inproc::text(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The report `args` select, written to DIR/NAME.html; its text.
fn report(db: &Path, dir: &Path, name: &str, args: &[&str]) -> (String, PathBuf) {
    let file = dir.join(format!("{name}.html"));
    let out = mtuperf_in(db)
        .arg("report")
        .args(args)
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "report {args:?}: {}",
        inproc::text(&out)
    );
    (std::fs::read_to_string(&file).unwrap(), file)
}

/// The text of the page's `<title>`.
fn title(html: &str) -> &str {
    html.split("<title>")
        .nth(1)
        .and_then(|t| t.split("</title>").next())
        .unwrap_or_default()
}

/// Every `font-size="…"` an SVG in `html` sets is at least 11 px (the browser check's
/// stand-in without a browser, and plotters' sizes are scaled when written).
fn svg_fonts_at_least_11(name: &str, html: &str) {
    for part in html.split("font-size=\"").skip(1) {
        let px: f64 = part.split('"').next().unwrap().parse().unwrap();
        assert!(px >= 11.0, "{name}: SVG text of {px} px");
    }
}

/// The watch history: an agent checking a second one every cycle, with rr probes,
/// until at least two checks are stored.
fn watch_history(db: &Path, dir: &Path) {
    let key = dir.join("key");
    ok(db, &["keygen", "-o", key.to_str().unwrap()]);
    let key = key.to_str().unwrap();
    let peer = AgentProc::start(&["--key-file", key]);
    let db_s = db.to_str().unwrap();
    let watcher = AgentProc::start(&[
        "--key-file",
        key,
        "--db",
        db_s,
        "--watch",
        &peer.target(),
        "--watch-every",
        "10s",
        "--watch-rr",
        "1s",
    ]);
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let h = ok(db, &["history", "--json"]);
        if h.matches("\"watch\"").count() >= 2 {
            break;
        }
        assert!(Instant::now() < until, "no watch runs stored: {h}");
        std::thread::sleep(Duration::from_millis(300));
    }
    drop(watcher);
}

/// A mesh run stored in `db`, from a three-node cluster lab (n3's NIC at 1500); false,
/// with the reason printed, when no lab can be built here.
fn mesh_run(db: &Path) -> bool {
    if let Some(why) = lab_support::skip_reason(false) {
        eprintln!("skipping the mesh report: {why}");
        return false;
    }
    let lab = lab_support::TestLab::up(&[
        "--scenario",
        "cluster",
        "--nodes",
        "3",
        "--nets",
        "1",
        "--fault",
        "nic-mtu=n3:1:1500",
    ]);
    let serve = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(serve.status.success(), "{}", lab_support::text(&serve));
    let db_s = db.to_str().unwrap();
    let argv = [
        lab_support::BIN,
        "--db",
        db_s,
        "mesh",
        "--net",
        "198.19.0.0/16",
        "--tests",
        "path",
        "n1=198.19.1.1",
        "n2=198.19.1.2",
        "n3=198.19.1.3",
    ];
    let out = lab.exec("n1", &argv);
    // A finding (n3's NIC) ends the mesh with 1; it is stored either way.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        lab_support::text(&out)
    );
    true
}

/// The id of the newest stored run of `kind`.
fn newest(db: &Path, kind: &str) -> String {
    let h: serde_json::Value =
        serde_json::from_str(&ok(db, &["history", "--json", "--kind", kind])).unwrap();
    h[0]["id"].as_i64().unwrap().to_string()
}

#[test]
fn every_report_kind_reads_well_in_a_browser() {
    let agent = AgentProc::start(&[]);
    let t = agent.target();
    let dir = tempfile::tempdir().unwrap();
    let (db, d) = (dir.path().join("h.db"), dir.path());
    let time = ["--time", "300ms"];
    ok(&db, &[&["stream", &t][..], &time].concat());
    ok(&db, &[&["stream", "--udp", &t][..], &time].concat());
    ok(&db, &[&["rr", &t][..], &time].concat());
    ok(&db, &[&["rr", &t, "--clients", "1,2"][..], &time].concat());
    ok(&db, &["path", &t]);
    let path = newest(&db, "path");
    let (one, two) = (format!("one={t}"), format!("two={t}"));
    let compare = [
        "compare",
        "--path",
        &one,
        "--path",
        &two,
        "--tests",
        "stream,rr",
    ];
    ok(
        &db,
        &[
            &compare[..],
            &["--time", "150ms", "--repeat", "2", "--force"],
        ]
        .concat(),
    );
    watch_history(&db, d);
    let has_mesh = mesh_run(&db);

    let (udp, rr) = (newest(&db, "udp"), "3".to_string());
    let mut reports = vec![
        (
            "stream",
            report(&db, d, "stream", &["1"]),
            format!("mtuperf stream to {t}: run 1, "),
        ),
        (
            "udp",
            report(&db, d, "udp", &[&udp]),
            format!("mtuperf UDP stream to {t}: run {udp}, "),
        ),
        (
            "rr",
            report(&db, d, "rr", &[&rr]),
            format!("mtuperf rr to {t}: run 3, "),
        ),
        (
            "sweep",
            report(&db, d, "sweep", &["4"]),
            format!("mtuperf rr sweep (1 and 2 clients) to {t}: runs 4 and 5, "),
        ),
        (
            "path",
            report(&db, d, "path", &[&path]),
            format!("mtuperf path to {t}: run {path}, "),
        ),
        (
            "compare",
            report(&db, d, "compare", &["--compare", "2"]),
            "mtuperf compare one vs two: group 2, ".to_string(),
        ),
        (
            "trend",
            report(&db, d, "trend", &["--since", "1h"]),
            "mtuperf watch trend of 127.0.0.1".into(),
        ),
    ];
    if has_mesh {
        let mesh = newest(&db, "mesh");
        reports.push((
            "mesh",
            report(&db, d, "mesh", &[&mesh]),
            format!("mtuperf mesh of n1, n2, n3: run {mesh}, "),
        ));
    }
    for (name, (html, _), want) in &reports {
        let got = title(html);
        assert!(
            got.starts_with(want.as_str()),
            "{name}: title {got:?}, want {want:?}…"
        );
        assert!(got.contains(" UTC"), "{name}: no time in {got:?}");
        assert!(!html.contains("No request/response (rr) runs"), "{name}");
        svg_fonts_at_least_11(name, html);
    }
    what_reports_say(&reports);

    let Some(browser) = chromium() else { return };
    let pages: Vec<Page> = reports
        .iter()
        .flat_map(|(name, (html, _), _)| {
            WIDTHS.map(|width| Page {
                name,
                html: html.as_str(),
                width,
            })
        })
        .collect();
    for (page, problems) in pages.iter().zip(layout_problems(browser, d, &pages)) {
        let (name, width) = (page.name, page.width);
        assert!(problems.is_empty(), "{name} at {width} px: {problems:#?}");
        eprintln!("{name}: no overflow, no text under 11 px at {width} px");
    }
}

/// Labels, axes and colours the reports share with their tables.
fn what_reports_say(reports: &[(&str, (String, PathBuf), String)]) {
    let html = |n: &str| &reports.iter().find(|r| r.0 == n).unwrap().1 .0;
    // The comparison names rr's frames per block on its chart's axis as in its table.
    let compare = html("compare");
    let rr_frames = "frames per block (client iface, both ways)";
    assert!(compare.contains(&format!("<td class=\"l\">rr 8K {rr_frames}</td>")));
    // plotters writes an SVG text's content on a line of its own.
    assert!(compare.contains(&format!("\n{rr_frames}\n</text>")), "axis");
    assert!(
        !compare.contains("frames per block (receiver)\n"),
        "the old axis"
    );
    // Latency by percentile: a log axis for latency, labelled at 1, 2, 5 × 10^k.
    for name in ["rr", "sweep", "compare"] {
        let h = html(name);
        assert!(h.contains("latency by percentile"), "{name}");
        assert!(
            h.contains("\nblock latency (log scale)\n</text>"),
            "{name}: log y axis"
        );
    }
    // A sweep of one path draws its loads side by side.
    assert!(html("sweep").contains("rr 8K, 1 and 2 clients: latency by percentile per load"));
    // One rr run: no one-point load charts, a table of values.
    let rr = html("rr");
    assert!(!rr.contains("vs blocks/s"), "a one-point load chart");
    assert!(rr.contains("<th>value</th>"));
    // UDP: loss per run.
    assert!(html("udp").contains("<h2>UDP loss</h2>"));
}

/// A page that overflows and has small text is caught: the check can fail.
#[test]
fn the_browser_check_catches_overflow_and_small_text() {
    let Some(browser) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(400);
    let page = format!(
        "<!DOCTYPE html><html><body><pre>{long}</pre><p style=\"font-size:8px\">tiny</p></body></html>"
    );
    let good = "<!DOCTYPE html><html><body><p>fits</p></body></html>";
    let pages = [
        Page {
            name: "good",
            html: good,
            width: WIDTHS[1],
        },
        Page {
            name: "bad",
            html: &page,
            width: WIDTHS[0],
        },
    ];
    let found = layout_problems(browser, dir.path(), &pages);
    assert!(found[0].is_empty(), "{:#?}", found[0]);
    let problems = &found[1];
    assert!(
        problems.iter().any(|p| p.starts_with("OVERFLOW page")),
        "{problems:#?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with("SMALL p")),
        "{problems:#?}"
    );
}

/// A doctor run stored (its exit code says what it found: 0 or 1).
fn doctor(db: &Path) {
    let out = mtuperf_in(db)
        .args(["doctor", "--sample", "0s"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        inproc::text(&out)
    );
}

/// `report --last` after a doctor run (which has no report): the newest run that has
/// one, saying on stderr which run it passed over; with nothing reportable, an error
/// that lists the kinds a report covers.
#[test]
fn report_last_takes_the_newest_reportable_run() {
    let agent = AgentProc::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("h.db");
    doctor(&db);
    let out = mtuperf_in(&db).args(["report", "--last"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("the newest run is run 1, a doctor run")
            && err.contains("a report covers stream, udp and rr runs"),
        "{err}"
    );
    ok(&db, &["path", &agent.target()]);
    doctor(&db);
    let out = mtuperf_in(&db).args(["report", "--last"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("run 3 (doctor) has no report; reporting run 2 (path)"),
        "{err}"
    );
    let html = String::from_utf8_lossy(&out.stdout);
    assert!(
        title(&html).starts_with("mtuperf path to "),
        "{}",
        title(&html)
    );
    // Picked by id, a doctor run is refused naming what can be reported.
    let out = mtuperf_in(&db).args(["report", "3"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("run 3 is a doctor run, which has no report; a report covers"),
        "{err}"
    );
}
