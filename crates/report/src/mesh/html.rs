//! The mesh as one self-contained HTML page in the style of perfSONAR's MaDDash: per
//! network a grid (rows: from, columns: to) whose cells are split into their two
//! directions (upper-left triangle: row → column; lower-right: column → row),
//! coloured by verdict (the Okabe–Ito palette: told apart with every common
//! colour-vision deficiency), with the details on hover; then the findings and
//! per-network summaries. Inline CSS and SVG, no scripts.

use std::fmt::Write as _;

use mtuperf_engine::mesh::{Cell, CellVerdict, DirCell, Doubt, MeshNetwork};
use mtuperf_proto::msg::mesh::StopKind;

use super::text::{cell_text, not_measured};
use super::words::Say;
use super::Document;
use crate::html::esc;

const CSS: &str = "body{font-family:system-ui,sans-serif;font-size:15px;margin:2em;max-width:1300px;color:#222}\
h1{font-size:1.6em;overflow-wrap:anywhere}\
.grid-wrap{max-width:100%;overflow-x:auto}\
table{border-collapse:collapse;margin:1em 0;max-width:100%}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;overflow-wrap:anywhere}\
th{background:#eee}table.grid td{padding:0;border:1px solid #fff}table.grid th{font-weight:normal;white-space:nowrap}\
table.grid th.col{writing-mode:vertical-rl;transform:rotate(180deg);height:6em}\
.legend span{display:inline-block;margin-right:1.2em}.legend i{display:inline-block;width:1em;height:1em;margin-right:.3em;vertical-align:middle}\
.ok{background:#eef6ee;padding:.6em;border-left:4px solid #009e73}.flag{background:#fbe9dd;padding:.6em;border-left:4px solid #d55e00}\
ol li{margin-bottom:.6em}.ev{color:#555;font-size:.92em}";

const CELL: u32 = 54;
/// The MTU labels in a cell, px.
const CELL_FONT: u32 = 12;
/// Not measured (the test failed, or the direction was not tested).
const GREY: &str = "#c8c8c8";

/// Colour of a verdict: the Okabe–Ito palette, one colour each (black for a disputed
/// measurement), grey for no measurement.
fn verdict_colour(v: CellVerdict) -> &'static str {
    match v {
        CellVerdict::Ok => "#009e73",
        CellVerdict::NicMtu | CellVerdict::RouteMtu => "#d55e00",
        CellVerdict::SwitchPort => "#e69f00",
        CellVerdict::Network => "#cc79a7",
        CellVerdict::OneWayDrop
        | CellVerdict::InboundDrop
        | CellVerdict::OutboundDrop
        | CellVerdict::SilentDrop => "#f0e442",
        CellVerdict::BlackHole | CellVerdict::RouterMtu => "#0072b2",
        CellVerdict::Limited => "#56b4e9",
        CellVerdict::Disputed => "#000000",
        CellVerdict::Error | CellVerdict::NotMeasured => GREY,
    }
}

/// The label colour that reads on `fill`: white on the dark blue and on black.
fn ink(fill: &str) -> &'static str {
    if matches!(fill, "#0072b2" | "#000000") {
        "#fff"
    } else {
        "#000"
    }
}

/// Colour of one direction: bluish green when it carries the network's MTU, else by
/// the finding that explains it (black when it was doubted).
fn colour(verdict: CellVerdict, d: Option<&DirCell>) -> &'static str {
    match d {
        None => GREY,
        Some(x) if x.doubt.is_some() => verdict_colour(CellVerdict::Disputed),
        Some(x) if x.ok => verdict_colour(CellVerdict::Ok),
        Some(_) => verdict_colour(verdict),
    }
}

