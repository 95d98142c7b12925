//! `mtuperf report --since 7d`: the watch history as one HTML page. Per peer: the MTU
//! each direction carried at every check over time (a switch back at 1500 is a step
//! down; the reverse direction dashed, so it shows where it overlaps the forward one),
//! the rr probe's p50 and p99 over time (log axis), and a table of the checks where an
//! MTU changed.

use std::fmt::Write as _;

use super::{steps, Trend};
use crate::html::axis::Unit;
use crate::html::chart::{lines_svg, wrap, Frame, Line};
use crate::html::{head, table, when, CSS};

/// The x axis starts at the first stored point of the window (a week asked for, an
/// hour of data: the hour fills the chart).
fn start(t: &Trend) -> i64 {
    t.peers
        .values()
        .flat_map(|p| {
            p.mtu
                .iter()
                .map(|m| m.unix_ms)
                .chain(p.rr.iter().map(|r| r.unix_ms))
        })
        .min()
        .unwrap_or(t.since_unix_ms)
        .max(t.since_unix_ms)
}

/// The x axis unit: hours, or minutes for a window of data under two hours.
fn per_unit(t: &Trend) -> (f64, &'static str) {
    if t.until_unix_ms - start(t) < 2 * 3_600_000 {
        (60_000.0, "minutes")
    } else {
        (3_600_000.0, "hours")
    }
}

/// Time since the axis start, in the axis unit.
fn hours(t: &Trend, unix_ms: i64) -> f64 {
    (unix_ms - start(t)) as f64 / per_unit(t).0
}

/// A legend name that fits its pane: the peer without the default port.
fn short(peer: &str) -> &str {
    peer.strip_suffix(&format!(":{}", mtuperf_proto::DEFAULT_PORT))
        .unwrap_or(peer)
}

/// One line over time: the peer's colour, dashed for its second series.
struct Series {
    name: String,
    peer: usize,
    second: bool,
    pts: Vec<(f64, f64)>,
}

fn mtu_chart(t: &Trend) -> String {
    let mut series: Vec<Series> = Vec::new();
    let mut ymax: f64 = 1500.0;
    for (i, (peer, p)) in t.peers.iter().enumerate() {
        for (second, (d, pick)) in [
            (
                "fwd",
                (|m: &crate::watch::MtuPoint| m.forward) as fn(&_) -> _,
            ),
            ("rev", |m: &crate::watch::MtuPoint| m.reverse),
        ]
        .into_iter()
        .enumerate()
        {
            let pts: Vec<(f64, f64)> = p
                .mtu
                .iter()
                .filter_map(|m| pick(m).map(|v| (hours(t, m.unix_ms), f64::from(v))))
                .collect();
            ymax = pts.iter().map(|x| x.1).fold(ymax, f64::max);
            if !pts.is_empty() {
                series.push(Series {
                    name: format!("{} {d}", short(peer)),
                    peer: i,
                    second: second == 1,
                    pts,
                });
            }
        }
    }
    chart(
        t,
        &Axis {
            title: "path MTU per peer and direction",
            desc: "MTU, bytes",
            unit: Unit::Count,
            log: false,
        },
        0.0..ymax * 1.15,
        &series,
    )
}

fn rr_chart(t: &Trend) -> String {
    let mut series: Vec<Series> = Vec::new();
    let (mut ymin, mut ymax) = (f64::INFINITY, 1.0_f64);
    for (i, (peer, p)) in t.peers.iter().enumerate() {
        for (second, (q, pick)) in [
            ("p50", (|r: &crate::watch::RrPoint| r.p50_ns) as fn(&_) -> _),
            ("p99", |r: &crate::watch::RrPoint| r.p99_ns),
        ]
        .into_iter()
        .enumerate()
        {
            // A probe with no block answered has no latency: no point (listed under
            // the chart instead), never one at 0 µs.
            let pts: Vec<(f64, f64)> =
                p.rr.iter()
                    .filter_map(|r| Some((hours(t, r.unix_ms), pick(r)? as f64 / 1e3)))
                    .collect();
            ymax = pts.iter().map(|x| x.1).fold(ymax, f64::max);
            ymin = pts.iter().map(|x| x.1).fold(ymin, f64::min);
            if !pts.is_empty() {
                series.push(Series {
                    name: format!("{} {q}", short(peer)),
                    peer: i,
                    second: second == 1,
                    pts,
                });
            }
        }
    }
    let silent = unanswered(t);
    if series.is_empty() && silent.is_empty() {
        return "<p>No rr probes in this window (serve --watch-rr TIME adds one per check).</p>\n"
            .into();
    }
    let mut o = if series.is_empty() {
        String::new()
    } else {
        chart(
            t,
            &Axis {
                title: "rr probe latency per peer (8 KiB blocks)",
                desc: "round trip (log scale)",
                unit: Unit::Micros,
                log: true,
            },
            ymin.min(ymax) * 0.8..ymax * 1.25,
            &series,
        )
    };
    if !silent.is_empty() {
        let _ = writeln!(
            o,
            "<p><b>{} rr probe{} answered no block</b> (no latency, so no point above; every request lost):</p>",
            silent.len(),
            if silent.len() == 1 { "" } else { "s" }
        );
        table(&mut o, &["probe at", "peer", "requests sent"], &silent);
    }
    o
}

