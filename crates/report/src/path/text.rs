//! A path run in words: its verdict lines with their fixes (the shared diagnosis's
//! words, the nodes named as this run sees them), and the human text of each mode.

use std::fmt::Write as _;
use std::net::IpAddr;

use mtuperf_engine::diagnosis::Diagnosis;
use mtuperf_engine::path::hops::HopsResult;
use mtuperf_engine::path::reading::udp_overhead;
use mtuperf_engine::path::{DirResult, Limit, LocalView, PathResult};

use super::{Document, Mode};
use crate::diagnosis::{self as words, Names, Scope};

/// "1500 = 1472 + 28": an IP packet size and its UDP payload.
fn sizes(n: u32, v6: bool) -> String {
    let o = udp_overhead(v6);
    format!("{n} = {} + {o}", n.saturating_sub(o))
}

/// How a path run names a node: this host, the agent's host, the target, by address.
fn namer(doc: &Document) -> impl Fn(IpAddr) -> String + '_ {
    move |a: IpAddr| {
        let (local, far) = match (&doc.agent, &doc.hops) {
            (Some(r), _) => (Some(r.local_addr), Some(r.agent_addr)),
            (None, Some(h)) => (Some(h.local_addr), Some(h.target)),
            _ => (None, None),
        };
        if Some(a) == local {
            format!("this host {a}")
        } else if Some(a) == far
            && (doc.mode == Mode::Agent || doc.hops.as_ref().is_some_and(|h| h.agent.is_some()))
        {
            format!("the agent's host {a}")
        } else if Some(a) == far {
            format!("the target {a}")
        } else {
            a.to_string()
        }
    }
}

/// For a router's fault that only one direction shows: which one (a pair's other
/// faults say so in their own words).
fn one_way(d: &Diagnosis, run: Option<&PathResult>) -> String {
    use mtuperf_engine::diagnosis::FaultClass;
    let Some(r) =
        run.filter(|_| matches!(d.class(), FaultClass::RouterMtu | FaultClass::BlackHole))
    else {
        return String::new();
    };
    match (r.forward_mtu < r.expect, r.reverse_mtu < r.expect) {
        (true, false) => format!(
            "; toward the agent only: the way back carries {}",
            r.reverse_mtu
        ),
        (false, true) => format!(
            "; on the way back only: toward the agent carries {}",
            r.forward_mtu
        ),
        _ => String::new(),
    }
}

/// Each verdict line with its fix (none when the path carries what was expected).
pub fn verdicts(doc: &Document) -> Vec<(String, Option<String>)> {
    let name = namer(doc);
    let names = Names {
        node: &name,
        on: String::new(),
    };
    let run = doc
        .agent
        .as_ref()
        .or_else(|| doc.hops.as_ref().and_then(|h| h.agent.as_deref()));
    let said: Vec<(String, Option<String>)> = doc
        .faults()
        .iter()
        .map(|d| {
            let s = words::say(d, &names, Scope::Pair);
            (s.summary + &one_way(d, run), Some(s.fix))
        })
        .collect();
    if !said.is_empty() {
        return said;
    }
    let line = if let Some(r) = &doc.agent {
        let m = r.carries();
        format!("carries MTU {m} end to end, both ways ({})", sizes(m, r.v6))
    } else if let Some(r) = &doc.icmp {
        let m = r.both.largest_ok;
        format!(
            "ICMP echo with DF passes up to {m} ({}), the smaller of the two directions",
            sizes(m, r.v6)
        )
    } else if let Some(r) = &doc.hops {
        match r.path_mtu {
            Some(m) => format!(
                "reached {} in {} hop(s) with {m}-byte probes ({})",
                r.target,
                r.hops.len(),
                sizes(m, r.v6)
            ),
            None => format!("did not reach {}", r.target),
        }
    } else {
        String::new()
    };
    vec![(line, None)]
}

