//! Path MTU results: the `mtuperf.path/1` JSON document and the human text.

use std::fmt::Write as _;

use mtuperf_engine::path::hops::HopsResult;
use mtuperf_engine::path::icmp::IcmpResult;
use mtuperf_engine::path::{DirResult, Limit, LocalView, PathResult};
use serde::{Deserialize, Serialize};

use crate::figure::Figure;

pub const SCHEMA: &str = "mtuperf.path/1";

/// One `path` run in one of its three modes (exactly one of the results is set).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub schema: String,
    pub run_id: Option<i64>,
    pub started: String,
    /// "agent", "icmp" or "hops".
    pub mode: String,
    /// The verdict line (also the history headline).
    pub verdict: String,
    /// The path carries `expect` (in both directions where measured).
    pub ok: bool,
    pub agent: Option<PathResult>,
    pub icmp: Option<IcmpResult>,
    pub hops: Option<HopsResult>,
    /// When the run started (ms since the Unix epoch), for the history; not part of
    /// the document (which carries `started`).
    #[serde(skip)]
    pub started_unix_ms: i64,
}

impl Document {
    fn new(mode: &str, verdict: String, ok: bool) -> Document {
        Document {
            schema: SCHEMA.into(),
            run_id: None,
            started: crate::timestamp(mtuperf_engine::unix_ms()),
            mode: mode.into(),
            verdict,
            ok,
            agent: None,
            icmp: None,
            hops: None,
            started_unix_ms: mtuperf_engine::unix_ms(),
        }
    }

    pub fn agent(r: PathResult) -> Document {
        let mut d = Document::new("agent", r.verdict_text.clone(), r.ok);
        d.started = crate::timestamp(r.started_unix_ms);
        d.agent = Some(r);
        d
    }

    pub fn icmp(r: IcmpResult) -> Document {
        let m = r.both.largest_ok;
        let ovh = if r.v6 { 48 } else { 28 };
        let v = format!(
            "ICMP echo with DF passes up to {m} ({m} = {} + {ovh}), the smaller of the two directions",
            m.saturating_sub(ovh)
        );
        let mut d = Document::new("icmp", v, r.ok);
        d.icmp = Some(r);
        d
    }

    pub fn hops(r: HopsResult) -> Document {
        let mut v = match r.path_mtu {
            Some(m) => format!(
                "reached {} in {} hop(s) with {m}-byte probes",
                r.target,
                r.hops.len()
            ),
            None => format!("did not reach {}", r.target),
        };
        if let Some(b) = &r.black_hole {
            let last = match (b.last_ttl, b.last_addr) {
                (0, _) => "on this host's first link".to_string(),
                (t, Some(a)) => format!("after hop {t} {a}, the last hop that answers them"),
                (t, None) => format!("after hop {t}, the last hop that answers them"),
            };
            v = format!(
                "black hole {last}: packets of {} bytes and more vanish there without ICMP, {} pass; {v}",
                b.vanishes, b.passes
            );
        }
        let mut d = Document::new("hops", v, r.ok);
        d.hops = Some(r);
        d
    }
}

/// A measured direction: its name ("forward", "reverse", or "both" for ICMP echo,
/// which measures the smaller of the two), its search, and the MTU it reads as.
pub type Dir<'a> = (&'static str, &'a DirResult, u32);

impl Document {
    /// The directions this run searched and the MTU they were held against (none for
    /// `--hops`, whose probes are not a search of each direction).
    pub fn directions(&self) -> (Vec<Dir<'_>>, u32) {
        if let Some(r) = &self.agent {
            let f = r.forward_mtu.unwrap_or(r.forward.largest_ok);
            let b = r.reverse_mtu.unwrap_or(r.reverse.largest_ok);
            (
                vec![("forward", &r.forward, f), ("reverse", &r.reverse, b)],
                r.expect,
            )
        } else if let Some(r) = &self.icmp {
            (vec![("both", &r.both, r.both.largest_ok)], r.expect)
        } else {
            (Vec::new(), 0)
        }
    }
}

