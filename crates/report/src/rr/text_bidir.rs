//! The lines one direction of an rr step prints (its requester's blocks, throughput,
//! latency and loss, with what its responder counted), and the reverse direction of
//! a `--bidir` step, the agent requesting from the client.

use std::fmt::Write as _;

use mtuperf_engine::rr::{Latency, RrBidirResult, RrCounts, RrResult};

use super::Direction;
use crate::fmt::latency_ns as lat;

/// One direction: who requested, who served, and what each counted.
pub struct DirView<'a> {
    pub requester: &'a str,
    pub responder: &'a str,
    pub counts: &'a RrCounts,
    pub latency: &'a Latency,
    pub figures: &'a Direction,
    pub unanswered: u64,
    /// The responder's (requests received, answered, datagrams rejected); None when
    /// its report never came.
    pub served: Option<(u64, u64, u64)>,
}

pub fn direction_lines(out: &mut String, d: &DirView<'_>, r: &RrResult) {
    let (c, l, f) = (d.counts, d.latency, d.figures);
    let (req, resp) = (d.requester, d.responder);
    let served = d.served.map_or_else(
        || format!("{resp}'s counts unknown: its report never came"),
        |(rx, ans, _)| format!("{resp} received {rx}, answered {ans}"),
    );
    let _ = writeln!(
        out,
        "  blocks: {} received by the {req}; requests sent {} ({served}) in {:.2} s",
        c.blocks, c.requests_sent, f.wall_s
    );
    let _ = writeln!(
        out,
        "  throughput: {:.0} blocks/s, {:.2} MiB/s of block bytes ({req}'s measured interval)",
        f.blocks_per_s, f.mib_per_s
    );
    let _ = writeln!(
        out,
        "  block latency (request {} → last byte of block, HDR histogram in ns, {} blocks):",
        if r.request.rate.is_some() {
            "due"
        } else {
            "sent"
        },
        l.count
    );
    let _ = writeln!(out, "    {}", latency_line(l));
    let at_end = if c.lost_at_end > 0 {
        format!("; {} of them still unanswered at the end", c.lost_at_end)
    } else {
        String::new()
    };
    let cut_off = if d.unanswered > 0 {
        format!(
            ", cut off unanswered by the stop {} (neither answered nor lost)",
            d.unanswered
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  loss: lost {} ({:.2}% of requests sent, timeout {}{at_end}), late {}, duplicate {}, out of order {}, corrupt {}{}, invalid {}{cut_off}; {resp} rejected {} datagrams",
        c.lost,
        f.lost_pct,
        lat(r.client.timeout_ns as f64),
        c.late,
        c.duplicate,
        c.out_of_order,
        c.corrupt,
        if r.client.verify { " (verified)" } else { " (not verified)" },
        c.invalid,
        d.served.map_or_else(|| "unknown".to_string(), |s| s.2.to_string())
    );
    if c.behind_sends > 0 {
        let _ = writeln!(
            out,
            "  warning: the {req} fell behind its schedule: {} sends more than 1 ms late (mean {:.2} ms, max {:.2} ms); the offered load was lower than asked; use fewer clients per core or a lower --rate",
            c.behind_sends,
            f.behind_mean_ms.unwrap_or(0.0),
            c.behind_max_ns as f64 / 1e6
        );
    }
}

/// "min 24.7 µs  mean 36.4 µs  p50 …", or that no block was answered (no latency: never
/// a row of zeros).
fn latency_line(l: &Latency) -> String {
    match (l.min, l.mean, l.p50, l.p90, l.p99, l.p999, l.max) {
        (Some(min), Some(mean), Some(p50), Some(p90), Some(p99), Some(p999), Some(max)) => {
            format!(
                "min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
                lat(min as f64),
                lat(mean),
                lat(p50 as f64),
                lat(p90 as f64),
                lat(p99 as f64),
                lat(p999 as f64),
                lat(max as f64)
            )
        }
        _ => "no block answered: no latency to show".into(),
    }
}

/// The agent → client direction of a `--bidir` step.
pub fn reverse_lines(out: &mut String, v: &RrBidirResult, f: &Direction, r: &RrResult) {
    let q = &v.requester;
    let _ = writeln!(
        out,
        "  agent → client (the agent requests, the client serves; measured on the agent, {} requester thread{}):",
        q.threads,
        if q.threads == 1 { "" } else { "s" }
    );
    direction_lines(
        out,
        &DirView {
            requester: "agent",
            responder: "client",
            counts: &q.counts,
            latency: &q.latency,
            figures: f,
            unanswered: q.unanswered,
            served: Some((
                v.responder.requests,
                v.responder.responses,
                v.responder.rejected,
            )),
        },
        r,
    );
    for e in &q.errors {
        let _ = writeln!(out, "  agent requester error: {e}");
    }
}
