//! Human text for rr runs and sweeps.

use std::fmt::Write as _;

use mtuperf_engine::rr::{RrInterval, RrResult};
use mtuperf_proto::host::{IfaceInfo, SnmpCounters};
use mtuperf_proto::msg::rr::RrProto;

use super::text_bidir::{direction_lines, DirView};
use super::{Direction, Document, EndFigures, StepDoc, Sweep};
use crate::fmt::{latency_ns as lat, latency_opt};

fn iface(i: Option<&IfaceInfo>) -> String {
    i.map_or_else(
        || "iface ?".into(),
        |i| format!("{}, MTU {}", i.name, i.mtu),
    )
}

fn proto(p: RrProto) -> &'static str {
    match p {
        RrProto::Udp => "udp",
        RrProto::Tcp => "tcp",
    }
}

/// "udp", or "udp bidir" when both ends requested and served.
fn mode(r: &RrResult) -> String {
    let bidir = if r.request.bidir.is_some() {
        " bidir"
    } else {
        ""
    };
    format!("{}{bidir}", proto(r.request.proto))
}

fn load(r: &RrResult) -> String {
    let q = &r.request;
    match q.rate {
        Some(rate) => format!(
            "open loop {rate} requests/s over {} client{}",
            q.clients,
            if q.clients == 1 { "" } else { "s" }
        ),
        None => format!(
            "{} closed-loop client{}",
            q.clients,
            if q.clients == 1 { "" } else { "s" }
        ),
    }
}

/// Header printed before the step's results.
pub fn header(r: &RrResult) -> String {
    let q = &r.request;
    format!(
        "mtuperf rr: {} ({}) → {} ({})\n  {}, block {} B, request {} B, {}, {} agent worker{}, {} client thread{}, {} s\n",
        r.local_addr,
        iface(r.client.iface.as_ref()),
        r.target,
        iface(r.agent.iface.as_ref()),
        mode(r),
        q.block,
        q.request,
        load(r),
        r.workers,
        if r.workers == 1 { "" } else { "s" },
        r.client.threads,
        if r.client.threads == 1 { "" } else { "s" },
        q.duration_ms as f64 / 1000.0
    )
}

pub fn interval_header() -> String {
    format!(
        "  {:>15}  {:>10}  {:>6}  {:>10}  {:>10}",
        "interval (s)", "blocks/s", "lost", "mean", "max"
    )
}

pub fn interval_line(s: &RrInterval) -> String {
    let secs = (s.end_ns.saturating_sub(s.start_ns)) as f64 / 1e9;
    let rate = if secs > 0.0 {
        s.blocks as f64 / secs
    } else {
        0.0
    };
    format!(
        "  {:>6.2} - {:>6.2}  {rate:>10.0}  {:>6}  {:>10}  {:>10}",
        s.start_ns as f64 / 1e9,
        s.end_ns as f64 / 1e9,
        s.lost,
        latency_opt(s.mean_ns),
        latency_opt(s.max_ns)
    )
}

fn snmp_line(s: &SnmpCounters) -> String {
    format!(
        "FragCreates {} ReasmReqds {} ReasmOKs {} ReasmFails {} UDP InErrors {} RcvbufErrors {}",
        s.ip_frag_creates,
        s.ip_reasm_reqds,
        s.ip_reasm_oks,
        s.ip_reasm_fails,
        s.udp_in_errors,
        s.udp_rcvbuf_errors
    )
}

fn opt_f(v: Option<f64>, prec: usize, unit: &str) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.prec$}{unit}"))
}

fn end_lines(out: &mut String, name: &str, e: &EndFigures, what: &str) {
    let _ = writeln!(
        out,
        "  {name:<6} CPU {} of the host ({} µs of CPU per block {what}); iface {} rx {} tx {} frames, {} frames per block{}",
        opt_f(e.cpu_pct, 1, "%"),
        opt_f(e.cpu_us_per_block, 1, ""),
        e.iface.as_deref().unwrap_or("?"),
        e.rx_frames.map_or_else(|| "-".into(), |v| v.to_string()),
        e.tx_frames.map_or_else(|| "-".into(), |v| v.to_string()),
        opt_f(e.frames_per_block, 2, ""),
        e.nic_util_pct
            .map_or_else(String::new, |u| format!(", NIC {u:.1}% of link speed"))
    );
    if let Some(r) = &e.cpu_resolution {
        let _ = writeln!(out, "         host CPU from /proc/stat: {}", r.text());
    }
    if let Some(t) = e.tool_threads {
        let _ = writeln!(
            out,
            "         mtuperf's own {t} thread{}: {} µs of CPU per block {what}, busy {} of their time",
            if t == 1 { "" } else { "s" },
            opt_f(e.tool_cpu_us_per_block, 1, ""),
            opt_f(e.tool_cpu_pct, 0, "%"),
        );
    }
    if let Some(s) = &e.snmp {
        let _ = writeln!(
            out,
            "         IP/UDP deltas (whole host): {}; {} fragments created per block",
            snmp_line(s),
            opt_f(e.frag_creates_per_block, 2, "")
        );
    }
}