fn local_text(out: &mut String, l: &LocalView) {
    let r = &l.route;
    let via = r
        .gateway
        .map_or("on-link".to_string(), |g| format!("via {g}"));
    let src = r.source.map_or(String::new(), |s| format!(" from {s}"));
    let _ = writeln!(out, "local:    {} MTU {}, {via}{src}", r.iface, l.mtu);
    if let Some(i) = &l.iface {
        for (m, mtu) in &i.members {
            let _ = writeln!(out, "          bond member {m} MTU {mtu}");
        }
        if let Some((p, mtu)) = &i.parent {
            let _ = writeln!(out, "          VLAN parent {p} MTU {mtu}");
        }
    }
    match (r.cached_pmtu, r.cached_expires_s) {
        (Some(c), Some(e)) => {
            let _ = writeln!(out, "          cached path MTU {c} (expires in {e} s)");
        }
        (Some(c), None) => {
            let _ = writeln!(out, "          cached path MTU {c}");
        }
        _ => {}
    }
}

fn limit_text(d: &DirResult) -> String {
    match &d.limit {
        Limit::Top => format!("up to the sender's interface MTU {}", d.top),
        Limit::Icmp { mtu, from } => format!(
            "ICMP too-big from {} naming MTU {mtu}",
            from.map_or("?".into(), |a| a.to_string())
        ),
        Limit::Local { mtu } => format!("sender's own route/interface refuses more (MTU {mtu})"),
        Limit::Silent => format!("{} vanished, no ICMP", d.largest_ok + 1),
    }
}

/// One direction: the size read as an MTU first, the exact largest passing size as a
/// detail when link-layer slack made them differ.
fn dir_line(out: &mut String, name: &str, d: &DirResult, mtu: u32) {
    let exact = if mtu >= d.largest_ok {
        format!("{mtu} passes")
    } else {
        format!(
            "MTU {mtu} ({} passes: {} bytes of link-layer slack)",
            d.largest_ok,
            d.largest_ok - mtu
        )
    };
    let _ = writeln!(
        out,
        "{name:<9} {exact}; {} ({} probes, {} unanswered)",
        limit_text(d),
        d.probes,
        d.lost
    );
}

/// The verdict and fix lines, then whether the path carries what was expected.
fn verdict_text(out: &mut String, doc: &Document, expect: u32, elapsed_ms: u64, both: bool) {
    for (v, fix) in verdicts(doc) {
        let _ = writeln!(out, "verdict:  {v}");
        if let Some(f) = fix {
            let _ = writeln!(out, "fix:      {f}");
        }
    }
    let ways = if both { " in both directions" } else { "" };
    let _ = writeln!(
        out,
        "expect:   {expect}{ways}: {} ({elapsed_ms} ms)",
        if doc.ok { "ok" } else { "NOT carried" },
    );
}

/// The agent's view; `vanish`: with where its probes saw larger packets vanish (a
/// hops walk has said it already).
fn agent_text(out: &mut String, r: &PathResult, vanish: bool) {
    let peer = r
        .agent_path
        .iface
        .as_ref()
        .map_or("?".into(), |i| format!("{} MTU {}", i.name, i.mtu));
    let _ = writeln!(out, "agent:    {peer}, address {}", r.agent_path.addr);
    dir_line(out, "forward:", &r.forward, r.forward_mtu);
    dir_line(out, "reverse:", &r.reverse, r.reverse_mtu);
    if let Some(a) = r.first_router {
        let _ = writeln!(out, "router:   {a} is the first hop toward the agent");
    }
    if let Some(b) = r.black_hole_hop.as_ref().filter(|_| vanish) {
        let _ = writeln!(out, "{}", vanish_line(b));
    }
    if let Some(t) = &r.tcp {
        let _ = writeln!(
            out,
            "tcp:      control connection MSS {} sent / {} received, kernel pmtu {}",
            t.snd_mss, t.rcv_mss, t.pmtu
        );
    }
    for n in &r.notes {
        let _ = writeln!(out, "note:     {n}");
    }
}