/// The probes that answered no block: (time, peer, requests sent), oldest first.
fn unanswered(t: &Trend) -> Vec<Vec<String>> {
    t.peers
        .iter()
        .flat_map(|(peer, p)| {
            p.rr.iter().filter(|r| r.p99_ns.is_none()).map(move |r| {
                vec![
                    crate::timestamp(r.unix_ms),
                    peer.clone(),
                    r.sent.to_string(),
                ]
            })
        })
        .collect()
}

/// A chart's title and y axis.
struct Axis<'a> {
    title: &'a str,
    desc: &'a str,
    unit: Unit,
    log: bool,
}

/// Series over time, two per peer (fwd/rev, p50/p99): each peer has its colour, its
/// second series is dashed.
fn chart(t: &Trend, y: &Axis<'_>, range: std::ops::Range<f64>, series: &[Series]) -> String {
    let span = hours(t, t.until_unix_ms).max(0.01);
    let x_desc = format!("{} since {}", per_unit(t).1, crate::timestamp(start(t)));
    let lines: Vec<Line<'_>> = series
        .iter()
        .map(|s| Line {
            color: s.peer,
            name: &s.name,
            pts: &s.pts,
            ring: None,
            labels: Vec::new(),
            dashed: s.second,
        })
        .collect();
    let frame = Frame {
        title: y.title,
        x: 0.0..span,
        log_x: false,
        y: range,
        log_y: y.log,
        x_desc: &x_desc,
        y_desc: y.desc,
        x_unit: Unit::Plain,
        y_unit: y.unit,
        dot: 3,
        stroke: 2,
    };
    let points = series.iter().map(|s| s.pts.len()).sum();
    wrap(&lines_svg(&frame, &lines), points, y.title)
}

/// "mtuperf watch trend of 10.0.9.2, 10.0.9.3: 2026-11-25 19:11:31 to 20:11:31 UTC".
fn title(t: &Trend) -> String {
    let peers: Vec<&str> = t.peers.keys().map(|p| short(p)).collect();
    let of = match peers.len() {
        0 => String::new(),
        1..=4 => format!(" of {}", peers.join(", ")),
        n => format!(" of {n} peers"),
    };
    let (from, to) = (
        when(&crate::timestamp(t.since_unix_ms)),
        when(&crate::timestamp(t.until_unix_ms)),
    );
    // "2026-11-25 19:11:31 to 20:11:31 UTC" within one day.
    let span = match (from.split_once(' '), to.split_once(' ')) {
        (Some((d1, t1)), Some((d2, t2))) if d1 == d2 => {
            format!("{d1} {} to {t2}", t1.trim_end_matches(" UTC"))
        }
        _ => format!("{from} to {to}"),
    };
    format!("mtuperf watch trend{of}: {span}")
}

/// The whole trend page.
pub fn html(t: &Trend) -> String {
    let mut o = head(CSS, &title(t));
    if t.peers.is_empty() {
        o.push_str("<p>No watch results in this window: run the agent with <code>serve --watch PEERS</code> and a history.</p>\n");
        o.push_str("</body></html>\n");
        return o;
    }
    o.push_str("<p>Each point is one watch check from this node (IP packet sizes that crossed the path, read as interface MTUs; rr round trips on this node's clock). Failed checks (peer unreachable or not keyed) are not stored: they show in the agent's metrics.</p>\n");
    peers_table(&mut o, t);
    o.push_str("<div class=\"charts\">\n");
    o.push_str(&mtu_chart(t));
    o.push_str(&rr_chart(t));
    o.push_str("</div>\n");
    changes_table(&mut o, t);
    o.push_str("</body></html>\n");
    o
}

/// One row per peer: its checks, the last one's MTUs, its rr probes.
fn peers_table(o: &mut String, t: &Trend) {
    let rows: Vec<Vec<String>> = t
        .peers
        .iter()
        .map(|(peer, p)| {
            let last = p.mtu.last();
            vec![
                peer.clone(),
                p.mtu.len().to_string(),
                p.mtu.iter().filter(|m| !m.ok).count().to_string(),
                last.map_or(
                    "-".into(),
                    |m| if m.ok { "ok".into() } else { "NOT ok".into() },
                ),
                last.and_then(|m| m.forward)
                    .map_or("-".into(), |v| v.to_string()),
                last.and_then(|m| m.reverse)
                    .map_or("-".into(), |v| v.to_string()),
                last.map_or("-".into(), |m| m.expect.to_string()),
                p.rr.len().to_string(),
                p.rr.iter()
                    .filter(|r| r.p99_ns.is_none())
                    .count()
                    .to_string(),
            ]
        })
        .collect();
    table(
        o,
        &[
            "peer",
            "checks",
            "not ok",
            "last",
            "last forward MTU",
            "last reverse MTU",
            "expected",
            "rr probes",
            "rr probes with no answer",
        ],
        &rows,
    );
}