/// Whether the path carries what was expected, the expected MTU, and per searched
/// direction: the MTU it reads as, the largest size that passed, the search's top
/// (the sender's interface MTU), probes sent and probes left unanswered. Sizes are IP
/// packet bytes.
pub fn figures(doc: &Document) -> Vec<Figure> {
    let mut f =
        vec![Figure::new("ok", "bool", f64::from(u8::from(doc.ok))).label("mode", &doc.mode)];
    let (dirs, expect) = doc.directions();
    if !dirs.is_empty() {
        f.push(Figure::new("expect", "bytes", f64::from(expect)));
    }
    for (name, d, mtu) in dirs {
        f.extend(
            [
                Figure::new("path_mtu", "bytes", f64::from(mtu)),
                Figure::new("largest_passing", "bytes", f64::from(d.largest_ok)),
                Figure::new("search_top", "bytes", f64::from(d.top)),
                Figure::new("probes", "probes", f64::from(d.probes)),
                Figure::new("unanswered", "probes", f64::from(d.lost)),
            ]
            .map(|x| x.label("direction", name)),
        );
    }
    f
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
fn dir_line(out: &mut String, name: &str, d: &DirResult, mtu: Option<u32>) {
    // Documents stored before the slack reading have no MTU: the exact size alone.
    let mtu = mtu.unwrap_or(d.largest_ok);
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

pub fn text(doc: &Document) -> String {
    let mut out = String::new();
    if let Some(r) = &doc.agent {
        let _ = writeln!(out, "path to {} (agent {})", r.target, r.agent);
        local_text(&mut out, &r.local);
        let peer = r
            .agent_path
            .iface
            .as_ref()
            .map_or("?".into(), |i| format!("{} MTU {}", i.name, i.mtu));
        let _ = writeln!(out, "agent:    {peer}, address {}", r.agent_path.addr);
        dir_line(&mut out, "forward:", &r.forward, r.forward_mtu);
        dir_line(&mut out, "reverse:", &r.reverse, r.reverse_mtu);
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
        let _ = writeln!(out, "verdict:  {}", r.verdict_text);
        let _ = writeln!(
            out,
            "expect:   {} in both directions: {} ({} ms)",
            r.expect,
            if r.ok { "ok" } else { "NOT carried" },
            r.elapsed_ms
        );
    }
    if let Some(r) = &doc.icmp {
        let _ = writeln!(
            out,
            "path to {} (ICMP echo, {} socket, no agent)",
            r.target, r.socket
        );
        local_text(&mut out, &r.local);
        dir_line(&mut out, "both:", &r.both, None);
        for n in &r.notes {
            let _ = writeln!(out, "note:     {n}");
        }
        let _ = writeln!(out, "verdict:  {}", doc.verdict);
        let _ = writeln!(
            out,
            "expect:   {}: {} ({} ms)",
            r.expect,
            if r.ok { "ok" } else { "NOT carried" },
            r.elapsed_ms
        );
    }
    if let Some(r) = &doc.hops {
        let _ = writeln!(out, "hops to {} (TTL-limited DF UDP probes)", r.target);
        local_text(&mut out, &r.local);
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
            let _ = writeln!(
                out,
                "black hole: at TTL {} small probes get answers, large ones none; {} passes, {} vanishes",
                b.at_ttl,
                b.passes,
                b.vanishes
            );
        }
        let _ = writeln!(out, "verdict:  {}", doc.verdict);
        let _ = writeln!(
            out,
            "expect:   {}: {} ({} ms)",
            r.expect,
            if r.ok { "ok" } else { "NOT carried" },
            r.elapsed_ms
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Documents stored by the version before the slack reading, the switch-port
    /// verdict and the black hole's hop (real runs on the lab's mismatch link) still
    /// load and print, as `mtuperf show ID` needs.
    #[test]
    fn documents_stored_before_the_new_fields_still_print() {
        let agent: Document = serde_json::from_str(include_str!(
            "../tests/fixtures/path_agent_v1_before_slack.json"
        ))
        .unwrap();
        let r = agent.agent.as_ref().unwrap();
        assert_eq!((r.forward_mtu, r.black_hole_hop.as_ref()), (None, None));
        let t = text(&agent);
        assert!(t.contains("forward:  1504 passes; 1505 vanished"), "{t}");
        assert!(t.contains("verdict:  mismatch: local MTU 9000"), "{t}");
        let hops: Document = serde_json::from_str(include_str!(
            "../tests/fixtures/path_hops_v1_before_slack.json"
        ))
        .unwrap();
        let h = hops.hops.as_ref().unwrap();
        assert!(h.black_hole.is_none() && h.hops.iter().all(|h| h.probe_size.is_none()));
        assert!(text(&hops).contains("  1  no reply\n"));
    }

    /// The figures are the searches' numbers, per direction, with the expected MTU
    /// (the HTML table reads them); hops runs have only the ok figure.
    #[test]
    fn figures_carry_each_directions_search() {
        let agent: Document = serde_json::from_str(include_str!(
            "../tests/fixtures/path_agent_v1_before_slack.json"
        ))
        .unwrap();
        let f = figures(&agent);
        let get = |name: &str, dir: &str| {
            f.iter()
                .find(|x| x.name == name && x.labels.contains(&("direction", dir.to_string())))
                .map(|x| x.value)
        };
        assert_eq!(crate::figure::figure(&f, "ok").map(|x| x.value), Some(0.0));
        assert_eq!(
            crate::figure::figure(&f, "expect").map(|x| x.value),
            Some(9000.0)
        );
        assert_eq!(get("path_mtu", "forward"), Some(1504.0));
        assert_eq!(get("largest_passing", "forward"), Some(1504.0));
        assert_eq!(get("search_top", "forward"), Some(9000.0));
        assert_eq!(get("probes", "forward"), Some(53.0));
        assert_eq!(get("unanswered", "forward"), Some(27.0));
        assert_eq!(get("path_mtu", "reverse"), Some(1500.0));
        assert_eq!(get("unanswered", "reverse"), Some(0.0));
        let hops: Document = serde_json::from_str(include_str!(
            "../tests/fixtures/path_hops_v1_before_slack.json"
        ))
        .unwrap();
        let names: Vec<&str> = figures(&hops).iter().map(|x| x.name).collect();
        assert_eq!(names, ["ok"]);
    }
}
