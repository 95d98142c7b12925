//! `mtuperf stream`: bulk TCP throughput.
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mtuperf_engine::client::Session;
use mtuperf_engine::config::{bounds, StreamConfig};
use mtuperf_engine::sampler::Sampler;
use mtuperf_engine::stream::{self, End, StreamObserver, StreamParams};
use mtuperf_proto::msg::{Direction, IntervalSample, StreamLimit, StreamReady};
use mtuperf_report::stream::{self as rs, Document, RunDoc};

use crate::common::{
    self, parse_block, parse_interval, parse_test_time, parse_total, parse_window,
};
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The agent: HOST, HOST:PORT or [IPv6]:PORT (default port 7878).
    target: String,
    /// Local address to send from (chooses the interface).
    #[arg(long, value_name = "LOCAL_ADDR")]
    bind: Option<IpAddr>,
    /// Bytes per write() and read(): 8K, 8KiB, 9000, 128K ... [default: 128K; 8K
    /// with --udp, where it is the datagram size]
    #[arg(long, value_parser = parse_block)]
    block: Option<u32>,
    /// Test length.
    #[arg(long, default_value = "10s", value_parser = parse_test_time, conflicts_with_all = ["bytes", "file"])]
    time: Duration,
    /// Send this many bytes per direction instead of running for a time.
    #[arg(long, value_parser = parse_total, conflicts_with = "file")]
    bytes: Option<u64>,
    /// Send this file's content (as perl-sockets does); client → agent only.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["reverse", "bidir"])]
    file: Option<PathBuf>,
    /// Parallel TCP connections per direction.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(bounds::MAX_STREAMS)))]
    streams: u32,
    /// The agent sends, this end receives.
    #[arg(long, conflicts_with = "bidir")]
    reverse: bool,
    /// Both directions at once.
    #[arg(long)]
    bidir: bool,
    /// Socket buffer size to request (SO_SNDBUF/SO_RCVBUF); the granted size is reported.
    #[arg(long, value_parser = parse_window)]
    window: Option<u32>,
    /// TCP maximum segment size to request (TCP_MAXSEG), 88 to 65495.
    #[arg(long, value_parser = clap::value_parser!(u32).range(88..=65495))]
    mss: Option<u32>,
    /// Print live per-interval lines of both ends.
    #[arg(long, value_parser = parse_interval)]
    interval: Option<Duration>,
    /// Warm-up excluded from the summary goodput (still reported).
    #[arg(long, default_value = "0s", value_parser = common::parse_any_duration)]
    omit: Duration,
    /// Receive coalescing: after a read that drained the socket, wait up to this long
    /// before reading again (0 reads again at once, like a plain blocking loop). Never
    /// waits while data is queued nor in the first 100 ms, and never pauses longer than
    /// a quarter of the receive buffer takes to fill. 0 to 10ms.
    #[arg(long, default_value = "200us", value_parser = common::parse_rx_coalesce)]
    rx_coalesce: Duration,
    /// Repeat the whole run N times and summarise (mean, median, stddev, min, max, 95% CI).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    repeat: u32,
    /// Print one JSON document (schema mtuperf.stream/1) instead of text.
    #[arg(long)]
    json: bool,
    /// Label stored with the run in the history (e.g. the path's name).
    #[arg(long)]
    label: Option<String>,
    #[command(flatten)]
    udp: super::stream_udp::UdpArgs,
}

struct Printer {
    live: bool,
    omit_ns: u64,
    /// The running repetition's progress bar: its message shows the current rate.
    bar: std::sync::Mutex<indicatif::ProgressBar>,
}

impl StreamObserver for Printer {
    fn ready(&self, _r: &StreamReady, _s: &Sampler) {
        if self.live {
            outln!("{}", rs::interval_header());
        }
    }
    fn interval(&self, end: End, s: &IntervalSample) {
        if self.live {
            outln!("{}", rs::interval_line(end, s, self.omit_ns));
        } else if end == End::Client {
            if let Ok(bar) = self.bar.lock() {
                bar.set_message(mtuperf_report::live::stream_rate(s));
            }
        }
    }
}

