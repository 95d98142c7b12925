//! `mtuperf serve`: the agent.
mod watch;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_engine::agent::{Agent, AgentConfig, LogLine};
use mtuperf_engine::Shutdown;
use mtuperf_proto::msg::Limits;
use mtuperf_proto::units::BitsPerSec;

use crate::connect;
use crate::connect::load_key;
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::parse;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Address to listen on (repeatable; default: all IPv4 and IPv6 addresses).
    #[arg(long = "bind", value_name = "ADDR", help_heading = crate::heading::LISTEN)]
    binds: Vec<IpAddr>,
    /// TCP port for control and data connections.
    #[arg(long, default_value_t = mtuperf_proto::DEFAULT_PORT, help_heading = crate::heading::LISTEN)]
    port: u16,
    /// Sessions served at once; one more is answered "busy".
    #[arg(long, default_value_t = Limits::default().max_sessions, value_parser = clap::value_parser!(u32).range(1..=256), help_heading = crate::heading::LIMITS)]
    max_sessions: u32,
    /// Longest test a client may ask for (100ms to 24h: a shorter one would refuse
    /// every test).
    #[arg(long, default_value = "1h", value_parser = parse::parse_test_time, help_heading = crate::heading::LIMITS)]
    max_duration: Duration,
    /// Most parallel streams one test may open.
    #[arg(long, default_value_t = Limits::default().max_streams, value_parser = clap::value_parser!(u32).range(1..=1024), help_heading = crate::heading::LIMITS)]
    max_streams: u32,
    /// Highest offered load a client may ask for (bits per second, e.g. 10gbit).
    #[arg(long, default_value = "400gbit", value_parser = |s: &str| BitsPerSec::parse(s).map_err(|e| e.to_string()), help_heading = crate::heading::LIMITS)]
    max_rate: BitsPerSec,
    /// Most serving threads one rr test may ask for.
    #[arg(long, default_value_t = Limits::default().max_workers, value_parser = clap::value_parser!(u32).range(1..=1024), help_heading = crate::heading::LIMITS)]
    max_workers: u32,
    /// Most concurrent rr clients one test may run.
    #[arg(long, default_value_t = Limits::default().max_clients, value_parser = clap::value_parser!(u32).range(1..=65536), help_heading = crate::heading::LIMITS)]
    max_clients: u32,
    /// Only accept clients from this network (repeatable), e.g. 10.0.0.0/24.
    #[arg(long, value_name = "CIDR", help_heading = crate::heading::LISTEN)]
    allow: Vec<IpNet>,
    /// Log as text lines or one JSON object per line.
    #[arg(long, value_enum, default_value = "text", help_heading = crate::heading::LISTEN)]
    log_format: LogFormat,
    /// Honour fault-injection hooks in requests (for mtuperf's own tests).
    #[arg(long, hide = true)]
    test_hooks: bool,
    /// The processor set: CPUs a client's `rr --agent-cpu` may pin serving threads to
    /// (kernel list syntax, e.g. 0-3). Default: every online CPU.
    #[arg(long, value_name = "LIST", value_parser = crate::placement_args::parse_local_cpus, help_heading = crate::heading::PLACEMENT)]
    cpus: Option<crate::placement_args::CpuList>,
    /// Exit by itself after DURATION (1s to 30d), sessions running or not.
    #[arg(long, value_name = "DURATION", value_parser = |s: &str| parse::duration_in(s, Duration::from_secs(1), Duration::from_hours(720)), help_heading = crate::heading::LISTEN)]
    lifetime: Option<Duration>,
    /// Started by another mtuperf's `--ssh` (key and addresses on stdin; docs/mesh.md).
    #[arg(long, hide = true, requires = "lifetime", conflicts_with_all = ["binds", "allow"])]
    ssh_stdio: bool,
    #[command(flatten)]
    watch: crate::args::watch::WatchArgs,
}

/// The agent's log, one line per event on the invocation's stderr (the agent logs
/// from its sessions' threads).
fn logger(format: LogFormat) -> mtuperf_engine::agent::LogFn {
    let out = crate::out::current();
    Arc::new(move |l: &LogLine| {
        let _in = out.enter();
        let peer = l.peer.map_or_else(|| "-".into(), |p| p.to_string());
        // The message in report's words, control characters escaped (the engine's
        // text by the engine, a failure's words by report); a closed stderr must not
        // stop the agent (errln! never panics).
        let message = mtuperf_report::agent::said(&l.message);
        match format {
            LogFormat::Text => errln!("{} {peer} {}: {message}", l.level, l.event),
            LogFormat::Json => {
                let mut o = serde_json::json!({
                    "ts": mtuperf_report::timestamp(mtuperf_engine::unix_ms()),
                    "level": l.level, "event": l.event, "peer": peer, "msg": message
                });
                // The message's figures as their own fields, never over the fixed ones.
                if let Some(m) = o.as_object_mut() {
                    for (k, v) in &l.fields {
                        m.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                errln!("{o}");
            }
        }
    })
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    let defaults = a.binds.is_empty();
    let any: [IpAddr; 2] = [Ipv4Addr::UNSPECIFIED.into(), Ipv6Addr::UNSPECIFIED.into()];
    let ips = if defaults { &any[..] } else { &a.binds[..] };
    let mut config = AgentConfig::new(ips.iter().map(|ip| SocketAddr::new(*ip, a.port)).collect());
    config.key = load_key(g.key_file.as_deref())?;
    config.limits = Limits {
        max_sessions: a.max_sessions,
        max_duration_ms: a.max_duration.as_millis() as u64,
        max_streams: a.max_streams,
        max_rate_bps: a.max_rate.0 as u64,
        max_workers: a.max_workers,
        max_clients: a.max_clients,
        ..Limits::default()
    };
    config.allow.clone_from(&a.allow);
    config.test_hooks = a.test_hooks;
    config.cpus = a.cpus.as_ref().map(|c| c.0.clone());
    config.log = logger(a.log_format);
    // Counters and the test gate are shared: the clone sees what the agent counts.
    let shared = config.clone();
    let shutdown = Shutdown::new();
    if let Some(l) = a.lifetime {
        crate::ssh::lifetime(l, shutdown.clone(), &config);
    }
    let agent = match a.lifetime.filter(|_| a.ssh_stdio) {
        Some(l) => crate::ssh::node_agent(config, l, &shutdown)?,
        None => bind(config, defaults)?,
    };
    if crate::out::current().is_process() {
        let _ = shutdown.on_signals(&[signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]);
    }
    let extra = watch::start(g, &a.watch, &shared, &shutdown)?;
    agent.run(&shutdown);
    for t in extra {
        let _ = t.join();
    }
    Ok(0)
}

fn bind(mut config: AgentConfig, defaults: bool) -> Result<Agent, Failure> {
    let first = Agent::bind(config.clone());
    // A host without IPv6 still serves IPv4 when no address was given.
    if first.is_err() && defaults {
        config.binds.truncate(1);
        return Agent::bind(config)
            .map_err(|e| Failure::new(exit::FAILED, connect::engine_error(e)));
    }
    first.map_err(|e| Failure::new(exit::FAILED, e))
}
