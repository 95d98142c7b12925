//! `mtuperf path`: prove that a path carries its MTU in both directions, and name
//! what breaks it. Exit codes of its own (docs/path.md): 0 the path carries --expect,
//! 1 it does not (the verdict says why), 2 any error, an unreachable agent included.
use std::net::IpAddr;
use std::time::Duration;

use mtuperf_engine::client::{self, Session};
use mtuperf_engine::config::{bounds, PathConfig};
use mtuperf_engine::path;
use mtuperf_report::path::{self as rp, Document};

use crate::connect;
use crate::exit::{CmdResult, Failure};
use crate::global::Global;
use crate::history;
use crate::interrupt;
use crate::live::path::Live;
use crate::output::{self, Format, Output};

/// Path's error exit code (any error, usage and unreachable agent included).
const PATH_ERROR: u8 = 2;

/// path's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str = "text (the default), or json: one document of schema mtuperf.path/4";
    const HINT: &'static str =
        "path prints its verdict as text or as its JSON document; as HTML: `mtuperf report ID`";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent (HOST, HOST:PORT or [IPv6]:PORT); with --icmp or --hops, any host;
    /// with --ssh, the node as ssh reaches it ([USER@]HOST[:PORT]).
    target: String,
    /// No agent: ICMP echo with DF (measures the smaller of the two directions).
    #[arg(long, conflicts_with_all = ["hops", "ssh"], help_heading = crate::heading::PROBE)]
    icmp: bool,
    /// Per-hop discovery like tracepath (each hop's address and reported MTU); when an
    /// agent answers at the target, its NIC MTU and the way back complete the verdict.
    #[arg(long, conflicts_with = "ssh", help_heading = crate::heading::PROBE)]
    hops: bool,
    /// IP packet size the path must carry in both directions for exit 0, 576 to 65535
    /// (default: the larger of the two interfaces' MTUs; without an agent, this one's).
    #[arg(long, value_name = "MTU", value_parser = clap::value_parser!(u32).range(i64::from(bounds::MIN_EXPECT_MTU)..=i64::from(bounds::MAX_EXPECT_MTU)), help_heading = crate::heading::PROBE)]
    expect: Option<u32>,
    /// Local address to send from (chooses the interface).
    #[arg(long, value_name = "LOCAL_ADDR", help_heading = crate::heading::PLACEMENT)]
    bind: Option<IpAddr>,
    #[command(flatten)]
    output: Output<Formats>,
    /// Pins the probing thread (and the threads it starts) to these CPUs; not recorded
    /// in the path document.
    #[command(flatten)]
    placement: crate::placement_args::CpuArgs,
    #[command(flatten)]
    ssh: crate::args::ssh::SshArgs,
}

// The dispatcher hands every subcommand its Args by value.
#[allow(clippy::needless_pass_by_value)]
pub fn run(g: &Global, a: Args) -> CmdResult {
    let json = a.output.pick() == Format::Json;
    measure(g, &a, json).map_err(|f| interrupt::error_code(f, PATH_ERROR))
}

/// How long `--hops` waits for an agent at the target to accept a session: one that
/// answers does so in milliseconds; none there must not hold the walk up.
const AGENT_WAIT: Duration = Duration::from_secs(2);

/// `--hops`: the walk, with the target's agent's view of the pair when one answers.
fn hops(g: &Global, a: &Args, ip: IpAddr) -> Result<path::hops::HopsResult, Failure> {
    let mut opts = connect::connect_options(g, a.bind)?;
    opts.connect_timeout = AGENT_WAIT;
    opts.reply_timeout = AGENT_WAIT;
    let session = Session::connect(&a.target, &opts);
    let far = session
        .as_ref()
        .map_err(mtuperf_engine::EngineError::failed);
    let r = path::hops::run(ip, a.expect, far).map_err(connect::engine_failure);
    if let Ok(s) = session {
        s.close();
    }
    r
}

fn measure(g: &Global, a: &Args, json: bool) -> CmdResult {
    if let Some(cpus) = a.placement.cpus() {
        mtuperf_sys::affinity::pin_current_thread(&cpus).map_err(|e| {
            Failure::new(crate::exit::FAILED, anyhow::Error::new(e).context("--cpu"))
        })?;
    }
    let store = history::open_store(g)?;
    let started_unix_ms = mtuperf_engine::unix_ms();
    let mut doc = if a.icmp || a.hops {
        let ip = client::resolve(&a.target)
            .map_err(connect::engine_failure)?
            .ip();
        if a.icmp {
            Document::icmp(path::icmp::run(ip, a.expect).map_err(connect::engine_failure)?)
        } else {
            Document::hops(hops(g, a, ip)?)
        }
    } else {
        // A path search takes seconds; the agent's lifetime allows minutes.
        let peer = crate::ssh::peer(g, &a.ssh, &a.target, a.bind, Duration::from_mins(2))?;
        let session =
            Session::connect(&peer.target, &peer.opts).map_err(connect::engine_failure)?;
        let mut live = Live::new();
        let result = path::run_observed(
            &session,
            &a.target,
            &PathConfig { expect: a.expect },
            &mut |s| live.step(s),
        );
        live.finish();
        session.close();
        Document::agent(result.map_err(connect::engine_failure)?)
    };
    doc.started_unix_ms = started_unix_ms;
    doc.run_id = history::store_record(
        store.as_ref(),
        &doc,
        history::Place {
            target: &a.target,
            ..history::Place::default()
        },
    )?;
    if json {
        crate::out::json(&doc);
    } else {
        out!("{}", rp::text(&doc));
        if let Some(id) = doc.run_id {
            outln!("stored as run {id}");
        }
    }
    Ok(u8::from(!doc.ok))
}