const LEGEND: [(CellVerdict, &str); 10] = [
    (CellVerdict::Ok, "carries the network's MTU"),
    (CellVerdict::NicMtu, "a node's NIC (or route) MTU"),
    (CellVerdict::SwitchPort, "a switch port (silent, both ways)"),
    (CellVerdict::Network, "the whole network"),
    (
        CellVerdict::InboundDrop,
        "one way dropped, silently (at a node, or on a segment)",
    ),
    (
        CellVerdict::BlackHole,
        "a router: black hole or frag-needed",
    ),
    (CellVerdict::Limited, "falls short, unexplained"),
    (CellVerdict::Disputed, "disputed: refused as evidence"),
    (CellVerdict::Error, "test failed"),
    (CellVerdict::NotMeasured, "not measured"),
];

fn stop(s: StopKind) -> &'static str {
    match s {
        StopKind::Top => "reached the sender's NIC MTU",
        StopKind::Icmp => "larger sizes refused by ICMP frag-needed",
        StopKind::Local => "larger sizes refused by the sender",
        StopKind::Silent => "larger sizes vanish silently",
    }
}

fn dir_title(say: &Say<'_>, from: usize, to: usize, x: Option<&DirCell>, expect: u32) -> String {
    let (a, b) = (say.node(from), say.node(to));
    match x {
        None => format!("{a} → {b}: not measured"),
        Some(x) => format!(
            "{a} → {b}: carries {} ({}){}",
            x.mtu,
            stop(x.stop),
            match x.doubt {
                Some(Doubt::Implausible) => ", impossible: refused as evidence".to_string(),
                Some(Doubt::Disputed) => ", contradicted: refused as evidence".to_string(),
                None if x.ok => String::new(),
                None => format!(", below {expect}"),
            }
        ),
    }
}

/// A direction's MTU as the cell's label ("?" when not measured).
fn mtu(d: Option<&DirCell>) -> String {
    d.map_or_else(|| "?".into(), |x| x.mtu.to_string())
}

fn cell_svg(o: &mut String, d: &Document, net: &MeshNetwork, c: &Cell) {
    let say = Say::new(d);
    let f = dir_title(&say, c.from, c.to, c.forward.as_ref(), net.expect);
    let r = dir_title(&say, c.to, c.from, c.reverse.as_ref(), net.expect);
    let finding = [&c.forward, &c.reverse]
        .into_iter()
        .flatten()
        .find_map(|x| x.finding)
        .and_then(|i| d.result.findings.get(i))
        .map_or(String::new(), |x| format!("\n{}", say.finding(x).summary));
    let pair = d.result.pair(c.net, c.from, c.to);
    let load = pair.map(super::load_figures).unwrap_or_default();
    let load = if load.is_empty() {
        String::new()
    } else {
        format!(
            "\n{} → {}: {}",
            say.node(c.from),
            say.node(c.to),
            load.join(", ")
        )
    };
    let not = pair
        .and_then(|p| p.not_measured(mtuperf_engine::mesh::MeshTests::Path))
        .map_or(String::new(), |w| {
            format!("\nnot measured: {}", not_measured(&say, w))
        });
    let load = format!("{load}{not}");
    let title = format!(
        "net {}: {}\n{f}\n{r}{load}{finding}",
        net.name,
        cell_text(c)
    );
    let s = CELL;
    let fwd = colour(c.verdict, c.forward.as_ref());
    let rev = colour(c.verdict, c.reverse.as_ref());
    let _ = write!(
        o,
        "<td title=\"{}\"><svg width=\"{s}\" height=\"{s}\" xmlns=\"http://www.w3.org/2000/svg\">\
<polygon points=\"0,0 {s},0 0,{s}\" fill=\"{}\"><title>{}</title></polygon>\
<polygon points=\"{s},0 {s},{s} 0,{s}\" fill=\"{}\"><title>{}</title></polygon>\
<line x1=\"{s}\" y1=\"0\" x2=\"0\" y2=\"{s}\" stroke=\"#fff\" stroke-width=\"1.5\"/>\
<text x=\"2\" y=\"{top}\" font-size=\"{CELL_FONT}\" fill=\"{}\">{}</text>\
<text x=\"{}\" y=\"{}\" font-size=\"{CELL_FONT}\" text-anchor=\"end\" fill=\"{}\">{}</text></svg></td>",
        esc(&title),
        fwd,
        esc(&f),
        rev,
        esc(&r),
        ink(fwd),
        mtu(c.forward.as_ref()),
        s - 2,
        s - 3,
        ink(rev),
        mtu(c.reverse.as_ref()),
        top = CELL_FONT,
    );
}

