//! `mtuperf stream`: bulk TCP throughput.
use std::net::IpAddr;
use std::sync::atomic::Ordering;

use mtuperf_engine::client::Session;
use mtuperf_engine::stream;
use mtuperf_report::stream::{self as rs, Document, RunDoc};

use crate::args::stream::StreamArgs;
use crate::connect;
use crate::exit::CmdResult;
use crate::global::Global;
use crate::heading;
use crate::history;
use crate::interrupt;
use crate::live::stream::Printer;
use crate::output::{self, Format, Output};

/// stream's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str = "text (the default), or json: one document of schema mtuperf.stream/2 (mtuperf.stream-udp/1 with --udp)";
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
    let stop = interrupt::flag();
    let printer = Printer {
        live: a.test.interval.is_some() && !json,
        omit_ns: params.request.omit_ms * 1_000_000,
        bar: std::sync::Mutex::new(indicatif::ProgressBar::hidden()),
    };
    let mut runs = Vec::new();
    for i in 0..a.repeat {
        let session =
            Session::connect(&peer.target, &peer.opts).map_err(connect::engine_failure)?;
        let progress = crate::progress::timed(&params.request, json || printer.live);
        if let Ok(mut bar) = printer.bar.lock() {
            *bar = progress.clone();
        }
        let result =
            stream::client::run_pinned(&session, &params, a.placement.cpus(), &stop, &printer)
                .map_err(connect::engine_failure);
        progress.finish_and_clear();
        session.close();
        let mut run = RunDoc::new(result?);
        run.run_id = history::store_record(
            store.as_ref(),
            &run,
            history::Place {
                target: &a.target,
                group: None,
                label: a.label.as_deref(),
            },
        )?;
        if !json {
            if a.repeat == 1 {
                out!("{}", rs::header(&run.result));
                out!("{}", rs::summary_text(&run));
            } else {
                if i == 0 {
                    out!("{}", rs::header(&run.result));
                }
                outln!("{}", rs::run_line(i as usize, &run));
            }
        }
        runs.push(run);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    let doc = Document::new(runs);
    if json {
        crate::out::json(&doc);
    } else if doc.runs.len() > 1 && doc.summary.is_some() {
        // The repetitions' summary alone: each run was printed as it finished.
        out!(
            "{}",
            rs::text(&Document {
                runs: Vec::new(),
                ..doc.clone()
            })
        );
    }
    let why = doc
        .runs
        .iter()
        .find_map(|r| r.result.interrupt_reason.as_deref());
    Ok(interrupt::measured_exit(&stop, why, 0))
}
