//! `mtuperf rr`: block request/response under load (the Cache Fusion test).
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mtuperf_engine::client::Session;
use mtuperf_engine::config::{bounds, RrConfig};
use mtuperf_engine::rr::{self, RrInterval, RrObserver, MAX_UDP_BLOCK};
use mtuperf_proto::msg::rr::{RrHooks, RrProto};
use mtuperf_proto::msg::RrReady;
use mtuperf_report::rr::{self as rep, Document, StepDoc};

use crate::common::{self, parse_any_duration, parse_interval, parse_test_time};
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Proto {
    Udp,
    Tcp,
}

#[derive(Debug, clap::Args)]
#[allow(clippy::struct_excessive_bools)]
pub struct Args {
    /// The agent: HOST, HOST:PORT or [IPv6]:PORT (default port 7878).
    target: String,
    /// Local address to send from (chooses the interface).
    #[arg(long, value_name = "LOCAL_ADDR")]
    bind: Option<IpAddr>,
    /// udp: one datagram per block (IP fragments it above the MTU); tcp: one persistent
    /// connection per client.
    #[arg(long, value_enum, default_value = "udp")]
    proto: Proto,
    /// Block size the agent answers with (bytes after mtuperf's 40-byte header), 1 B to 1 MiB
    /// (udp: at most 65467 B).
    #[arg(long, default_value = "8K", value_parser = parse_rr_block)]
    block: u32,
    /// Request size (bytes after the 40-byte header), 0 to 65467 B.
    #[arg(long, default_value = "128", value_parser = parse_request)]
    request: u32,
    /// Concurrent clients; a comma-separated list runs a sweep (e.g. 1,2,4,8,16,32,64,128,256).
    /// Default 1 (closed loop) or 16 (with --rate).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=i64::from(bounds::MAX_CLIENTS)))]
    clients: Vec<u32>,
    /// Open loop: requests per second across all clients, latency measured from each
    /// request's due time. Without it, each client asks again as soon as its block arrives.
    #[arg(long, value_parser = parse_rate)]
    rate: Option<u64>,
    /// Agent serving threads (the "LMS processes"); default: the agent's core count.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(bounds::MAX_WORKERS)))]
    workers: Option<u32>,
    /// Client threads, each owning its share of the clients; default: one per core. Add
    /// threads when rr warns that the client's threads were busy.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(bounds::MAX_THREADS)))]
    threads: Option<u32>,
    /// Length of each load step.
    #[arg(long, default_value = "10s", value_parser = parse_test_time)]
    time: Duration,
    /// UDP: a request unanswered this long is counted lost and re-sent under a new
    /// sequence number (1 ms to 60 s).
    #[arg(long, default_value = "100ms", value_parser = parse_timeout)]
    timeout: Duration,
    /// Check every block's checksum (catches corruption such as broken checksum offload).
    #[arg(long)]
    verify: bool,
    /// Both ends request and serve blocks at the same time: the agent also requests
    /// blocks of the same sizes, clients and load from a responder on this host.
    #[arg(long)]
    bidir: bool,
    /// Print live per-interval lines.
    #[arg(long, value_parser = parse_interval)]
    interval: Option<Duration>,
    /// Print one JSON document (schema mtuperf.rr/1) instead of text.
    #[arg(long)]
    json: bool,
    /// Label stored with every step in the history (e.g. the path's name; a report
    /// draws one curve per label). Default: `clients=N`.
    #[arg(long)]
    label: Option<String>,
    /// Test hook (agent needs --test-hooks): stall every agent worker once for this long.
    #[arg(long, hide = true, value_parser = parse_any_duration)]
    hook_stall: Option<Duration>,
    /// Test hook: when the stall starts, after Go.
    #[arg(long, hide = true, value_parser = parse_any_duration)]
    hook_stall_after: Option<Duration>,
    /// Test hook: flip one byte of response number N (1-based).
    #[arg(long, hide = true)]
    hook_corrupt: Option<u64>,
    #[command(flatten)]
    placement: crate::placement_args::PlacementArgs,
}

/// --rate: 1 to 100M requests/s, SI suffixes allowed.
fn parse_rate(s: &str) -> Result<u64, String> {
    common::count_in(
        s,
        1,
        bounds::MAX_RATE,
        " requests/s (e.g. 5000, 10k, 2.5k, 1M)",
    )
}

fn parse_rr_block(s: &str) -> Result<u32, String> {
    let v = common::parse_block(s)?;
    if u64::from(v) > bounds::MAX_RR_BLOCK {
        return Err(format!("{v} is out of range: allowed 1 B to 1.0 MiB"));
    }
    Ok(v)
}

fn parse_request(s: &str) -> Result<u32, String> {
    let v = mtuperf_proto::units::Bytes::parse(s)
        .map_err(|e| e.to_string())?
        .0;
    if v > u64::from(bounds::MAX_REQUEST) {
        return Err(format!(
            "{v} is out of range: allowed 0 to {} B",
            bounds::MAX_REQUEST
        ));
    }
    Ok(v as u32)
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = mtuperf_proto::units::parse_duration(s).map_err(|e| e.to_string())?;
    if d < bounds::MIN_RR_TIMEOUT || d > bounds::MAX_RR_TIMEOUT {
        return Err(format!("{s} is out of range: allowed 1ms to 60s"));
    }
    Ok(d)
}