/// The results of one step.
pub fn step_text(step: &StepDoc) -> String {
    let (r, m) = (&step.result, &step.metrics);
    let c = &r.client.counts;
    let mut out = String::new();
    if r.reverse.is_some() {
        let _ = writeln!(
            out,
            "  client → agent (the client requests, the agent serves):"
        );
    }
    let fwd = Direction {
        wall_s: m.wall_s,
        blocks_per_s: m.blocks_per_s,
        mib_per_s: m.mib_per_s,
        lost_pct: m.lost_pct,
        behind_mean_ms: m.behind_mean_ms,
    };
    direction_lines(
        &mut out,
        &DirView {
            requester: "client",
            responder: "agent",
            counts: c,
            latency: &r.client.latency,
            figures: &fwd,
            unanswered: r.client.unanswered,
            // An agent's report always has a wall time: zero means it never came.
            served: (r.agent.wall_ns > 0).then_some((
                r.agent.requests,
                r.agent.responses,
                r.agent.rejected,
            )),
        },
        r,
    );
    if !r.from.is_empty() {
        super::text_from::host_lines(&mut out, r);
    }
    if let (Some(v), Some(f)) = (&r.reverse, &m.reverse) {
        super::text_bidir::reverse_lines(&mut out, v, f, r);
    }
    let both = r.reverse.is_some();
    end_lines(
        &mut out,
        "client",
        &m.client,
        if both {
            "received + served"
        } else {
            "received"
        },
    );
    if r.agent.wall_ns > 0 {
        end_lines(
            &mut out,
            "agent",
            &m.agent,
            if both { "served + received" } else { "served" },
        );
    } else {
        let _ = writeln!(out, "  agent  unknown (the agent's report never came)");
    }
    notes_lines(&mut out, step);
    out
}

/// What follows a step's figures: where its threads ran, its warnings and errors, the
/// likely cause when it got nothing back, and why it was interrupted.
fn notes_lines(out: &mut String, step: &StepDoc) {
    let (r, m) = (&step.result, &step.metrics);
    if let Some(l) = crate::placement::line(
        r.client.placement.as_ref(),
        r.agent.placement.as_ref(),
        step.placement.as_ref(),
    ) {
        let _ = writeln!(out, "{l}");
    }
    for w in &m.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
    for e in &r.client.errors {
        let _ = writeln!(out, "  error: {}", mtuperf_proto::text::escape_control(e));
    }
    if let Some(d) = &r.diagnosis {
        let _ = writeln!(out, "  {}", crate::explain::line(d, &r.target));
    }
    if r.interrupted {
        match crate::interrupt::words(&r.interrupted_by) {
            Some(why) => {
                let why = mtuperf_proto::text::escape_control(&why);
                let _ = writeln!(out, "  (interrupted: {why})");
            }
            None => {
                let _ = writeln!(out, "  (interrupted)");
            }
        }
    }
}

/// The sweep table with the knee and the maximum marked.
pub fn sweep_text(s: &Sweep) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n  {:>8}  {:>10}  {:>10}  {:>10}  {:>16}  {:>22}",
        "clients", "blocks/s", "p50", "p99", "agent CPU/block", "mtuperf CPU/block c/a"
    );
    for (i, p) in s.points.iter().enumerate() {
        let mut mark = String::new();
        if s.knee == Some(i) {
            mark.push_str("  <- knee");
        }
        if s.max_index == Some(i) {
            mark.push_str("  <- max throughput");
        }
        let tool = format!(
            "{} / {}",
            opt_f(p.client_tool_cpu_us_per_block, 1, ""),
            opt_f(p.agent_tool_cpu_us_per_block, 1, " µs")
        );
        let _ = writeln!(
            out,
            "  {:>8}  {:>10.0}  {:>10}  {:>10}  {:>16}  {tool:>22}{mark}",
            p.clients,
            p.blocks_per_s,
            latency_opt(p.p50_ns),
            latency_opt(p.p99_ns),
            opt_f(p.agent_cpu_us_per_block, 1, " µs")
        );
    }
    if s.points.iter().any(|p| p.p50_ns.is_none()) {
        let _ = writeln!(out, "  - : no block answered at that load, so no latency");
    }
    if s.knee.is_none() {
        let _ = writeln!(out, "  no knee found in this sweep");
    }
    let _ = writeln!(out, "  {}", s.knee_rule);
    out
}

/// One line for the history list.
pub fn headline(step: &StepDoc) -> String {
    let r = &step.result;
    let l = &r.client.latency;
    let latency = match (l.p50, l.p99) {
        (Some(p50), Some(p99)) => format!("p50 {}, p99 {}", lat(p50 as f64), lat(p99 as f64)),
        _ => "no block answered".to_string(),
    };
    format!(
        "rr {} {} B, {}: {:.0} blocks/s, {latency}",
        mode(r),
        r.request.block,
        load(r),
        step.metrics.blocks_per_s,
    )
}

/// The whole document as text (used by `show`).
pub fn text(doc: &Document) -> String {
    let mut out = String::new();
    for s in &doc.steps {
        out.push_str(&header(&s.result));
        out.push_str(&step_text(s));
    }
    if let Some(sw) = &doc.sweep {
        out.push_str(&sweep_text(sw));
    }
    out
}
