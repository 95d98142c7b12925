//! The lines of an `rr --from` step: one per client host (its share, throughput,
//! latency, its accounting and what the target served it), one per host that failed
//! (its share and its error), then the total of the hosts that measured. Text a peer
//! sent (hostnames, reasons, errors) is escaped.

use std::fmt::Write as _;

use mtuperf_engine::rr::{RrFromFailed, RrFromHost, RrResult};
use mtuperf_proto::text::escape_control as esc;

use super::metrics::end_figures;
use crate::fmt::latency_opt;

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
        esc(&s.host.hostname),
        h.clients,
        if h.clients == 1 { "" } else { "s" },
        h.blocks_per_s,
        q.wall_ns as f64 / 1e9,
        latency_opt(q.latency.p50),
        latency_opt(q.latency.p99)
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
    if let Some(why) = crate::interrupt::words(&s.interrupted_by) {
        let _ = writeln!(out, "       (interrupted: {})", esc(&why));
    }
}

fn failed_line(out: &mut String, f: &RrFromFailed) {
    let _ = writeln!(
        out,
        "  from {}: FAILED, its {} client{} measured nothing (not in the totals): {}",
        f.agent,
        f.clients,
        if f.clients == 1 { "" } else { "s" },
        esc(&crate::refusal::failed(&f.error))
    );
}

/// Per-host lines and the total of an `rr --from` step.
pub fn host_lines(out: &mut String, r: &RrResult) {
    for h in &r.from {
        host_line(out, h);
    }
    for f in &r.from_failed {
        failed_line(out, f);
    }
    let c = &r.client.counts;
    let n = r.from.len();
    let of = if r.from_failed.is_empty() {
        String::new()
    } else {
        format!(" of {}", n + r.from_failed.len())
    };
    let _ =
        writeln!(
        out,
        "  total of {n}{of} host{}: {:.0} blocks/s (summed), {} blocks in the merged histogram; {}",
        if n + r.from_failed.len() == 1 { "" } else { "s" },
        r.from.iter().map(|h| h.blocks_per_s).sum::<f64>(),
        r.client.latency.count,
        accounting(c.requests_sent, c.blocks, c.lost, r.client.unanswered)
    );
    let _ = writeln!(
        out,
        "  the target agent served {} responses to {} requests over {}",
        r.agent.responses,
        r.agent.requests,
        if n == 1 {
            "the host's session".to_string()
        } else {
            format!("the {n} hosts' sessions")
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_host_is_one_line_with_its_error_escaped() {
        let mut out = String::new();
        failed_line(
            &mut out,
            &RrFromFailed {
                agent: "198.19.1.200".into(),
                clients: 1,
                rate: None,
                error: mtuperf_proto::failed::Failed::error(
                    "agent error: refused\nmtuperf: forged \x1b[2J",
                ),
            },
        );
        assert_eq!(
            out,
            "  from 198.19.1.200: FAILED, its 1 client measured nothing (not in the totals): agent error: refused\\nmtuperf: forged \\x1b[2J\n"
        );
        // The target's refusal, typed, in report's words (a peer's text escaped too).
        out.clear();
        failed_line(
            &mut out,
            &RrFromFailed {
                agent: "198.19.1.200".into(),
                clients: 2,
                rate: None,
                error: mtuperf_proto::failed::Failed::PeerRefused {
                    peer: "198.19.1.1:7878".into(),
                    refusal: mtuperf_proto::msg::Refusal::BadRequest {
                        detail: "x\x1b[2J".into(),
                    },
                },
            },
        );
        assert_eq!(
            out,
            "  from 198.19.1.200: FAILED, its 2 clients measured nothing (not in the totals): agent error: the peer agent 198.19.1.1:7878 refused: bad request: x\\x1b[2J\n"
        );
    }
}