fn grid(o: &mut String, d: &Document, ni: usize, net: &MeshNetwork) {
    let say = Say::new(d);
    o.push_str("<div class=\"grid-wrap\"><table class=\"grid\"><tr><th>from ↓ to →</th>");
    for m in &net.members {
        let _ = write!(o, "<th class=\"col\">{}</th>", esc(&say.node(m.node)));
    }
    o.push_str("</tr>\n");
    for a in &net.members {
        let _ = write!(
            o,
            "<tr><th>{} <small>{}</small></th>",
            esc(&say.node(a.node)),
            esc(&a.addr.to_string())
        );
        for b in &net.members {
            match d.result.cell(ni, a.node, b.node) {
                _ if a.node == b.node => o.push_str("<td style=\"background:#f4f4f4\"></td>"),
                Some(c) => cell_svg(o, d, net, c),
                None => {
                    let _ = write!(
                        o,
                        "<td title=\"not tested\" style=\"background:{GREY}\"></td>"
                    );
                }
            }
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table></div>\n");
}

fn summary(o: &mut String, d: &Document, ni: usize, net: &MeshNetwork) {
    o.push_str("<table><tr><th>node</th><th>address</th><th>interface</th><th>NIC MTU</th><th>directions out ok</th><th>directions in ok</th></tr>\n");
    for m in &net.members {
        let count = |out: bool| {
            let dirs: Vec<bool> = d
                .result
                .cells
                .iter()
                .filter(|c| c.net == ni)
                .filter_map(|c| {
                    if c.from == m.node {
                        if out {
                            c.forward.as_ref()
                        } else {
                            c.reverse.as_ref()
                        }
                    } else if c.to == m.node {
                        if out {
                            c.reverse.as_ref()
                        } else {
                            c.forward.as_ref()
                        }
                    } else {
                        None
                    }
                })
                .filter(|x| x.doubt.is_none())
                .map(|x| x.ok)
                .collect();
            format!("{} of {}", dirs.iter().filter(|&&x| x).count(), dirs.len())
        };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&Say::new(d).node(m.node)),
            esc(&m.addr.to_string()),
            esc(&m.iface),
            m.mtu,
            count(true),
            count(false)
        );
    }
    o.push_str("</table>\n");
}

/// The cluvfy-style checks: one row per check per network.
fn checks(o: &mut String, d: &Document) {
    if d.result.checks.is_empty() {
        return;
    }
    o.push_str("<h2>Checks</h2>\n<table><tr><th>network</th><th>check</th><th>status</th><th>why</th></tr>\n");
    for (net, name, status, why) in super::rac::check_rows(d, &Say::new(d)) {
        let colour = match status {
            "PASSED" => "#009e73",
            "FAILED" => "#d55e00",
            _ => "#555",
        };
        let _ = writeln!(
            o,
            "<tr><td>{}</td><td>{}</td><td style=\"color:{colour}\"><b>{status}</b></td><td>{}</td></tr>",
            esc(&net),
            esc(&name),
            esc(&why)
        );
    }
    o.push_str("</table>\n");
}

/// "mtuperf mesh of n1, n2, n3, n4: run 21, 2026-11-25 19:38:45 UTC".
fn title(d: &Document) -> String {
    let say = Say::new(d);
    let nodes: Vec<String> = (0..d.result.nodes.len()).map(|i| say.node(i)).collect();
    let of = match nodes.as_slice() {
        [] => String::new(),
        [first, .., last] if nodes.len() > 8 => {
            format!(" of {} nodes ({first} … {last})", nodes.len())
        }
        _ => format!(" of {}", nodes.join(", ")),
    };
    let run = d.run_id.map_or(String::new(), |id| format!("run {id}, "));
    format!("mtuperf mesh{of}: {run}{}", crate::html::when(&d.started))
}

