//! Jumbo vs standard across the cluster, in words: per two networks of different
//! MTUs, the same node pairs' block p50, p99 and blocks/s on each (medians over the
//! pairs) and the change with its 95% interval, paired by node pair.

use std::fmt::Write as _;

use mtuperf_engine::mesh::{MtuComparison, Paired};

use super::rac::thousands;
use super::words::Say;
use super::Document;
use crate::compare::fmt_rel;
use crate::fmt::latency_ns;
use crate::html::esc;

/// "net B (1500)".
fn side(say: &Say<'_>, d: &Document, ni: usize) -> String {
    let mtu = d.result.networks.get(ni).map_or(0, |n| n.expect);
    format!("net {} ({mtu})", say.net_label(ni))
}

/// A figure's name, comparison and how its values read.
type Fig<'a> = (&'static str, Option<&'a Paired>, fn(f64) -> String);

/// The figures of one comparison: (name, standard, jumbo, change), or none.
fn rows(c: &MtuComparison) -> Vec<(&'static str, String, String, String)> {
    let figs: [Fig<'_>; 3] = [
        ("block p50", c.p50_ns.as_ref(), latency_ns),
        ("block p99", c.p99_ns.as_ref(), latency_ns),
        ("blocks/s", c.blocks_per_s.as_ref(), |x| {
            thousands(x.round() as u64)
        }),
    ];
    figs.into_iter()
        .filter_map(|(name, p, f)| {
            let p = p?;
            Some((
                name,
                f(p.standard),
                f(p.jumbo),
                fmt_rel(p.rel, p.low, p.high, p.significant()),
            ))
        })
        .collect()
}

/// "6 node pairs; left out, no block answered on one: n3 asking n1, n3 asking n2;
/// lost blocks 4 → 0".
fn pairs_line(say: &Say<'_>, c: &MtuComparison) -> String {
    let mut s = format!(
        "{} node pair{}",
        c.pairs,
        if c.pairs == 1 { "" } else { "s" }
    );
    if !c.unanswered.is_empty() {
        let who: Vec<String> = c
            .unanswered
            .iter()
            .map(|&(a, b)| format!("{} asking {}", say.node(a), say.node(b)))
            .collect();
        let _ = write!(
            s,
            "; left out, no block answered on one network: {}",
            who.join(", ")
        );
    }
    let _ = write!(
        s,
        "; lost blocks {} → {}",
        thousands(c.lost_standard),
        thousands(c.lost_jumbo)
    );
    s
}

/// The text section, after the networks' grids.
pub fn text(o: &mut String, d: &Document, say: &Say<'_>) {
    let r = &d.result;
    if r.jumbo.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "\njumbo vs standard (the same node pairs' blocks on both networks: medians over the pairs, then the change with its 95% interval, paired by node pair):"
    );
    for c in &r.jumbo {
        let _ = writeln!(
            o,
            "  {} → {}: {}",
            side(say, d, c.standard),
            side(say, d, c.jumbo),
            pairs_line(say, c)
        );
        let rows = rows(c);
        if rows.is_empty() {
            let _ = writeln!(o, "    no pair answered blocks on both networks");
            continue;
        }
        let w1 = rows.iter().map(|x| x.1.chars().count()).max().unwrap_or(0);
        let w2 = rows.iter().map(|x| x.2.chars().count()).max().unwrap_or(0);
        for (name, a, b, change) in rows {
            let _ = writeln!(o, "    {name:<9}  {a:>w1$} → {b:<w2$}  {change}");
        }
    }
}

/// The HTML section: one table per comparison.
pub fn html(o: &mut String, d: &Document) {
    let r = &d.result;
    if r.jumbo.is_empty() {
        return;
    }
    let say = Say::new(d);
    o.push_str("<h2>Jumbo vs standard</h2>\n<p>The same node pairs' blocks on both networks: medians over the pairs, then the change with its 95% interval, paired by node pair.</p>\n");
    for c in &r.jumbo {
        let (a, b) = (side(&say, d, c.standard), side(&say, d, c.jumbo));
        let _ = writeln!(
            o,
            "<h3>{} → {}</h3><p>{}</p>",
            esc(&a),
            esc(&b),
            esc(&pairs_line(&say, c))
        );
        let rows = rows(c);
        if rows.is_empty() {
            o.push_str("<p>No pair answered blocks on both networks.</p>\n");
            continue;
        }
        let _ = writeln!(
            o,
            "<table><tr><th>figure</th><th>{}</th><th>{}</th><th>change</th></tr>",
            esc(&a),
            esc(&b)
        );
        for (name, x, y, change) in rows {
            let _ = writeln!(
                o,
                "<tr><td>{name}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&x),
                esc(&y),
                esc(&change)
            );
        }
        o.push_str("</table>\n");
    }
}
