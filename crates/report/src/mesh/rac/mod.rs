//! The RAC answer across the cluster, in words. Here: the block test's grids
//! (latency, blocks/s, lost blocks, fragments per block) and where a network came
//! from; beside it, `checks` (the cluvfy-style checks, why each passed or failed,
//! and a failed one as a finding) and `kernel` (each node's kernel counters over the
//! run, and the findings they raise: reassembly failures, receive-buffer drops, NIC
//! errors).

mod checks;
mod kernel;

pub(crate) use checks::check_rows;
pub use checks::checks;
pub use kernel::kernel;

use std::fmt::Write as _;

use mtuperf_engine::mesh::{
    MeshNetwork, MeshTests, NetSource, NotMeasured, PairResult, LOST_BLOCK_AFTER,
};
use mtuperf_proto::msg::mesh::RrSummary;
use mtuperf_proto::msg::rr::RrProto;
use mtuperf_proto::text::escape_control;

use super::grid::grid;
use super::words::Say;
use super::Document;

/// "1,204".
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "8 KiB", "1500 B".
fn size(b: u32) -> String {
    if b >= 1024 && b.is_multiple_of(1024) {
        format!("{} KiB", b / 1024)
    } else {
        format!("{b} B")
    }
}

/// "udp 8 KiB blocks for 128 B requests, one in flight per pair".
pub fn block_line(d: &Document) -> Option<String> {
    let b = d.result.block?;
    let proto = match b.proto {
        RrProto::Udp => "UDP",
        RrProto::Tcp => "TCP",
    };
    let load = b.rate.map_or_else(
        || "one in flight per pair".to_string(),
        |r| format!("{r} requests/s per pair, one in flight"),
    );
    Some(format!(
        "rr: {proto} {} blocks for {} requests, {load}; a block unanswered within {} ms is lost",
        size(b.block),
        size(b.request),
        LOST_BLOCK_AFTER.as_millis()
    ))
}

/// Blocks per second over the requester's measured phase.
pub fn blocks_per_s(r: &RrSummary) -> Option<f64> {
    (r.wall_ns > 0).then(|| r.counts.blocks as f64 * 1e9 / r.wall_ns as f64)
}

/// IP fragments the serving node created per block it served.
pub fn fragments_per_block(r: &RrSummary) -> Option<f64> {
    let f = r.fragments?;
    (r.served > 0).then(|| f as f64 / r.served as f64)
}

/// Whether the pair's path test found it short of the network's MTU.
fn short(p: &PairResult, expect: u32) -> bool {
    p.path
        .as_ref()
        .is_some_and(|s| s.forward.mtu < expect || s.reverse.mtu < expect)
}

/// A block test's cell: its figure, "*" when the path is short of the MTU, or why
/// there is none.
fn cell(p: Option<&PairResult>, expect: u32, fig: &dyn Fn(&RrSummary) -> String) -> String {
    let Some(p) = p else { return "-".into() };
    match (&p.rr, p.failure(MeshTests::Rr)) {
        (Some(r), None) => {
            let mark = if short(p, expect) { "*" } else { "" };
            format!("{}{mark}", fig(r))
        }
        (_, Some(_)) => "ERR".into(),
        (None, None) => match p.not_measured(MeshTests::Rr) {
            Some(NotMeasured::PathShort | NotMeasured::PathFailed) => "skip".into(),
            Some(_) => "NM".into(),
            None => "-".into(),
        },
    }
}

fn us(ns: Option<u64>) -> String {
    ns.map_or_else(|| "none".into(), |v| format!("{:.0}", v as f64 / 1e3))
}

/// The block test's grids of one network.
pub fn grids(o: &mut String, d: &Document, say: &Say<'_>, ni: usize, net: &MeshNetwork) {
    let r = &d.result;
    let on_net: Vec<&PairResult> = r.pairs.iter().filter(|p| p.net == ni).collect();
    if !on_net.iter().any(|p| p.rr.is_some()) {
        return;
    }
    let e = net.expect;
    let _ = writeln!(
        o,
        "  rr block latency p50/p99 (µs; the row's node asks, the column's node serves; none: no block answered):"
    );
    grid(o, say, net, &|a, b| {
        cell(r.pair(ni, a, b), e, &|x| {
            format!("{}/{}", us(x.p50_ns), us(x.p99_ns))
        })
    });
    let _ = writeln!(o, "  rr blocks/s, lost blocks:");
    grid(o, say, net, &|a, b| {
        cell(r.pair(ni, a, b), e, &|x| {
            format!(
                "{:.0} {}",
                blocks_per_s(x).unwrap_or(0.0),
                thousands(x.counts.lost)
            )
        })
    });
    let shorts = on_net
        .iter()
        .filter(|p| p.rr.is_some() && short(p, e))
        .count();
    if shorts > 0 {
        let _ = writeln!(
            o,
            "  *: {shorts} pairs whose path is short of {e}, measured all the same: their blocks cross it as IP fragments, or not at all"
        );
    }
    let frags: Vec<f64> = on_net
        .iter()
        .filter_map(|p| p.rr.as_ref().and_then(fragments_per_block))
        .collect();
    let lo = frags.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = frags.iter().copied().fold(0.0, f64::max);
    if !frags.is_empty() {
        let range = if (hi - lo).abs() < 0.05 {
            format!("{lo:.1}")
        } else {
            format!("{lo:.1} to {hi:.1}")
        };
        let _ = writeln!(
            o,
            "  fragments per block: {range} (IP fragments the serving node created per block it served; 0: one unfragmented datagram)"
        );
    }
}

/// A network's source, for its header: "oifcfg eth1 192.168.10.0", "HAIP on eth1".
pub fn source(net: &MeshNetwork) -> Option<String> {
    match &net.source {
        NetSource::Shared => None,
        NetSource::Oifcfg { iface, subnet } => Some(format!(
            "oifcfg: {} {subnet} cluster_interconnect",
            escape_control(iface)
        )),
        NetSource::Haip { iface } => Some(format!(
            "HAIP: link-local addresses on {}",
            escape_control(iface)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1204), "1,204");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
