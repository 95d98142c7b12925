//! `mtuperf rr`: block request/response under load (the Cache Fusion test).
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use mtuperf_engine::client::{ConnectOptions, Session};
use mtuperf_engine::config::RrConfig;
use mtuperf_engine::kind::Measurement;
use mtuperf_engine::rr;
use mtuperf_engine::EngineError;
use mtuperf_report::rr::{self as rep, Document, StepDoc};

use crate::args::rr::RrArgs;
use crate::exit::{self, CmdResult};
use crate::global::Global;
use crate::heading;
use crate::history;
use crate::interrupt;
use crate::live::rr::Printer;
use crate::output::{self, Format, Output};
use crate::series::{Connect, Kind, Series};

/// rr's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str = "text (the default), or json: one document of schema mtuperf.rr/6";
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
    let live = a.test.interval.is_some() && !json;
    // With --from, this host sends nothing to the target: the hosts' agents do.
    let connect = if a.from.is_empty() {
        Connect::Once(&peer.target, &peer.opts)
    } else {
        crate::args::rr::check_from(&a.from, &loads, peer.opts.key.is_some())?;
        Connect::Never
    };
    let kind = Steps {
        args: a,
        opts: &peer.opts,
        sweep: loads.clone(),
        printer: Printer {
            live,
            tty: !live && crate::progress::stderr_is_terminal(),
            out: crate::out::current(),
            clients: std::sync::atomic::AtomicU32::new(0),
            total_s: a.test.time.as_secs_f64(),
        },
    };
    Series {
        kind: &kind,
        plan: loads,
        connect,
        target: &a.target,
        store: store.as_ref(),
        json,
        stop: interrupt::flag(),
    }
    .run()
}

/// The rr kind as the series driver runs it: one step per load (`--clients` list).
struct Steps<'a> {
    args: &'a Args,
    opts: &'a ConnectOptions,
    sweep: Vec<u32>,
    printer: Printer,
}

impl Kind for Steps<'_> {
    /// The step's clients.
    type Step = u32;
    type Run = StepDoc;
    type Doc = Document;

    fn measure(
        &self,
        session: Option<&Session>,
        clients: u32,
        stop: &Arc<AtomicBool>,
    ) -> Result<StepDoc, EngineError> {
        let a = self.args;
        let params = RrConfig {
            cpus: a.placement.cpus(),
            agent_cpus: a.placement.agent_cpus(),
            ..a.test.config(clients)
        };
        self.printer.clients.store(clients, Ordering::Relaxed);
        if self.printer.live {
            let s = if clients == 1 { "" } else { "s" };
            outln!("step: {clients} client{s}");
        }
        match session {
            Some(s) => rr::Rr.run(s, &params, stop, &self.printer),
            None => rr::run_from(&a.from, &a.target, self.opts, &params, stop),
        }
        .map(StepDoc::new)
    }

    fn set_run_id(run: &mut StepDoc, id: Option<i64>) {
        run.run_id = id;
    }

    fn label(&self, clients: u32) -> Option<String> {
        Some(
            self.args
                .label
                .clone()
                .unwrap_or_else(|| format!("clients={clients}")),
        )
    }

    fn print_run(&self, _i: usize, _planned: usize, step: &StepDoc) {
        out!("{}", rep::header(&step.result));
        out!("{}", rep::step_text(step));
    }

    fn says_stored(&self, _planned: usize) -> bool {
        true
    }

    fn document(&self, steps: Vec<StepDoc>) -> Document {
        Document::new(steps)
    }

    fn print_end(&self, doc: &Document) {
        if let Some(sw) = &doc.sweep {
            out!("{}", rep::sweep_text(sw));
        }
    }

    fn interrupt_reason(doc: &Document) -> Option<String> {
        doc.interrupt_reason()
    }

    fn ok_code(&self, doc: &Document) -> u8 {
        let corrupt = doc.corrupt();
        if self.args.test.verify && corrupt > 0 {
            errln!("mtuperf rr: --verify found {corrupt} corrupted block(s)");
            exit::CHECK_FAILED
        } else {
            0
        }
    }

    fn group(&self) -> Option<(mtuperf_store::RunKind, String)> {
        (self.sweep.len() > 1).then(|| {
            let params = serde_json::json!({ "clients": self.sweep });
            (mtuperf_store::RunKind::Rr, params.to_string())
        })
    }

    fn group_summary(&self, doc: &Document) -> String {
        serde_json::to_string(&doc.sweep).unwrap_or_default()
    }
}
