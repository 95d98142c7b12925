//! The mesh as text: per network an N×N matrix (rows: from, columns: to), the load
//! figures when measured, a per-network summary, then the findings.

use std::fmt::Write as _;

use mtuperf_engine::mesh::{Cell, CellVerdict, MeshNetwork, MeshTests, NotMeasured, PairResult};

use super::grid::grid;
use super::words::Say;
use super::Document;

/// Short tag of a cell verdict.
pub(crate) fn tag(v: CellVerdict) -> &'static str {
    match v {
        CellVerdict::Ok => "ok",
        CellVerdict::NicMtu => "NIC",
        CellVerdict::RouteMtu => "RTE",
        CellVerdict::SwitchPort => "PORT",
        CellVerdict::Network => "NET",
        CellVerdict::OneWayDrop => "1WAY",
        CellVerdict::InboundDrop => "IN",
        CellVerdict::OutboundDrop => "OUT",
        CellVerdict::SilentDrop => "DROP",
        CellVerdict::BlackHole => "BH",
        CellVerdict::RouterMtu => "RTR",
        CellVerdict::Limited => "LIM",
        CellVerdict::Disputed => "DISP",
        CellVerdict::Error => "ERR",
        CellVerdict::NotMeasured => "NM",
    }
}

/// "ok 9000", "PORT 1500|1500", "ERR": the verdict, then the MTU each way
/// (from → to | to → from) when they differ or fail.
pub(crate) fn cell_text(c: &Cell) -> String {
    match (&c.forward, &c.reverse) {
        (Some(f), Some(r)) if c.verdict == CellVerdict::Ok && f.mtu == r.mtu => {
            format!("ok {}", f.mtu)
        }
        (Some(f), Some(r)) => format!("{} {}|{}", tag(c.verdict), f.mtu, r.mtu),
        _ => tag(c.verdict).to_string(),
    }
}

/// Why a test was not measured, in a few words.
pub(crate) fn not_measured(say: &Say<'_>, why: NotMeasured) -> String {
    match why {
        NotMeasured::Interrupted => "interrupted".into(),
        NotMeasured::Deadline => "the run's deadline passed".into(),
        NotMeasured::NodeSilent { node } => format!("{} went silent", say.node(node)),
        NotMeasured::PathShort => "path short of the MTU".into(),
        NotMeasured::PathFailed => "path test failed".into(),
    }
}

/// A load test's cell: its figure, "skip" (path short or failed), "NM", "ERR".
fn load_cell(p: Option<&PairResult>, test: MeshTests, figure: Option<String>) -> String {
    let Some(p) = p else { return "-".into() };
    if let Some(f) = figure.filter(|_| p.failure(test).is_none()) {
        return f;
    }
    match p.not_measured(test) {
        Some(NotMeasured::PathShort | NotMeasured::PathFailed) => "skip".into(),
        Some(_) => "NM".into(),
        None if p.failure(test).is_some() => "ERR".into(),
        None => "-".into(),
    }
}

fn load_grids(o: &mut String, d: &Document, say: &Say<'_>, ni: usize, net: &MeshNetwork) {
    let r = &d.result;
    let has = |f: &dyn Fn(&PairResult) -> bool| r.pairs.iter().any(|p| p.net == ni && f(p));
    super::rac::grids(o, d, say, ni, net);
    if has(&|p| p.stream.is_some()) {
        let _ = writeln!(o, "  stream goodput (Mbit/s, one TCP stream row → column, received on the column's node):");
        grid(o, say, net, &|a, b| {
            let p = r.pair(ni, a, b);
            let fig = p
                .and_then(|p| p.stream.as_ref())
                .filter(|s| s.wall_ns > 0)
                .map(|s| format!("{:.0}", s.bytes as f64 * 8e3 / s.wall_ns as f64));
            load_cell(p, MeshTests::Stream, fig)
        });
    }
}

/// The network's closing lines: skipped load tests, pairs not measured, the count.
fn net_summary(o: &mut String, d: &Document, say: &Say<'_>, ni: usize, net: &MeshNetwork) {
    let r = &d.result;
    let on_net = || r.pairs.iter().filter(move |p| p.net == ni);
    for test in [MeshTests::Rr, MeshTests::Stream] {
        let skipped = on_net()
            .filter(|p| p.not_measured(test) == Some(NotMeasured::PathShort))
            .count();
        if skipped > 0 {
            let _ = writeln!(
                o,
                "  skip: {} not run on {skipped} pairs whose path is short of {} (TCP would stall)",
                super::words::test_label(test),
                net.expect
            );
        }
    }
    // A stopped run is said once, at the top.
    let mut why: Vec<(String, usize)> = Vec::new();
    let cut = |w: &NotMeasured| matches!(w, NotMeasured::Interrupted | NotMeasured::Deadline);
    for w in on_net()
        .filter_map(|p| p.not_measured(MeshTests::Path))
        .filter(|w| !cut(w))
    {
        let w = not_measured(say, w);
        match why.iter_mut().find(|x| x.0 == w) {
            Some(x) => x.1 += 1,
            None => why.push((w, 1)),
        }
    }
    if !why.is_empty() {
        let list: Vec<String> = why.iter().map(|(w, n)| format!("{w}: {n}")).collect();
        let n: usize = why.iter().map(|x| x.1).sum();
        let _ = writeln!(o, "  NM: {n} pairs not measured ({})", list.join(", "));
    }
    let dirs: Vec<bool> = r
        .cells
        .iter()
        .filter(|c| c.net == ni)
        .flat_map(|c| [c.forward.as_ref(), c.reverse.as_ref()])
        .flatten()
        .filter(|x| x.doubt.is_none())
        .map(|x| x.ok)
        .collect();
    let count = |v: CellVerdict| {
        r.cells
            .iter()
            .filter(|c| c.net == ni && c.verdict == v)
            .count()
    };
    let mut tail = String::new();
    if count(CellVerdict::Error) > 0 {
        let _ = write!(tail, "; {} tests failed", count(CellVerdict::Error));
    }
    if count(CellVerdict::Disputed) > 0 {
        let _ = write!(tail, "; {} cells disputed", count(CellVerdict::Disputed));
    }
    let _ = writeln!(
        o,
        "  {} of {} directions measured carry {}{tail}",
        dirs.iter().filter(|&&x| x).count(),
        dirs.len(),
        net.expect,
    );
}