/// Where TTL-limited probes saw the larger forward packets vanish.
fn vanish_line(b: &mtuperf_engine::path::hops::BlackHoleHop) -> String {
    let last = match (b.last_ttl, b.last_addr) {
        (0, _) => {
            "no hop answers them: they vanish on the first link (no router on the way)".to_string()
        }
        (t, Some(a)) => format!("hop {t} ({a}) is the last to answer them"),
        (t, None) => format!("hop {t} is the last to answer them"),
    };
    format!(
        "vanish:   probes of {} bytes and more: {last}; at TTL {} small probes get answers, {} bytes pass",
        b.vanishes, b.at_ttl, b.passes
    )
}

fn hops_text(out: &mut String, r: &HopsResult) {
    for h in &r.hops {
        let addr = h.addr.map_or("no reply".into(), |a| a.to_string());
        let mtu = h.reports_mtu.map_or(String::new(), |m| {
            format!("  reports MTU {m} (frag-needed)")
        });
        let dest = if h.destination { "  destination" } else { "" };
        let size = h
            .probe_size
            .map_or(String::new(), |s| format!("  ({s}-byte probe)"));
        let _ = writeln!(out, "{:>3}  {addr}{mtu}{dest}{size}", h.ttl);
    }
    if let Some(b) = &r.black_hole {
        let _ = writeln!(out, "{}", vanish_line(b));
    }
    match (&r.agent, &r.agent_error) {
        (Some(a), _) => agent_text(out, a, r.black_hole.is_none()),
        (None, Some(e)) => {
            let _ = writeln!(
                out,
                "agent:    none at {} ({}): the far end's NIC MTU and the way back are not seen",
                r.target,
                escape(&crate::refusal::failed(e))
            );
        }
        (None, None) => {}
    }
}

fn escape(s: &str) -> String {
    mtuperf_proto::text::escape_control(s).into_owned()
}

pub fn text(doc: &Document) -> String {
    let mut out = String::new();
    if let Some(r) = &doc.agent {
        let _ = writeln!(out, "path to {} (agent {})", r.target, r.agent);
        local_text(&mut out, &r.local);
        agent_text(&mut out, r, true);
        verdict_text(&mut out, doc, r.expect, r.elapsed_ms, true);
    }
    if let Some(r) = &doc.icmp {
        let _ = writeln!(
            out,
            "path to {} (ICMP echo, {} socket, no agent)",
            r.target, r.socket
        );
        local_text(&mut out, &r.local);
        dir_line(&mut out, "both:", &r.both, r.both.largest_ok);
        for n in &r.notes {
            let _ = writeln!(out, "note:     {n}");
        }
        verdict_text(&mut out, doc, r.expect, r.elapsed_ms, false);
    }
    if let Some(r) = &doc.hops {
        let _ = writeln!(out, "hops to {} (TTL-limited DF UDP probes)", r.target);
        local_text(&mut out, &r.local);
        hops_text(&mut out, r);
        verdict_text(&mut out, doc, r.expect, r.elapsed_ms, r.agent.is_some());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::tests::mismatch;

    /// The verdict is the shared diagnosis in words, with its fix toward the
    /// network's MTU; the exact sizes stay in the direction lines.
    #[test]
    fn a_stored_run_prints_its_diagnosis_and_fix() {
        let d = mismatch();
        let t = text(&d);
        for want in [
            "forward:  MTU 1500 (1504 passes: 4 bytes of link-layer slack); 1505 vanished, no ICMP",
            "verdict:  NIC eth0 of the agent's host 198.18.5.2 is at MTU 1500, below the network's 9000: paths through it carry 1500\n",
            "fix:      ip link set dev eth0 mtu 9000 on the agent's host 198.18.5.2, and make it persistent",
            "expect:   9000 in both directions: NOT carried",
        ] {
            assert!(t.contains(want), "{want:?} not in:\n{t}");
        }
        assert!(
            d.headline().starts_with("NIC eth0 of the agent's host"),
            "{}",
            d.headline()
        );
    }
}
