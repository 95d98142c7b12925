//! `mtuperf demo`: the main job on an embedded default, no second machine needed.
//! As root (CAP_NET_ADMIN, CAP_SYS_ADMIN) it builds a two-path lab through netlink
//! (no iproute2, nftables or ethtool needed)
//! (MTU 1500 and 9000, offloads off like a NIC without segmentation offload), runs a
//! compact `compare` (8K stream and 8K UDP rr, interleaved repetitions) from the lab's
//! client host, prints the verdict, writes report.html and removes the lab.
//! Otherwise it says why and runs stream over loopback against an in-process agent.
//! The orchestration is in [`crate::groups::demo`].
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use mtuperf_report::stream::{self as rs, RunDoc};

use crate::common;
use crate::exit::{self, CmdResult};
use crate::global::Global;
use crate::groups::demo::{self, DemoObserver};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Skip the lab and run on loopback.
    #[arg(long)]
    loopback: bool,
    /// Length of each run.
    #[arg(long, default_value = "2s", value_parser = common::parse_test_time)]
    time: Duration,
    /// Repetitions per path and test (interleaved std, jumbo, std, jumbo ...).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=50))]
    repeat: u32,
    /// Where the lab demo writes its HTML report.
    #[arg(long, short = 'o', default_value = "report.html")]
    output: PathBuf,
}

struct Printer;

impl DemoObserver for Printer {
    fn say(&mut self, line: &str) {
        outln!("{line}");
    }
    fn stream_run(&mut self, run: &RunDoc) {
        out!("{}", rs::header(&run.result));
        outln!("{}", rs::summary_text(run));
    }
}

// The dispatcher hands every subcommand its Args by value.
#[allow(clippy::needless_pass_by_value)]
pub fn run(g: &Global, a: Args) -> CmdResult {
    if !a.loopback {
        match mtuperf_lab::check_environment() {
            Ok(()) => return lab_demo(g, &a),
            Err(e) => outln!(
                "demo: no lab ({e}); running on loopback instead. Loopback has one MTU, so this shows throughput, CPU and the measurement itself, but not what jumbo frames change, no path check and no report.html.\n"
            ),
        }
    }
    demo::loopback(g, a.time, &mut Printer)?;
    Ok(0)
}

fn lab_demo(g: &Global, a: &Args) -> CmdResult {
    // The lab is removed by the time the comparison comes back.
    let doc = demo::lab(g, a.repeat, a.time, &mut Printer)?;
    outln!();
    out!("{}", mtuperf_report::compare::text(&doc));
    std::fs::write(&a.output, mtuperf_report::html::html(&doc))
        .with_context(|| format!("writing {}", a.output.display()))?;
    outln!(
        "demo: report written to {} (open it in a browser); lab removed. Reproduce by hand: README, \"Reproduce the documents' experiments on one machine\".",
        a.output.display()
    );
    Ok(if doc.interrupted {
        exit::INTERRUPTED
    } else {
        0
    })
}