/// "interrupted after 3.2 s: measured path 14 of 40 pairs; 26 pair tests not measured".
/// "45m 25s", "40s": a deadline to the second.
fn whole_secs(ms: u64) -> String {
    humantime::format_duration(std::time::Duration::from_secs(ms / 1000)).to_string()
}

pub(crate) fn stopped_line(d: &Document) -> Option<String> {
    let r = &d.result;
    let why = if r.interrupted {
        format!("interrupted after {:.1} s", r.elapsed_ms as f64 / 1000.0)
    } else if r.deadline_passed {
        format!("the run's deadline ({}) passed", whole_secs(r.deadline_ms))
    } else {
        return None;
    };
    let m: Vec<String> = super::measured(r)
        .iter()
        .map(|(t, m, of)| format!("{} {m} of {of} pairs", super::words::test_label(*t)))
        .collect();
    Some(format!(
        "{why}: measured {}; {} pair tests not measured (no finding is drawn from them)",
        m.join(", "),
        super::cut_short(r)
    ))
}

/// "expect 9000", "expect: the largest NIC MTU of each network", "expect 1500 on
/// 198.51.100.0/24, else 9000".
fn expect_words(r: &mtuperf_engine::mesh::MeshResult) -> String {
    let rest = r.expect.map_or_else(
        || "the largest NIC MTU of each network".to_string(),
        |e| e.to_string(),
    );
    if r.expect_nets.is_empty() {
        return match r.expect {
            Some(e) => format!("expect {e}"),
            None => format!("expect: {rest}"),
        };
    }
    let per: Vec<String> = r
        .expect_nets
        .iter()
        .map(|e| format!("{} on {}", e.mtu, e.net))
        .collect();
    format!("expect {}, else {rest}", per.join(", "))
}

pub fn text(d: &Document) -> String {
    let r = &d.result;
    let say = Say::new(d);
    let mut o = String::new();
    let _ = writeln!(o, "{}", say.answer(&d.answer));
    let tests: Vec<&str> = r
        .tests
        .iter()
        .map(|t| super::words::test_label(*t))
        .collect();
    let _ = writeln!(
        o,
        "mesh: {}\ntests {}; {}; {:.1} s of a {} deadline, started {}",
        d.headline,
        tests.join(", "),
        expect_words(r),
        r.elapsed_ms as f64 / 1000.0,
        whole_secs(r.deadline_ms),
        d.started
    );
    if let Some(line) = super::rac::block_line(d) {
        let _ = writeln!(o, "{line}");
    }
    if let Some(line) = stopped_line(d) {
        let _ = writeln!(o, "{line}");
    }
    super::rac::checks(&mut o, d, &say);
    for (ni, net) in r.networks.iter().enumerate() {
        let _ = writeln!(
            o,
            "\nnet {}  {}  expect {}  ({} nodes; cell: verdict, MTU from→to|to→from)",
            say.net_label(ni),
            net.cidr,
            net.expect,
            net.members.len()
        );
        if let Some(src) = super::rac::source(net) {
            let _ = writeln!(o, "  {src}");
        }
        grid(&mut o, &say, net, &|a, b| {
            r.cell(ni, a, b).map_or_else(|| "-".into(), cell_text)
        });
        load_grids(&mut o, d, &say, ni, net);
        net_summary(&mut o, d, &say, ni, net);
    }
    super::jumbo::text(&mut o, d, &say);
    super::rac::kernel(&mut o, d, &say);
    if r.findings.is_empty() {
        let _ = writeln!(o, "\nno findings");
    } else {
        let _ = writeln!(o, "\nfindings ({}):", r.findings.len());
        for (i, f) in r.findings.iter().enumerate() {
            let w = say.finding(f);
            let _ = writeln!(o, "  {}. {}", i + 1, w.summary);
            let _ = writeln!(o, "     evidence: {}", w.evidence);
            let _ = writeln!(o, "     next: {}", w.next);
        }
    }
    o
}