fn config(a: &Args) -> Result<StreamConfig, Failure> {
    if let Some(ms) = a.bytes.map(|_| 0).or(Some(a.time.as_millis() as u64)) {
        if a.bytes.is_none() && a.file.is_none() && a.omit.as_millis() as u64 >= ms {
            return Err(Failure::usage(
                "--omit",
                &humantime::format_duration(a.omit).to_string(),
                "less than --time",
                "the warm-up must leave part of the run to summarise",
            ));
        }
    }
    Ok(StreamConfig {
        streams: a.streams,
        direction: if a.bidir {
            Direction::Bidir
        } else if a.reverse {
            Direction::Reverse
        } else {
            Direction::Forward
        },
        block: a.block.unwrap_or(128 * 1024),
        limit: match a.bytes {
            Some(total) => StreamLimit::Bytes { total },
            None => StreamLimit::Time {
                ms: a.time.as_millis() as u64,
            },
        },
        window: a.window,
        mss: a.mss,
        interval: a.interval,
        omit: a.omit,
        rx_coalesce: a.rx_coalesce,
    })
}

fn udp_common(a: &Args) -> super::stream_udp::Common<'_> {
    super::stream_udp::Common {
        target: &a.target,
        bind: a.bind,
        block: a.block,
        time: a.time,
        bytes: a.bytes,
        streams: a.streams,
        reverse: a.reverse,
        bidir: a.bidir,
        window: a.window,
        interval: a.interval,
        repeat: a.repeat,
        json: a.json,
        label: a.label.as_deref(),
    }
}

fn load_file(path: &PathBuf) -> Result<(String, Arc<[u8]>), Failure> {
    let data = std::fs::read(path)
        .with_context(|| format!("reading --file {}", path.display()))
        .map_err(|e| Failure::new(exit::USAGE, e))?;
    if data.is_empty() {
        return Err(Failure::usage(
            "--file",
            &path.display().to_string(),
            "a non-empty file",
            "",
        ));
    }
    Ok((path.display().to_string(), Arc::from(data)))
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    if a.udp.udp {
        return super::stream_udp::run(g, &udp_common(&a), &a.udp);
    }
    crate::output::json_flag(a.json);
    let params = StreamParams {
        file: a.file.as_ref().map(load_file).transpose()?,
        ..config(&a)?.params()
    };
    let store = common::open_store(g)?;
    let opts = common::connect_options(g, a.bind)?;
    let stop = common::interrupt_flag();
    let printer = Printer {
        live: a.interval.is_some() && !a.json,
        omit_ns: params.request.omit_ms * 1_000_000,
        bar: std::sync::Mutex::new(indicatif::ProgressBar::hidden()),
    };
    let mut runs = Vec::new();
    for i in 0..a.repeat {
        let session = Session::connect(&a.target, &opts).map_err(common::engine_failure)?;
        let progress = crate::progress::timed(&params.request, a.json || printer.live);
        if let Ok(mut bar) = printer.bar.lock() {
            *bar = progress.clone();
        }
        let result =
            stream::run(&session, &params, &stop, &printer).map_err(common::engine_failure);
        progress.finish_and_clear();
        session.close();
        let mut run = RunDoc::new(result?);
        run.run_id = common::store_record(
            store.as_ref(),
            &run,
            common::Place {
                target: &a.target,
                group: None,
                label: a.label.as_deref(),
            },
        )?;
        if !a.json {
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
    if a.json {
        crate::out::json(&doc);
    } else if doc.runs.len() > 1 {
        if let Some(s) = &doc.summary {
            let _ = s;
            out!(
                "{}",
                rs::text(&Document {
                    runs: Vec::new(),
                    ..doc.clone()
                })
            );
        }
    }
    let why = doc
        .runs
        .iter()
        .find_map(|r| r.result.interrupt_reason.as_deref());
    Ok(common::measured_exit(&stop, why, 0))
}
