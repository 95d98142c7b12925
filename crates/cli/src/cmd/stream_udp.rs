//! `mtuperf stream --udp`: paced UDP datagram streams, one run per rate (a list of
//! rates is a sweep with a knee), each stored as it finishes.
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use mtuperf_engine::client::Session;
use mtuperf_engine::kind::Measurement;
use mtuperf_engine::stream::udp;
use mtuperf_engine::EngineError;
use mtuperf_proto::msg::udp::{UdpIo, MAX_UDP_BLOCK, MIN_UDP_BLOCK};
use mtuperf_report::stream::udp::{self as ru, Document, RunDoc, Sweep};

pub use crate::args::stream_udp::{Common, UdpArgs};
use crate::connect;
use crate::exit::{CmdResult, Failure};
use crate::global::Global;
use crate::history;
use crate::interrupt;
use crate::live::stream_udp::Printer;
use crate::series::{self, Connect, Kind, Series};

pub fn run(g: &Global, c: &Common<'_>, u: &UdpArgs) -> CmdResult {
    let block = c.block.unwrap_or(8192);
    if !(MIN_UDP_BLOCK..=MAX_UDP_BLOCK).contains(&block) {
        return Err(Failure::bad_value(
            "--block",
            &block.to_string(),
            &format!("{MIN_UDP_BLOCK} to {MAX_UDP_BLOCK} bytes with --udp"),
            "a datagram carries a 40-byte header and at most 65507 bytes over IPv4; e.g. --block 8K",
        ));
    }
    let store = history::open_store(g)?;
    let opts = connect::connect_options(g, c.bind)?;
    let kind = Udp {
        common: c,
        io: u.udp_io,
        printer: Printer {
            live: c.interval.is_some() && !c.json,
            out: crate::out::current(),
        },
        sweeping: u.rate.0.len() > 1,
        max_loss: u.max_loss,
    };
    // A sweep runs each rate once (--repeat times each); a single rate --repeat times.
    let plan: Vec<u64> = u
        .rate
        .0
        .iter()
        .flat_map(|&r| std::iter::repeat_n(r, c.repeat as usize))
        .collect();
    Series {
        kind: &kind,
        plan,
        connect: Connect::EachRun(c.target, &opts),
        target: c.target,
        store: store.as_ref(),
        json: c.json,
        stop: interrupt::flag(),
    }
    .run()
}

/// The UDP stream kind as the series driver runs it: one run per rate of the plan.
struct Udp<'a> {
    common: &'a Common<'a>,
    io: UdpIo,
    printer: Printer,
    sweeping: bool,
    max_loss: f64,
}

impl Kind for Udp<'_> {
    /// The offered rate (0: max).
    type Step = u64;
    type Run = RunDoc;
    type Doc = Document;

    fn measure(
        &self,
        session: Option<&Session>,
        rate: u64,
        stop: &Arc<AtomicBool>,
    ) -> Result<RunDoc, EngineError> {
        let session = series::needs(session)?;
        let config = self.common.config(rate, self.io);
        udp::UdpStream
            .run(session, &config, stop, &self.printer)
            .map(RunDoc::new)
    }

    fn set_run_id(run: &mut RunDoc, id: Option<i64>) {
        run.run_id = id;
    }

    fn label(&self, _rate: u64) -> Option<String> {
        self.common.label.map(str::to_string)
    }

    fn print_run(&self, i: usize, planned: usize, run: &RunDoc) {
        if i == 0 {
            out!("{}", ru::header(&run.result));
        }
        if planned == 1 {
            out!("{}", ru::summary_text(run));
        } else {
            outln!("{}", ru::run_line(i, run));
        }
    }

    fn says_stored(&self, planned: usize) -> bool {
        planned == 1
    }

    fn document(&self, runs: Vec<RunDoc>) -> Document {
        let sweep = self.sweeping.then(|| Sweep::new(&runs, self.max_loss));
        Document::new(runs, sweep)
    }

    fn print_end(&self, doc: &Document) {
        if doc.runs.len() > 1 {
            out!("{}", ru::text(doc));
        }
    }

    fn interrupt_reason(doc: &Document) -> Option<String> {
        doc.runs
            .iter()
            .find_map(|r| mtuperf_report::interrupt::words(&r.result.interrupted_by))
    }
}
