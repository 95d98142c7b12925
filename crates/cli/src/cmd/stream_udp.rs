//! `mtuperf stream --udp`: paced UDP datagram streams, one run per rate (a list of
//! rates is a sweep with a knee), each stored as it finishes.
use std::sync::atomic::Ordering;

use mtuperf_engine::client::Session;
use mtuperf_engine::stream::udp;
use mtuperf_proto::msg::udp::{MAX_UDP_BLOCK, MIN_UDP_BLOCK};
use mtuperf_report::stream::udp::{self as ru, Document, RunDoc, Sweep};

pub use crate::args::stream_udp::{Common, UdpArgs};
use crate::connect;
use crate::exit::{CmdResult, Failure};
use crate::global::Global;
use crate::history;
use crate::interrupt;
use crate::live::stream_udp::Printer;

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
    let stop = interrupt::flag();
    let printer = Printer {
        live: c.interval.is_some() && !c.json,
    };
    let sweeping = u.rate.0.len() > 1;
    // A sweep runs each rate once (--repeat times each); a single rate --repeat times.
    let plan: Vec<u64> = u
        .rate
        .0
        .iter()
        .flat_map(|&r| std::iter::repeat_n(r, c.repeat as usize))
        .collect();
    let mut runs = Vec::new();
    for (i, &rate) in plan.iter().enumerate() {
        let session = Session::connect(c.target, &opts).map_err(connect::engine_failure)?;
        let result = udp::run(&session, &c.config(rate, u.udp_io), &stop, &printer)
            .map_err(connect::engine_failure);
        session.close();
        let mut run = RunDoc::new(result?);
        if !c.json {
            if i == 0 {
                out!("{}", ru::header(&run.result));
            }
            if plan.len() == 1 {
                out!("{}", ru::summary_text(&run));
            } else {
                outln!("{}", ru::run_line(i, &run));
            }
        }
        run.run_id = history::store_record(
            store.as_ref(),
            &run,
            history::Place {
                target: c.target,
                group: None,
                label: c.label,
            },
        )?;
        if let (Some(id), false, 1) = (run.run_id, c.json, plan.len()) {
            outln!("stored as run {id}");
        }
        runs.push(run);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    let sweep = sweeping.then(|| Sweep::new(&runs, u.max_loss));
    let doc = Document::new(runs, sweep);
    if c.json {
        crate::out::json(&doc);
    } else if doc.runs.len() > 1 {
        out!("{}", ru::text(&doc));
    }
    let why = doc
        .runs
        .iter()
        .find_map(|r| r.result.interrupt_reason.as_deref());
    Ok(interrupt::measured_exit(&stop, why, 0))
}
