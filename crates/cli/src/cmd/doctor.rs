//! `mtuperf doctor`: check this host (and with --peer the agent's host) for what the
//! documents tell operators to tune. Never changes the host; --fix-script prints the
//! commands for review. Exit 0 when nothing FAILs (WARN allowed), 1 on any FAIL.
use std::path::Path;
use std::time::Duration;

use mtuperf_engine::client::Session;
use mtuperf_engine::doctor::run::{self, Check};
use mtuperf_engine::doctor::{facts, Profile};
use mtuperf_report::doctor::{self as rd, Document};

use crate::connect;
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::history;
use crate::interrupt;
use crate::output::{self, Format, Output};
use crate::parse;

/// doctor's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str = "text (the default), or json: one document of schema mtuperf.doctor/4 (--fix-script prints a shell script instead)";
    const HINT: &'static str = "doctor prints its checks as text or as its JSON document, or a shell script with --fix-script";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Interconnect interface to check (repeatable). Default: the one routing to
    /// --peer, else every non-loopback interface that is up.
    #[arg(long = "iface", value_name = "IF", help_heading = crate::heading::TEST)]
    ifaces: Vec<String>,
    /// An agent (`mtuperf serve`) on the other node: run the same checks there and
    /// compare both ends (HOST, HOST:PORT or [IPv6]:PORT; with --ssh, the node as ssh
    /// reaches it).
    #[arg(long, value_name = "HOST", help_heading = crate::heading::TEST)]
    peer: Option<String>,
    /// Thresholds: rac (Oracle minimums FAIL) or generic (the same values WARN).
    #[arg(long, default_value = "rac", value_parser = parse::parse_profile, help_heading = crate::heading::TEST)]
    profile: Profile,
    /// Round-trip time for the bandwidth-delay product (default with --peer: the
    /// kernel's RTT of the control connection).
    #[arg(long, value_parser = parse::parse_rtt, help_heading = crate::heading::TEST)]
    rtt: Option<Duration>,
    /// Path rate for the bandwidth-delay product: 10G, 25gbit ... (default: the
    /// interface's link speed when it reports one).
    #[arg(long, value_parser = parse::parse_bandwidth, help_heading = crate::heading::TEST)]
    bandwidth: Option<f64>,
    /// How long to sample the error counters (0s: since-boot totals only).
    #[arg(long, default_value = "1s", value_parser = parse::parse_sample, help_heading = crate::heading::TEST)]
    sample: Duration,
    #[command(flatten)]
    output: Output<Formats>,
    /// Print a reviewable shell script fixing each FAIL/WARN instead of the report.
    #[arg(long, conflicts_with_all = ["json", "format"], help_heading = crate::heading::OUTPUT)]
    fix_script: bool,
    #[command(flatten)]
    ssh: crate::args::ssh::SshArgs,
}

/// The interfaces to check and how they were chosen.
fn select(a: &Args, session: Option<&Session>) -> Result<(Vec<String>, String), Failure> {
    let root = Path::new(mtuperf_sys::netdev::SYS_CLASS_NET);
    if !a.ifaces.is_empty() {
        for i in &a.ifaces {
            if i.contains('/') || !root.join(i).exists() {
                return Err(Failure::bad_value(
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

// Every subcommand's `run` takes its Args by value (cmd/mod.rs dispatch).
#[allow(clippy::needless_pass_by_value)]
/// Exit codes of doctor, as the issue asks for scripting: 0 no FAIL, 1 any FAIL, 2 any error.
pub fn run(g: &Global, a: Args) -> CmdResult {
    check(g, a).map_err(|f| interrupt::error_code(f, exit::USAGE))
}

fn check(g: &Global, a: Args) -> CmdResult {
    let json = a.output.pick() == Format::Json;
    let store = history::open_store(g)?;
    let started = mtuperf_engine::unix_ms();
    let time = a.sample + Duration::from_secs(30);
    let peer = match &a.peer {
        Some(p) => Some(crate::ssh::asked_peer(g, &a.ssh, p, time)?),
        None => None,
    };
    let session = match &peer {
        Some(p) => Some(Session::connect(&p.target, &p.opts).map_err(connect::engine_failure)?),
        None => None,
    };
    let (ifaces, selection) = select(&a, session.as_ref())?;
    let check = Check {
        profile: a.profile,
        sample: a.sample,
        ifaces,
        selection,
        bandwidth: a.bandwidth,
        rtt: a.rtt,
    };
    let stored = crate::stored::Evidence {
        store: store.as_ref(),
        peer: a.peer.as_deref(),
    };
    let result = run::run(&check, session.as_ref(), &stored);
    if let Some(s) = session {
        s.close();
    }
    let checked = result.map_err(connect::engine_failure)?;
    let peer_name = a.peer.as_deref().unwrap_or_default();
    let mut doc = Document::of(started, a.profile, peer_name, checked);
    let target = a.peer.clone().unwrap_or_else(|| "localhost".into());
    doc.run_id = history::store_record(
        store.as_ref(),
        &doc,
        history::Place {
            target: &target,
            ..history::Place::default()
        },
    )?;
    if json {
        crate::out::json(&doc.worded());
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
