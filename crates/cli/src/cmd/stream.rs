//! `mtuperf stream`: bulk TCP throughput.
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use mtuperf_engine::client::Session;
use mtuperf_engine::kind::Measurement;
use mtuperf_engine::stream::{self, StreamParams};
use mtuperf_engine::EngineError;
use mtuperf_report::stream::{self as rs, Document, RunDoc};

use crate::args::stream::StreamArgs;
use crate::exit::CmdResult;
use crate::global::Global;
use crate::heading;
use crate::history;
use crate::interrupt;
use crate::live::stream::Printer;
use crate::output::{self, Format, Output};
use crate::series::{self, Connect, Kind, Series};

/// stream's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str = "text (the default), or json: one document of schema mtuperf.stream/7 (mtuperf.stream-udp/5 with --udp)";
    const HINT: &'static str = "stream prints its result as text or as its JSON document; stored runs as CSV: `mtuperf export`, as HTML: `mtuperf report`";
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent: HOST, HOST:PORT or [IPv6]:PORT (default port 7878); with --ssh, the
    /// node as ssh reaches it ([USER@]HOST[:PORT]).
    target: String,
    #[command(flatten)]
    test: StreamArgs,
    /// Repeat the whole run N times and summarise (mean, median, stddev, min, max, 95% CI).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000),
          help_heading = heading::SEND)]
    repeat: u32,
    #[command(flatten)]
    udp: super::stream_udp::UdpArgs,
    /// Local address to send from (chooses the interface).
    #[arg(long, value_name = "LOCAL_ADDR", help_heading = heading::PLACEMENT)]
    bind: Option<IpAddr>,
    #[command(flatten)]
    placement: crate::placement_args::PlacementArgs,
    #[command(flatten)]
    output: Output<Formats>,
    /// Label stored with the run in the history (e.g. the path's name).
    #[arg(long, help_heading = heading::HISTORY)]
    label: Option<String>,
    #[command(flatten)]
    ssh: crate::args::ssh::SshArgs,
}

fn udp_common(a: &Args, json: bool) -> super::stream_udp::Common<'_> {
    let t = &a.test;
    super::stream_udp::Common {
        target: &a.target,
        bind: a.bind,
        block: t.block,
        time: t.time,
        bytes: t.bytes,
        streams: t.streams,
        reverse: t.reverse,
        bidir: t.bidir,
        window: t.window,
        interval: t.interval,
        repeat: a.repeat,
        json,
        label: a.label.as_deref(),
        cpus: a.placement.cpus(),
        agent_cpus: a.placement.agent_cpus(),
    }
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    let json = a.output.pick() == Format::Json;
    if a.udp.udp {
        return super::stream_udp::run(g, &udp_common(&a, json), &a.udp);
    }
    let params = a.test.params(a.placement.agent_cpus())?;
    let store = history::open_store(g)?;
    let time = (a.test.time + std::time::Duration::from_secs(30)) * a.repeat;
    let peer = crate::ssh::peer(g, &a.ssh, &a.target, a.bind, time)?;
    let kind = Tcp {
        printer: Printer {
            live: a.test.interval.is_some() && !json,
            omit_ns: params.request.omit_ms * 1_000_000,
            bar: std::sync::Mutex::new(indicatif::ProgressBar::hidden()),
            out: crate::out::current(),
        },
        params,
        engine: stream::Stream {
            cpus: a.placement.cpus(),
        },
        quiet: json,
        label: a.label.clone(),
    };
    Series {
        kind: &kind,
        plan: vec![(); a.repeat as usize],
        connect: Connect::EachRun(&peer.target, &peer.opts),
        target: &a.target,
        store: store.as_ref(),
        json,
        stop: interrupt::flag(),
    }
    .run()
}

/// The TCP stream kind as the series driver runs it: `--repeat` repetitions.
struct Tcp {
    params: StreamParams,
    engine: stream::Stream,
    printer: Printer,
    /// No progress bar (JSON output).
    quiet: bool,
    label: Option<String>,
}

impl Kind for Tcp {
    type Step = ();
    type Run = RunDoc;
    type Doc = Document;

    fn measure(
        &self,
        session: Option<&Session>,
        (): (),
        stop: &Arc<AtomicBool>,
    ) -> Result<RunDoc, EngineError> {
        let session = series::needs(session)?;
        let progress =
            crate::progress::timed(&self.params.request, self.quiet || self.printer.live);
        if let Ok(mut bar) = self.printer.bar.lock() {
            *bar = progress.clone();
        }
        let result = self.engine.run(session, &self.params, stop, &self.printer);
        progress.finish_and_clear();
        result.map(RunDoc::new)
    }

    fn set_run_id(run: &mut RunDoc, id: Option<i64>) {
        run.run_id = id;
    }

    fn label(&self, (): ()) -> Option<String> {
        self.label.clone()
    }

    fn print_run(&self, i: usize, planned: usize, run: &RunDoc) {
        if i == 0 {
            out!("{}", rs::header(&run.result));
        }
        if planned == 1 {
            out!("{}", rs::summary_text(run));
        } else {
            outln!("{}", rs::run_line(i, run));
        }
    }

    fn says_stored(&self, planned: usize) -> bool {
        planned == 1
    }

    fn document(&self, runs: Vec<RunDoc>) -> Document {
        Document::new(runs)
    }

    fn print_end(&self, doc: &Document) {
        if doc.runs.len() > 1 && doc.summary.is_some() {
            // The repetitions' summary alone: each run was printed as it finished.
            out!(
                "{}",
                rs::text(&Document {
                    runs: Vec::new(),
                    ..doc.clone()
                })
            );
        }
    }

    fn interrupt_reason(doc: &Document) -> Option<String> {
        doc.runs
            .iter()
            .find_map(|r| mtuperf_report::interrupt::words(&r.result.interrupted_by))
    }
}
