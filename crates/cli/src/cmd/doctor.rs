//! `mtuperf doctor`: check this host (and with --peer the agent's host) for what the
//! documents tell operators to tune. Never changes the host; --fix-script prints the
//! commands for review. Exit 0 when nothing FAILs (WARN allowed), 1 on any FAIL.
use std::path::Path;
use std::time::Duration;

use mtuperf_engine::client::Session;
use mtuperf_engine::doctor::{
    self, client as dclient, cross, facts, Bdp, Options, Profile, StreamEvidence,
};
use mtuperf_engine::stream::End;
use mtuperf_proto::units::BitsPerSec;
use mtuperf_report::doctor::{self as rd, Document, HostReport};
use mtuperf_store::NewRun;

use crate::cli::Global;
use crate::common;
use crate::exit::{self, CmdResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Interconnect interface to check (repeatable). Default: the one routing to
    /// --peer, else every non-loopback interface that is up.
    #[arg(long = "iface", value_name = "IF")]
    ifaces: Vec<String>,
    /// An agent (`mtuperf serve`) on the other node: run the same checks there and
    /// compare both ends (HOST, HOST:PORT or [IPv6]:PORT).
    #[arg(long, value_name = "HOST")]
    peer: Option<String>,
    /// Thresholds: rac (Oracle minimums FAIL) or generic (the same values WARN).
    #[arg(long, default_value = "rac", value_parser = parse_profile)]
    profile: Profile,
    /// Round-trip time for the bandwidth-delay product (default with --peer: the
    /// kernel's RTT of the control connection).
    #[arg(long, value_parser = parse_rtt)]
    rtt: Option<Duration>,
    /// Path rate for the bandwidth-delay product: 10G, 25gbit ... (default: the
    /// interface's link speed when it reports one).
    #[arg(long, value_parser = parse_bandwidth)]
    bandwidth: Option<f64>,
    /// How long to sample the error counters (0s: since-boot totals only).
    #[arg(long, default_value = "1s", value_parser = parse_sample)]
    sample: Duration,
    /// Print one JSON document (schema mtuperf.doctor/1) instead of text.
    #[arg(long, conflicts_with = "fix_script")]
    json: bool,
    /// Print a reviewable shell script fixing each FAIL/WARN instead of the report.
    #[arg(long)]
    fix_script: bool,
}

fn parse_profile(s: &str) -> Result<Profile, String> {
    s.parse()
}

fn parse_rtt(s: &str) -> Result<Duration, String> {
    let d = common::parse_any_duration(s)?;
    if d.is_zero() || d > Duration::from_secs(10) {
        return Err(format!(
            "{s} is out of range: allowed 1us to 10s (e.g. 200us, 25ms)"
        ));
    }
    Ok(d)
}

fn parse_sample(s: &str) -> Result<Duration, String> {
    let d = common::parse_any_duration(s)?;
    if d > Duration::from_mins(1) {
        return Err(format!("{s} is out of range: allowed 0s to 60s (e.g. 1s)"));
    }
    Ok(d)
}

fn parse_bandwidth(s: &str) -> Result<f64, String> {
    BitsPerSec::parse(s).map(|b| b.0).map_err(|e| e.to_string())
}

/// The interfaces to check and how they were chosen.
fn select(a: &Args, session: Option<&Session>) -> Result<(Vec<String>, String), Failure> {
    let root = Path::new(mtuperf_sys::netdev::SYS_CLASS_NET);
    if !a.ifaces.is_empty() {
        for i in &a.ifaces {
            if i.contains('/') || !root.join(i).exists() {
                return Err(Failure::usage(
                    "--iface",
                    i,
                    &format!(
                        "an interface of this host: {}",
                        facts::up_interfaces_at(root).join(", ")
                    ),
                    "see `ip link`",
                ));
            }
        }
        return Ok((a.ifaces.clone(), "given with --iface".into()));
    }
    if let Some(s) = session {
        let ip = s.agent.ip();
        let r = mtuperf_sys::route::route_to(ip)
            .map_err(|e| Failure::new(exit::FAILED, anyhow::anyhow!("route to {ip}: {e}")))?;
        return Ok((vec![r.iface], format!("route to {ip}")));
    }
    Ok((
        facts::up_interfaces_at(root),
        "every non-loopback interface that is up".into(),
    ))
}

fn bdp(
    a: &Args,
    local: &mtuperf_engine::doctor::HostFacts,
    measured_rtt: Option<Duration>,
) -> Option<Bdp> {
    let (bw, bw_src) = if let Some(b) = a.bandwidth {
        (b, "--bandwidth".to_string())
    } else {
        let f = local
            .ifaces
            .iter()
            .filter_map(|f| f.info.speed_mbps.map(|s| (s, &f.info.name)))
            .min()?;
        (f64::from(f.0) * 1e6, format!("link speed of {}", f.1))
    };
    let (rtt, rtt_src) = match (a.rtt, measured_rtt) {
        (Some(r), _) => (r, "--rtt".to_string()),
        (None, Some(r)) => (r, "control round trip to the agent".to_string()),
        (None, None) => return None,
    };
    Some(Bdp {
        bits_per_sec: bw,
        rtt,
        source: format!("{bw_src}, {rtt_src}"),
    })
}