/// The whole page.
pub fn html(d: &Document) -> String {
    let r = &d.result;
    let mut o = String::new();
    o.push_str(&crate::html::head(CSS, &title(d)));
    let cls = if d.ok { "ok" } else { "flag" };
    let _ = writeln!(
        o,
        "<p class=\"{cls}\"><b>{}</b></p><p>{}. Started {}, {:.1} s{}.</p>",
        esc(&Say::new(d).answer(&d.answer)),
        esc(&d.headline),
        esc(&d.started),
        r.elapsed_ms as f64 / 1000.0,
        d.run_id.map_or(String::new(), |id| format!(", run {id}"))
    );
    o.push_str("<p class=\"legend\">Each cell is one test, row → column: the upper-left triangle is row → column, the lower-right column → row. Hover for details. ");
    for (v, what) in LEGEND {
        let col = verdict_colour(v);
        let _ = write!(
            o,
            "<span><i style=\"background:{col}\"></i>{}</span>",
            esc(what)
        );
    }
    o.push_str("</p>\n");
    if let Some(line) = super::text::stopped_line(d) {
        let _ = writeln!(o, "<p class=\"flag\">{}</p>", esc(&line));
    }
    checks(&mut o, d);
    if !r.findings.is_empty() {
        let _ = writeln!(o, "<h2>Findings ({})</h2><ol>", r.findings.len());
        let say = Say::new(d);
        for f in &r.findings {
            let w = say.finding(f);
            let _ = writeln!(
                o,
                "<li><b>{}</b><br/><span class=\"ev\">evidence: {}<br/>next: {}</span></li>",
                esc(&w.summary),
                esc(&w.evidence),
                esc(&w.next)
            );
        }
        o.push_str("</ol>\n");
    }
    for (ni, net) in r.networks.iter().enumerate() {
        let _ = writeln!(
            o,
            "<h2>Net {} — {} (expect {})</h2>",
            esc(&Say::new(d).net_label(ni)),
            esc(&net.cidr.to_string()),
            net.expect
        );
        grid(&mut o, d, ni, net);
        summary(&mut o, d, ni, net);
    }
    super::jumbo::html(&mut o, d);
    let unreachable: Vec<String> = r
        .nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.error.is_some())
        .map(|(i, _)| Say::new(d).node(i))
        .collect();
    if !unreachable.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"flag\">Not reached: {}</p>",
            esc(&unreachable.join(", "))
        );
    }
    o.push_str("</body></html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rgb(hex: &str) -> (f64, f64, f64) {
        let c = |i: usize| f64::from(u8::from_str_radix(&hex[i..i + 2], 16).unwrap());
        (c(1), c(3), c(5))
    }

    /// Every legend entry has its own colour, far from the others (the two reds of
    /// a NIC's MTU and a limited pair used to be 40 apart), but for the two kinds of
    /// missing measurement, which share the grey.
    #[test]
    fn legend_colours_are_distinct() {
        let cols: Vec<&str> = LEGEND
            .iter()
            .filter(|(v, _)| *v != CellVerdict::NotMeasured)
            .map(|(v, _)| verdict_colour(*v))
            .collect();
        for (i, a) in cols.iter().enumerate() {
            for b in &cols[i + 1..] {
                let (x, y) = (rgb(a), rgb(b));
                let d = ((x.0 - y.0).powi(2) + (x.1 - y.1).powi(2) + (x.2 - y.2).powi(2)).sqrt();
                assert!(d > 60.0, "{a} and {b} are {d:.0} apart");
            }
        }
        assert_eq!(ink(verdict_colour(CellVerdict::Disputed)), "#fff");
    }
}
