//! The lines of an `rr --from` step: one per client host (its share, throughput,
//! latency, its accounting and what the target served it), then the total.

use std::fmt::Write as _;

use mtuperf_engine::rr::{RrFromHost, RrResult};

use super::metrics::end_figures;
use crate::fmt::latency_ns as lat;

/// "sent S = answered A + lost L + unanswered U" and whether it holds.
fn accounting(sent: u64, answered: u64, lost: u64, unanswered: u64) -> String {
    let ok = sent == answered + lost + unanswered;
    format!(
        "sent {sent} {} answered {answered} + lost {lost} + unanswered {unanswered}{}",
        if ok { "=" } else { "≠" },
        if ok {
            ""
        } else {
            " (requests unaccounted for)"
        }
    )
}

fn host_line(out: &mut String, h: &RrFromHost) {
    let (s, q) = (&h.result, &h.result.requester);
    let c = &q.counts;
    let f = end_figures(&s.before, &s.after, s.iface.as_ref(), c.blocks, q.cpu);
    let _ = writeln!(
        out,
        "  from {} ({}): {} client{}, {:.0} blocks/s in {:.2} s, p50 {}, p99 {}",
        h.agent,
        s.host.hostname,
        h.clients,
        if h.clients == 1 { "" } else { "s" },
        h.blocks_per_s,
        q.wall_ns as f64 / 1e9,
        lat(q.latency.p50 as f64),
        lat(q.latency.p99 as f64)
    );
    let _ = writeln!(
        out,
        "       {}; the target served its session {} of {} requests; host CPU {}, mtuperf's {} thread{} busy {}",
        accounting(c.requests_sent, c.blocks, c.lost, q.unanswered),
        s.served.responses,
        s.served.requests,
        f.cpu_pct.map_or_else(|| "-".into(), |p| format!("{p:.1}%")),
        q.threads,
        if q.threads == 1 { "" } else { "s" },
        f.tool_cpu_pct.map_or_else(|| "-".into(), |p| format!("{p:.0}%")),
    );
    if let Some(why) = &s.interrupted {
        let _ = writeln!(out, "       (interrupted: {why})");
    }
}

/// Per-host lines and the total of an `rr --from` step.
pub fn host_lines(out: &mut String, r: &RrResult) {
    for h in &r.from {
        host_line(out, h);
    }
    let c = &r.client.counts;
    let n = r.from.len();
    let _ = writeln!(
        out,
        "  total of {n} host{}: {:.0} blocks/s (summed), {} blocks in the merged histogram; {}",
        if n == 1 { "" } else { "s" },
        r.from.iter().map(|h| h.blocks_per_s).sum::<f64>(),
        r.client.latency.count,
        accounting(c.requests_sent, c.blocks, c.lost, r.client.unanswered)
    );
    let _ = writeln!(
        out,
        "  the target agent served {} responses to {} requests over the {n} hosts' sessions",
        r.agent.responses, r.agent.requests
    );
}
