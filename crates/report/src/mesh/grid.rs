//! The N x N grid every mesh matrix is printed as (path cells, block latencies,
//! blocks/s): one row per asking node, one column per answering node.

use std::fmt::Write;

use mtuperf_engine::mesh::MeshNetwork;

use super::words::Say;

pub(crate) fn grid(
    o: &mut String,
    say: &Say<'_>,
    net: &MeshNetwork,
    f: &dyn Fn(usize, usize) -> String,
) {
    let labels: Vec<String> = net.members.iter().map(|m| say.node(m.node)).collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for (a, label) in net.members.iter().zip(&labels) {
        let mut row = vec![label.clone()];
        for b in &net.members {
            row.push(if a.node == b.node {
                "·".into()
            } else {
                f(a.node, b.node)
            });
        }
        rows.push(row);
    }
    let head: Vec<String> = std::iter::once("from ↓ to →".to_string())
        .chain(labels.iter().cloned())
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |s| s.chars().count()))
            .chain(std::iter::once(
                head.get(i).map_or(0, |s| s.chars().count()),
            ))
            .max()
            .unwrap_or(0)
            + 2
    };
    let widths: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |o: &mut String, r: &[String]| {
        o.push_str("  ");
        for (s, w) in r.iter().zip(&widths) {
            let _ = write!(o, "{s:<w$}");
        }
        let trimmed = o.trim_end().len();
        o.truncate(trimmed);
        o.push('\n');
    };
    line(o, &head);
    for r in &rows {
        line(o, r);
    }
}
