//! `mtuperf demo`: the main job on an embedded default, no second machine needed.
//! As root (CAP_NET_ADMIN, CAP_SYS_ADMIN) it builds a two-path lab through netlink
//! (no iproute2, nftables or ethtool needed)
//! (MTU 1500 and 9000, offloads off like a NIC without segmentation offload), runs a
//! compact `compare` (8K stream and 8K UDP rr, interleaved repetitions) from the lab's
//! client host, prints the verdict, writes report.html and removes the lab.
//! Otherwise it says why and runs stream over loopback against an in-process agent.
//! `--cluster` instead builds a 6-node, 2-network cluster lab with two faults, runs a
//! path-only `mtuperf mesh` from inside node n1, prints its matrices and findings and
//! writes its HTML grid. Exit code, both ways: 0 once the demo has shown its result
//! (the findings are what the cluster demo is there to show), 130/143 when stopped,
//! 5/6 when it could not run.
//! The orchestration is in [`orchestrate`] and [`cluster`].
mod cluster;
mod orchestrate;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use mtuperf_report::stream::{self as rs, RunDoc};

use crate::cmd::lab;
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::interrupt;
use crate::parse;
use orchestrate::DemoObserver;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Skip the lab and run on loopback.
    #[arg(long)]
    loopback: bool,
    /// A 6-node, 2-network cluster lab with two faults, verified by `mtuperf mesh`
    /// (root needed; no loopback fallback).
    #[arg(long, conflicts_with_all = ["loopback", "time", "repeat"])]
    cluster: bool,
    /// Length of each run.
    #[arg(long, default_value = "2s", value_parser = parse::parse_test_time)]
    time: Duration,
    /// Repetitions per path and test (interleaved std, jumbo, std, jumbo ...).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=50))]
    repeat: u32,
    /// Where the lab demo writes its HTML report (the mesh grid with --cluster).
    #[arg(long, short = 'o', default_value = "report.html")]
    output: PathBuf,
}

/// Prints the demo. What happens next goes to stderr, so the results (stdout) start
/// with the plain answer (every demo).
struct Printer;

impl DemoObserver for Printer {
    fn say(&mut self, line: &str) {
        errln!("{line}");
    }
    fn stream_run(&mut self, run: &RunDoc) {
        out!("{}", rs::header(&run.result));
        outln!("{}", rs::summary_text(run));
    }
}

// The dispatcher hands every subcommand its Args by value.
#[allow(clippy::needless_pass_by_value)]
pub fn run(g: &Global, a: Args) -> CmdResult {
    if a.cluster {
        return cluster_demo(g, &a);
    }
    let why = if a.loopback {
        "--loopback".to_string()
    } else {
        match mtuperf_lab::check_environment().map_err(|e| e.for_command(lab::invocation())) {
            Ok(()) => return lab_demo(g, &a),
            Err(e) => format!("no lab: {e}"),
        }
    };
    // The plain answer first: on loopback there is none about jumbo frames.
    outln!(
        "Jumbo frames: not judged here ({why}): loopback has one MTU, so this shows throughput, CPU and the measurement itself, but not what jumbo frames change, no path check and no report.html; run `mtuperf demo` as root for the 1500 vs 9000 lab.\n"
    );
    orchestrate::loopback(g, a.time, &mut Printer)?;
    Ok(0)
}

fn lab_demo(g: &Global, a: &Args) -> CmdResult {
    // The lab is removed by the time the comparison comes back.
    let doc = orchestrate::lab(g, a.repeat, a.time, &mut Printer)?;
    // Starts with the plain answer ("Jumbo frames: worth it on this path — …").
    out!("{}", mtuperf_report::compare::text(&doc));
    std::fs::write(&a.output, mtuperf_report::compare::html::html(&doc))
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

fn cluster_demo(g: &Global, a: &Args) -> CmdResult {
    mtuperf_lab::check_environment()
        .map_err(|e| Failure::new(exit::ENVIRONMENT, e.for_command(lab::invocation())))?;
    // Ctrl-C sets this instead of ending the process, so the lab's guard removes it.
    let stop = interrupt::flag();
    // Progress to stderr: the results (stdout) start with the mesh's plain answer.
    let demo = cluster::cluster(g, &stop, &mut Printer)?;
    let doc = &demo.doc;
    out!("{}", mtuperf_report::mesh::text(doc));
    if let Some(id) = doc.run_id {
        outln!("stored as run {id}");
    }
    let interrupted = doc.result.interrupted || stop.load(Ordering::Relaxed);
    outln!(
        "demo: {} (injected: {})",
        if interrupted {
            "interrupted: the mesh did not test every pair"
        } else if demo.found_injected {
            "the mesh named exactly the two injected faults"
        } else {
            "the mesh's findings differ from the injected faults"
        },
        cluster::faults_text()
    );
    if doc.result.block.is_some() && !interrupted {
        let (lost, pairs) = demo.lost;
        outln!(
            "demo: the block test lost {lost} 8 KiB blocks on {pairs} pairs (RAC's gc blocks lost){}; its p99 check's limit is {} here, as the lab's nodes share this machine's CPUs (1 ms on a real private network)",
            if demo.lost_explained {
                ", every one through those faults' nodes"
            } else {
                ", not all through those faults' nodes"
            },
            cluster::MAX_BLOCK_P99
        );
    }
    std::fs::write(&a.output, mtuperf_report::mesh::html(doc))
        .with_context(|| format!("writing {}", a.output.display()))?;
    outln!(
        "demo: mesh grid written to {} (open it in a browser); lab removed. By hand: README, \"A cluster in the lab\", and docs/mesh.md.",
        a.output.display()
    );
    Ok(if interrupted { exit::INTERRUPTED } else { 0 })
}
