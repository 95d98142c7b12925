//! `mtuperf rr`: block request/response under load (the Cache Fusion test).
use std::net::IpAddr;
use std::sync::atomic::Ordering;

use mtuperf_engine::client::Session;
use mtuperf_engine::config::RrConfig;
use mtuperf_engine::rr;
use mtuperf_report::rr::{self as rep, Document, StepDoc};

use crate::args::rr::RrArgs;
use crate::connect;
use crate::exit::{self, CmdResult};
use crate::global::Global;
use crate::heading;
use crate::history;
use crate::interrupt;
use crate::live::rr::Printer;
use crate::output::{self, Format, Output};

/// rr's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str = "text (the default), or json: one document of schema mtuperf.rr/2";
    const HINT: &'static str = "rr prints its result as text or as its JSON document; stored runs as CSV: `mtuperf export`, as HTML: `mtuperf report`";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent: HOST, HOST:PORT or [IPv6]:PORT (default port 7878); with --ssh, the
    /// node as ssh reaches it ([USER@]HOST[:PORT]).
    target: String,
    #[command(flatten)]
    test: RrArgs,
    /// Drive the load from these hosts' keyed agents instead of this host (comma-separated
    /// HOST[:PORT]): --clients and --rate are totals split over them, --threads is per
    /// host, --workers per host's session on TARGET. Needs --key-file (every agent's key).
    #[arg(long = "from", value_name = "HOST[:PORT]", value_delimiter = ',',
          conflicts_with_all = ["bind", "bidir", "interval", "cpu", "agent_cpu", "ssh"],
          help_heading = heading::LOAD)]
    from: Vec<String>,
    /// Local address to send from (chooses the interface).
    #[arg(long, value_name = "LOCAL_ADDR", help_heading = heading::PLACEMENT)]
    bind: Option<IpAddr>,
    #[command(flatten)]
    placement: crate::placement_args::PlacementArgs,
    #[command(flatten)]
    output: Output<Formats>,
    /// Label stored with every step in the history (e.g. the path's name; a report
    /// draws one curve per label). Default: `clients=N`.
    #[arg(long, help_heading = heading::HISTORY)]
    label: Option<String>,
    #[command(flatten)]
    ssh: crate::args::ssh::SshArgs,
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    let json = a.output.pick() == Format::Json;
    let loads = a.test.loads()?;
    let store = history::open_store(g)?;
    let peer = crate::ssh::peer(g, &a.ssh, &a.target, a.bind, a.test.longest(&loads))?;
    let stop = interrupt::flag();
    let live = a.test.interval.is_some() && !json;
    let printer = Printer {
        live,
        tty: !live && crate::progress::stderr_is_terminal(),
        clients: std::sync::atomic::AtomicU32::new(0),
        total_s: a.test.time.as_secs_f64(),
    };
    // With --from, this host sends nothing to the target: the hosts' agents do.
    let session = if a.from.is_empty() {
        Some(Session::connect(&peer.target, &peer.opts).map_err(connect::engine_failure)?)
    } else {
        crate::args::rr::check_from(&a.from, &loads, peer.opts.key.is_some())?;
        None
    };
    let group = match (&store, loads.len() > 1) {
        (Some(s), true) => s
            .create_group("rr", &serde_json::json!({ "clients": loads }).to_string())
            .ok(),
        _ => None,
    };
    let mut steps: Vec<StepDoc> = Vec::new();
    // A step that fails ends the sweep, but the steps already measured are still
    // printed (they are stored already) before the failure is reported.
    let mut failed = None;
    for &clients in &loads {
        let params = RrConfig {
            cpus: a.placement.cpus(),
            agent_cpus: a.placement.agent_cpus(),
            ..a.test.config(clients)
        };
        printer.clients.store(clients, Ordering::Relaxed);
        let s = if clients == 1 { "" } else { "s" };
        if printer.live {
            outln!("step: {clients} client{s}");
        }
        let result = match &session {
            Some(s) => rr::run(s, &params, &stop, &printer),
            None => rr::run_from(&a.from, &a.target, &peer.opts, &params, &stop),
        };
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                failed = Some(connect::engine_failure(e));
                break;
            }
        };
        let mut step = StepDoc::new(result);
        // Stored before the next step starts.
        step.run_id = history::store_record(
            store.as_ref(),
            &step,
            history::Place {
                target: &a.target,
                group,
                label: Some(
                    &a.label
                        .clone()
                        .unwrap_or_else(|| format!("clients={clients}")),
                ),
            },
        )?;
        if !json {
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
    if let Some(s) = session {
        s.close();
    }
    let doc = Document::new(steps);
    let measured = !doc.steps.is_empty();
    if let (Some(s), Some(id), true) = (&store, group, measured) {
        let _ = s.finish_group(id, &serde_json::to_string(&doc.sweep).unwrap_or_default());
    }
    if json && measured {
        crate::out::json(&doc);
    } else if let Some(sw) = &doc.sweep {
        out!("{}", rep::sweep_text(sw));
    }
    // The steps measured are printed; then the failure that ended the sweep, if any.
    if let Some(f) = failed {
        return Err(f);
    }
    let (corrupt, why) = (doc.corrupt(), doc.interrupt_reason());
    let ok = if a.test.verify && corrupt > 0 {
        eprintln!("mtuperf rr: --verify found {corrupt} corrupted block(s)");
        exit::CHECK_FAILED
    } else {
        0
    };
    Ok(interrupt::measured_exit(&stop, why, ok))
}
