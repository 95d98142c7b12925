//! The mesh as text: per network an N×N matrix (rows: from, columns: to), the load
//! figures when measured, a per-network summary, then the findings.

use std::fmt::Write as _;

use mtuperf_engine::mesh::{Cell, MeshNetwork, PairResult};

use super::Document;

/// Short tag of a cell verdict.
pub(crate) fn tag(verdict: &str) -> &'static str {
    match verdict {
        "ok" => "ok",
        "nic_mtu" => "NIC",
        "switch_port" => "PORT",
        "node_route" => "ROUTE",
        "network" => "NET",
        "asymmetric" => "ASYM",
        "limited" => "LIM",
        "error" => "ERR",
        _ => "?",
    }
}

/// "ok 9000", "PORT 1500|1500", "ERR": the verdict, then the MTU each way
/// (from → to | to → from) when they differ or fail.
pub(crate) fn cell_text(c: &Cell) -> String {
    match (&c.forward, &c.reverse) {
        (Some(f), Some(r)) if c.verdict == "ok" && f.mtu == r.mtu => format!("ok {}", f.mtu),
        (Some(f), Some(r)) => format!("{} {}|{}", tag(&c.verdict), f.mtu, r.mtu),
        _ => tag(&c.verdict).to_string(),
    }
}

fn grid(o: &mut String, d: &Document, net: &MeshNetwork, f: &dyn Fn(usize, usize) -> String) {
    let labels: Vec<&str> = net.members.iter().map(|m| d.node(m.node)).collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    for a in &net.members {
        let mut row = vec![d.node(a.node).to_string()];
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
        .chain(labels.iter().map(|l| (*l).to_string()))
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

fn pair(d: &Document, net: usize, a: usize, b: usize) -> Option<&PairResult> {
    d.result
        .pairs
        .iter()
        .find(|p| p.net == net && p.from == a && p.to == b)
}

pub fn text(d: &Document) -> String {
    let r = &d.result;
    let mut o = String::new();
    let tests: Vec<String> = r
        .tests
        .iter()
        .map(|t| format!("{t:?}").to_lowercase())
        .collect();
    let _ = writeln!(
        o,
        "mesh: {}\ntests {}; {}; {:.1} s, started {}",
        d.headline,
        tests.join(", "),
        r.expect.map_or(
            "expect: the largest NIC MTU of each network".into(),
            |e| format!("expect {e}")
        ),
        r.elapsed_ms as f64 / 1000.0,
        d.started
    );
    for (ni, net) in r.networks.iter().enumerate() {
        let _ = writeln!(
            o,
            "\nnet {}  {}  expect {}  ({} nodes; cell: verdict, MTU from→to|to→from)",
            net.name,
            net.cidr,
            net.expect,
            net.members.len()
        );
        grid(&mut o, d, net, &|a, b| {
            r.cell(ni, a, b).map_or_else(|| "-".into(), cell_text)
        });
        let has = |f: &dyn Fn(&PairResult) -> bool| r.pairs.iter().any(|p| p.net == ni && f(p));
        if has(&|p| p.rr.is_some()) {
            let _ = writeln!(
                o,
                "  rr p50 (µs, 64-byte TCP transactions, measured on the row's node):"
            );
            grid(&mut o, d, net, &|a, b| {
                let p = pair(d, ni, a, b);
                match p.and_then(|p| p.rr.as_ref()) {
                    Some(x) if x.interrupted.is_none() => format!("{:.0}", x.p50_ns as f64 / 1e3),
                    _ if p.is_some_and(|p| p.skipped.is_some()) => "skip".into(),
                    _ => "-".into(),
                }
            });
        }
        if has(&|p| p.stream.is_some()) {
            let _ = writeln!(o, "  stream goodput (Mbit/s, one TCP stream row → column, received on the column's node):");
            grid(&mut o, d, net, &|a, b| {
                let p = pair(d, ni, a, b);
                match p.and_then(|p| p.stream.as_ref()) {
                    Some(s) if s.wall_ns > 0 && s.interrupted.is_none() => {
                        format!("{:.0}", s.bytes as f64 * 8e3 / s.wall_ns as f64)
                    }
                    _ if p.is_some_and(|p| p.skipped.is_some()) => "skip".into(),
                    _ => "-".into(),
                }
            });
        }
        let dirs: Vec<bool> = r
            .cells
            .iter()
            .filter(|c| c.net == ni)
            .flat_map(|c| [c.forward.as_ref(), c.reverse.as_ref()])
            .flatten()
            .map(|x| x.ok)
            .collect();
        let errors = r
            .cells
            .iter()
            .filter(|c| c.net == ni && c.verdict == "error")
            .count();
        let skipped = r
            .pairs
            .iter()
            .filter(|p| p.net == ni && p.skipped.is_some())
            .count();
        if skipped > 0 {
            let _ = writeln!(
                o,
                "  skip: rr and stream not run on {skipped} pairs whose path is short of {} (TCP would stall)",
                net.expect
            );
        }
        let _ = writeln!(
            o,
            "  {} of {} directions measured carry {}{}",
            dirs.iter().filter(|&&x| x).count(),
            dirs.len(),
            net.expect,
            if errors > 0 {
                format!("; {errors} tests failed")
            } else {
                String::new()
            }
        );
    }
    if r.findings.is_empty() {
        let _ = writeln!(o, "\nno findings");
    } else {
        let _ = writeln!(o, "\nfindings ({}):", r.findings.len());
        for (i, f) in r.findings.iter().enumerate() {
            let _ = writeln!(o, "  {}. {}", i + 1, f.summary);
            let _ = writeln!(o, "     evidence: {}", f.evidence);
            let _ = writeln!(o, "     next: {}", f.next);
        }
    }
    o
}