/// Every MTU that changed between consecutive checks of a peer.
fn changes_table(o: &mut String, t: &Trend) {
    let changes: Vec<Vec<String>> = t
        .peers
        .iter()
        .flat_map(|(peer, p)| {
            steps(&p.mtu).into_iter().map(move |(at, d, a, b)| {
                let s = |v: Option<u32>| v.map_or("-".into(), |v| v.to_string());
                vec![
                    crate::timestamp(at),
                    peer.clone(),
                    d.to_string(),
                    s(a),
                    s(b),
                ]
            })
        })
        .collect();
    o.push_str("<h2>MTU changes</h2>\n");
    if changes.is_empty() {
        o.push_str("<p>No MTU changed between consecutive checks in this window.</p>\n");
    } else {
        table(
            o,
            &["check at", "peer", "direction", "MTU before", "MTU after"],
            &changes,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::{MtuPoint, PeerTrend, RrPoint};

    const T0: i64 = 1_764_097_891_000;
    const MIN: i64 = 60_000;

    fn rr(at: i64, p: Option<(u64, u64)>, sent: u64) -> RrPoint {
        RrPoint {
            unix_ms: T0 + at * MIN,
            p50_ns: p.map(|x| x.0),
            p99_ns: p.map(|x| x.1),
            lost: if p.is_some() { 0 } else { sent },
            sent,
        }
    }

    fn trend(rr: Vec<RrPoint>) -> Trend {
        let mtu = (0..3)
            .map(|i| MtuPoint {
                unix_ms: T0 + i * MIN,
                forward: Some(9000),
                reverse: Some(9000),
                expect: 9000,
                ok: true,
            })
            .collect();
        let mut peers = std::collections::BTreeMap::new();
        peers.insert("10.0.9.2:7878".to_string(), PeerTrend { mtu, rr });
        Trend {
            since_unix_ms: T0,
            until_unix_ms: T0 + 3 * MIN,
            peers,
        }
    }

    /// The `data-points` of the chart captioned `caption` (None: no such chart).
    fn points(html: &str, caption: &str) -> Option<usize> {
        html.split("<figure")
            .find(|f| f.contains(&format!("<figcaption>{caption}</figcaption>")))
            .and_then(|f| f.split("data-points=\"").nth(1))
            .and_then(|s| s.split('"').next())
            .and_then(|n| n.parse().ok())
    }

    const RR_CHART: &str = "rr probe latency per peer (8 KiB blocks)";

    /// Issue 29: a probe that got no block back was plotted at 0 µs, under every
    /// real one. It has no point (two answered probes: p50 and p99 each, four
    /// points), and it is listed under the chart with its time and requests.
    #[test]
    fn a_probe_with_no_answer_has_no_point_and_is_listed() {
        let t = trend(vec![
            rr(0, Some((80_000, 120_000)), 20),
            rr(1, None, 18),
            rr(2, Some((90_000, 150_000)), 20),
        ]);
        let html = html(&t);
        assert_eq!(points(&html, RR_CHART), Some(4), "{html}");
        assert!(
            html.contains("<b>1 rr probe answered no block</b> (no latency, so no point above; every request lost)"),
            "{html}"
        );
        let row = format!(
            "<tr><td class=\"l\">{}</td><td>10.0.9.2:7878</td><td>18</td></tr>",
            crate::timestamp(T0 + MIN)
        );
        assert!(html.contains(&row), "{row} in {html}");
        // The summary's last column counts it.
        assert!(html.contains("<td>3</td><td>1</td></tr>"), "{html}");
        // The MTU chart is untouched: three checks, two directions.
        assert_eq!(points(&html, "path MTU per peer and direction"), Some(6));
    }

    /// Every probe unanswered: no latency chart at all (never a line at 0 µs), the
    /// list of probes instead.
    #[test]
    fn only_unanswered_probes_draw_no_latency_chart() {
        let t = trend(vec![rr(0, None, 20), rr(1, None, 19)]);
        let html = html(&t);
        assert_eq!(points(&html, RR_CHART), None, "{html}");
        assert!(
            html.contains("<b>2 rr probes answered no block</b>"),
            "{html}"
        );
        assert!(!html.contains("No rr probes in this window"), "{html}");
        // No probe at all: that is said instead.
        let html = super::html(&trend(Vec::new()));
        assert!(html.contains("No rr probes in this window"), "{html}");
        assert!(!html.contains("answered no block"), "{html}");
    }
}