struct Printer {
    live: bool,
    /// No `--interval` lines and stderr is a terminal: one status line per second.
    tty: bool,
    /// The step's client count and length, for the status line.
    clients: std::sync::atomic::AtomicU32,
    total_s: f64,
}

impl RrObserver for Printer {
    fn ready(&self, _r: &RrReady) {
        if self.live {
            outln!("{}", rep::interval_header());
        }
    }
    fn interval(&self, s: &RrInterval) {
        if self.live {
            outln!("{}", rep::interval_line(s));
        } else if self.tty {
            let c = self.clients.load(Ordering::Relaxed);
            eprintln!("{}", mtuperf_report::live::rr_line(c, self.total_s, s));
        }
    }
}

fn hooks(a: &Args) -> Option<RrHooks> {
    (a.hook_stall.is_some() || a.hook_corrupt.is_some()).then(|| RrHooks {
        stall_ms: a.hook_stall.map_or(0, |d| d.as_millis() as u64),
        stall_after_ms: a.hook_stall_after.map_or(0, |d| d.as_millis() as u64),
        corrupt_response: a.hook_corrupt.unwrap_or(0),
    })
}

fn validate(a: &Args) -> Result<Vec<u32>, Failure> {
    if matches!(a.proto, Proto::Udp) && a.block > MAX_UDP_BLOCK {
        return Err(Failure::usage(
            "--block",
            &a.block.to_string(),
            &format!("1 to {MAX_UDP_BLOCK} B with --proto udp"),
            "a UDP datagram carries at most 65507 B, 40 of them mtuperf's header; use --proto tcp for larger blocks",
        ));
    }
    Ok(if a.clients.is_empty() {
        vec![if a.rate.is_some() { 16 } else { 1 }]
    } else {
        a.clients.clone()
    })
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    crate::output::json_flag(a.json);
    let loads = validate(a)?;
    let store = common::open_store(g)?;
    let opts = common::connect_options(g, a.bind)?;
    let stop = common::interrupt_flag();
    let live = a.interval.is_some() && !a.json;
    let printer = Printer {
        live,
        tty: !live && crate::progress::stderr_is_terminal(),
        clients: std::sync::atomic::AtomicU32::new(0),
        total_s: a.time.as_secs_f64(),
    };
    let session = Session::connect(&a.target, &opts).map_err(common::engine_failure)?;
    let group = match (&store, loads.len() > 1) {
        (Some(s), true) => s
            .create_group("rr", &serde_json::json!({ "clients": loads }).to_string())
            .ok(),
        _ => None,
    };
    let mut steps: Vec<StepDoc> = Vec::new();
    for &clients in &loads {
        let params = RrConfig {
            proto: match a.proto {
                Proto::Udp => RrProto::Udp,
                Proto::Tcp => RrProto::Tcp,
            },
            block: a.block,
            request: a.request,
            workers: a.workers,
            clients,
            time: a.time,
            rate: a.rate,
            timeout: a.timeout,
            verify: a.verify,
            threads: a.threads,
            interval: a.interval.unwrap_or(Duration::from_secs(1)),
            bidir: a.bidir,
            hooks: hooks(a),
            cpus: a.placement.cpus(),
            agent_cpus: a.placement.agent_cpus(),
        };
        printer.clients.store(clients, Ordering::Relaxed);
        if printer.live {
            outln!(
                "step: {clients} client{}",
                if clients == 1 { "" } else { "s" }
            );
        }
        let result = rr::run(&session, &params, &stop, &printer).map_err(common::engine_failure)?;
        let mut step = StepDoc::new(result);
        // Stored before the next step starts.
        step.run_id = common::store_record(
            store.as_ref(),
            &step,
            common::Place {
                target: &a.target,
                group,
                label: Some(
                    &a.label
                        .clone()
                        .unwrap_or_else(|| format!("clients={clients}")),
                ),
            },
        )?;
        if !a.json {
            out!("{}", rep::header(&step.result));
            out!("{}", rep::step_text(&step));
            if let Some(id) = step.run_id {
                outln!("stored as run {id}");
            }
        }
        steps.push(step);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    session.close();
    let doc = Document::new(steps);
    if let (Some(s), Some(id)) = (&store, group) {
        let _ = s.finish_group(id, &serde_json::to_string(&doc.sweep).unwrap_or_default());
    }
    if a.json {
        crate::out::json(&doc);
    } else if let Some(sw) = &doc.sweep {
        out!("{}", rep::sweep_text(sw));
    }
    let corrupt: u64 = doc
        .steps
        .iter()
        .map(|s| {
            let reverse = s.result.reverse.as_ref();
            s.result.client.counts.corrupt + reverse.map_or(0, |v| v.requester.counts.corrupt)
        })
        .sum();
    let why = doc
        .steps
        .iter()
        .find_map(|s| s.result.interrupt_reason.as_deref());
    let ok = if a.verify && corrupt > 0 {
        eprintln!("mtuperf rr: --verify found {corrupt} corrupted block(s)");
        exit::CHECK_FAILED
    } else {
        0
    };
    Ok(common::measured_exit(&stop, why, ok))
}