// Every subcommand's `run` takes its Args by value (cmd/mod.rs dispatch).
#[allow(clippy::needless_pass_by_value)]
/// Exit codes of doctor, as the issue asks for scripting: 0 no FAIL, 1 any FAIL, 2 any error.
pub fn run(g: &Global, a: Args) -> CmdResult {
    check(g, a).map_err(|f| Failure {
        code: exit::USAGE,
        error: f.error,
    })
}

/// What the newest stored stream run (to --peer's host, if given) says about the
/// buffers of `end` (this host is the client; --peer the agent).
fn stream_evidence(
    store: Option<&mtuperf_store::Store>,
    peer: Option<&str>,
    end: End,
) -> Option<StreamEvidence> {
    // HOST, HOST:PORT, [IPv6]:PORT or a bare IPv6 address: the host part.
    let host = peer.map(|p| match p.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None if p.matches(':').count() == 1 => p.split(':').next().unwrap_or(p),
        None => p,
    });
    let run = store?
        .list(&mtuperf_store::Filter {
            kind: Some("stream".into()),
            target: host.map(str::to_string),
            limit: Some(1),
            ..mtuperf_store::Filter::default()
        })
        .ok()?
        .into_iter()
        .next()?;
    let verdicts = mtuperf_report::stream::stored_verdicts(&run.document);
    let refs: Vec<_> = verdicts.iter().collect();
    StreamEvidence::of(
        &format!("stream run {} to {}", run.id, run.target),
        end,
        &refs,
    )
}

fn check(g: &Global, a: Args) -> CmdResult {
    let store = common::open_store(g)?;
    let started = mtuperf_engine::unix_ms();
    let session = match &a.peer {
        Some(p) => Some(
            Session::connect(p, &common::connect_options(g, None)?)
                .map_err(common::engine_failure)?,
        ),
        None => None,
    };
    let (ifaces, selection) = select(&a, session.as_ref())?;
    // Sample both hosts at the same time: the agent's sample runs while ours does.
    let (local, peer) = std::thread::scope(|sc| {
        let remote = session
            .as_ref()
            .map(|s| sc.spawn(move || dclient::ask_peer(s, a.profile, a.sample)));
        let local = facts::gather(&ifaces, &selection, a.sample);
        let peer = remote.map(|h| {
            h.join().unwrap_or_else(|_| {
                Err(mtuperf_engine::EngineError::Protocol(
                    "doctor thread failed".into(),
                ))
            })
        });
        (local, peer)
    });
    let peer = peer.transpose().map_err(common::engine_failure)?;
    let rtt = session.as_ref().and_then(|s| dclient::control_rtt(s, 5));
    let evidence = |end| stream_evidence(store.as_ref(), a.peer.as_deref(), end);
    let opts = Options {
        profile: a.profile,
        bdp: bdp(&a, &local, rtt),
        evidence: evidence(End::Client),
    };
    let findings = doctor::check_host(&local, &opts);
    // The rules are pure: recompute the peer's findings here, with the BDP (the agent
    // knows neither --bandwidth nor the RTT).
    let peer = peer.map(|mut p| {
        let popts = Options {
            profile: a.profile,
            bdp: bdp(&a, &p.facts, rtt),
            evidence: evidence(End::Agent),
        };
        p.findings = doctor::check_host(&p.facts, &popts);
        p
    });
    let cross = peer
        .as_ref()
        .map(|p| cross::compare(&local, &p.facts))
        .unwrap_or_default();
    let peer_report = peer.map(|p| HostReport {
        hostname: p.hostname,
        role: format!("peer {}", a.peer.clone().unwrap_or_default()),
        facts: p.facts,
        findings: p.findings,
    });
    if let Some(s) = session {
        s.close();
    }
    let local_report = HostReport {
        hostname: local.hostname.clone(),
        role: "local".into(),
        facts: local,
        findings,
    };
    let mut doc = Document::new(started, a.profile.name(), local_report, peer_report, cross);
    doc.run_id = common::store_run(
        store.as_ref(),
        &NewRun {
            kind: "doctor".into(),
            target: a.peer.clone().unwrap_or_else(|| "localhost".into()),
            started_unix_ms: started,
            headline: rd::headline(&doc),
            headline_value: Some(doc.counts.fail as f64),
            interrupted: false,
            document: serde_json::to_string(&doc).unwrap_or_default(),
            group_id: None,
            label: None,
        },
    )?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else if a.fix_script {
        out!("{}", rd::fix_script(&doc));
    } else {
        out!("{}", rd::text(&doc));
    }
    Ok(if doc.counts.fail > 0 {
        exit::CHECK_FAILED
    } else {
        0
    })
}
