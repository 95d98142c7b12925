//! `mtuperf demo`: the main job on an embedded default, no second machine needed.
//! As root (CAP_NET_ADMIN, CAP_SYS_ADMIN) it builds a two-path lab through netlink
//! (no iproute2, nftables or ethtool needed)
//! (MTU 1500 and 9000, offloads off like a NIC without segmentation offload), runs a
//! compact `compare` (8K stream and 8K UDP rr, interleaved repetitions) from the lab's
//! client host, prints the verdict, writes report.html and removes the lab.
//! Otherwise it says why and runs stream over loopback against an in-process agent.
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use mtuperf_engine::agent::{Agent, AgentConfig};
use mtuperf_engine::client::Session;
use mtuperf_engine::config::StreamConfig;
use mtuperf_engine::stream::{self, client::Quiet};
use mtuperf_lab::{Lab, LabOptions, Scenario};
use mtuperf_report::compare::CompareDoc;
use mtuperf_report::stream::{self as rs, RunDoc};

use crate::common;
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;

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

pub fn run(g: &Global, a: Args) -> CmdResult {
    if !a.loopback {
        match mtuperf_lab::check_environment() {
            Ok(()) => return lab_demo(g, &a),
            Err(e) => outln!(
                "demo: no lab ({e}); running on loopback instead. Loopback has one MTU, so this shows throughput, CPU and the measurement itself, but not what jumbo frames change, no path check and no report.html.\n"
            ),
        }
    }
    loopback_demo(g, &a)
}

fn loopback_demo(g: &Global, a: &Args) -> CmdResult {
    let agent = Agent::bind(AgentConfig::new(vec!["127.0.0.1:0"
        .parse()
        .map_err(|e| anyhow!("{e}"))?]))
    .map_err(|e| Failure::new(exit::FAILED, e))?;
    let addr = agent
        .local_addrs()
        .first()
        .copied()
        .ok_or_else(|| anyhow!("agent has no address"))?;
    let shutdown = Arc::new(AtomicBool::new(false));
    let s = shutdown.clone();
    std::thread::spawn(move || agent.run(&s));
    let stop = common::interrupt_flag();
    let store = common::open_store(g)?;
    for block in [8192u32, 131_072] {
        let session = Session::connect(&addr.to_string(), &common::connect_options(g, None)?)
            .map_err(common::engine_failure)?;
        let params = StreamConfig::timed(block, a.time).params();
        let result =
            stream::run(&session, &params, &stop, &Quiet).map_err(common::engine_failure)?;
        session.close();
        let mut run = RunDoc::new(result);
        run.run_id = common::store_record(
            store.as_ref(),
            &run,
            common::Place {
                target: &addr.to_string(),
                group: None,
                label: Some("loopback"),
            },
        )?;
        out!("{}", rs::header(&run.result));
        outln!("{}", rs::summary_text(&run));
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    shutdown.store(true, Ordering::Relaxed);
    Ok(0)
}

/// Removes the demo lab however the demo ends.
struct DemoLab(Lab);
impl Drop for DemoLab {
    fn drop(&mut self) {
        let _ = Lab::down(&self.0.name, false);
    }
}

fn lab_demo(g: &Global, a: &Args) -> CmdResult {
    let opts = LabOptions {
        name: format!("demo{}", std::process::id()),
        scenarios: vec![Scenario::Std, Scenario::Jumbo],
        offload: false,
        ..LabOptions::default()
    };
    outln!(
        "demo: building lab {:?}: client ↔ std (MTU 1500) and client ↔ jumbo (MTU 9000), offloads off",
        opts.name
    );
    let mut lab = DemoLab(Lab::up(&opts).map_err(|e| Failure::new(exit::ENVIRONMENT, e))?);
    lab.0
        .serve(&[])
        .map_err(|e| Failure::new(exit::FAILED, e))?;
    let target = |sc: Scenario| {
        lab.0
            .target(sc)
            .map(|ip| ip.to_string())
            .ok_or_else(|| anyhow!("lab has no {sc} target"))
    };
    let exe = std::env::current_exe().context("locating the mtuperf binary")?;
    let mut argv = vec![exe.display().to_string()];
    match (&g.db, g.no_store) {
        (_, true) => argv.push("--no-store".into()),
        (Some(p), false) => argv.extend(["--db".into(), p.display().to_string()]),
        (None, false) => {}
    }
    argv.extend([
        "compare".into(),
        "--path".into(),
        format!("std={}", target(Scenario::Std)?),
        "--path".into(),
        format!("jumbo={}", target(Scenario::Jumbo)?),
        "--tests".into(),
        "stream,rr".into(),
        "--block".into(),
        "8K".into(),
        // One placement for every repetition, so the MTU effect is not mixed with
        // where the scheduler happened to put the threads.
        "--placement".into(),
        "same".into(),
        "--repeat".into(),
        a.repeat.max(2).to_string(),
        "--time".into(),
        format!("{}ms", a.time.as_millis()),
        "--json".into(),
    ]);
    outln!(
        "demo: comparing 8K stream and 8K UDP rr over std and jumbo, {} repetitions of {} each, interleaved; rr with client and agent pinned to CPU 0",
        a.repeat.max(2),
        humantime::format_duration(a.time)
    );
    let out = lab
        .0
        .exec_command("client", &argv)
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running compare in the lab's client host")?;
    // A failed compare prints its document when it measured something, else an error
    // document (mtuperf.error/1), whose message is on stderr already.
    let doc = serde_json::from_slice::<CompareDoc>(&out.stdout);
    if !out.status.success() && doc.is_err() {
        return Err(Failure::new(
            exit::FAILED,
            anyhow!("compare in the lab failed"),
        ));
    }
    let doc = doc.context("reading the compare document")?;
    outln!();
    out!("{}", mtuperf_report::compare::text(&doc));
    std::fs::write(&a.output, mtuperf_report::html::html(&doc))
        .with_context(|| format!("writing {}", a.output.display()))?;
    drop(lab);
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
