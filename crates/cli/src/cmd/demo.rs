//! `mtuperf demo`: the main job on an embedded default, no second machine needed.
//! With CAP_NET_ADMIN and iproute2/nftables/ethtool it builds a two-path lab
//! (MTU 1500 and 9000, offloads off like a NIC without segmentation offload), runs
//! 8K stream over both paths alternately, prints the comparison and removes the lab.
//! Otherwise it says why and runs stream over loopback against an in-process agent.
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use mtuperf_engine::agent::{Agent, AgentConfig};
use mtuperf_engine::client::Session;
use mtuperf_engine::stream::{self, client::Quiet, StreamParams};
use mtuperf_lab::{Lab, LabOptions, Scenario};
use mtuperf_proto::msg::{Direction, StreamLimit, StreamRequest};
use mtuperf_report::stream::{self as rs, Document, RunDoc};

use crate::cli::Global;
use crate::common;
use crate::exit::{self, CmdResult, Failure};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Skip the lab and run on loopback.
    #[arg(long)]
    loopback: bool,
    /// Length of each run.
    #[arg(long, default_value = "2s", value_parser = common::parse_test_time)]
    time: Duration,
    /// Runs per path (alternating std, jumbo, std, jumbo ...).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=50))]
    repeat: u32,
}

pub fn run(g: &Global, a: Args) -> CmdResult {
    if !a.loopback {
        match mtuperf_lab::check_environment() {
            Ok(()) => return lab_demo(g, &a),
            Err(e) => println!("demo: no lab ({e}); running on loopback instead, which shows throughput and CPU but not what the MTU changes\n"),
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
        let params = StreamParams {
            request: StreamRequest {
                streams: 1,
                direction: Direction::Forward,
                block,
                limit: StreamLimit::Time {
                    ms: a.time.as_millis() as u64,
                },
                window: None,
                mss: None,
                interval_ms: 0,
                omit_ms: 0,
            },
            file: None,
        };
        let result =
            stream::run(&session, &params, &stop, &Quiet).map_err(common::engine_failure)?;
        session.close();
        let mut run = RunDoc::new(result);
        run.run_id = common::store_run(
            store.as_ref(),
            &crate::cmd::stream::new_run(&run, &addr.to_string(), Some("loopback")),
        )?;
        print!("{}", rs::header(&run.result));
        println!("{}", rs::summary_text(&run));
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

fn lab_stream(
    lab: &Lab,
    db: Option<&PathBuf>,
    target: &str,
    a: &Args,
    label: &str,
) -> anyhow::Result<RunDoc> {
    let exe = std::env::current_exe().context("locating the mtuperf binary")?;
    let mut argv = vec![exe.display().to_string()];
    match db {
        Some(p) => argv.extend(["--db".into(), p.display().to_string()]),
        None => argv.push("--no-store".into()),
    }
    argv.extend(
        [
            "stream", target, "--block", "8K", "--json", "--label", label, "--time",
        ]
        .iter()
        .map(|s| (*s).to_string()),
    );
    argv.push(format!("{}ms", a.time.as_millis()));
    let out = lab
        .exec_command("client", &argv)
        .output()
        .context("running stream in the lab")?;
    if !out.status.success() {
        return Err(anyhow!(
            "stream to {target} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut doc: Document =
        serde_json::from_slice(&out.stdout).context("reading the stream document")?;
    doc.runs
        .pop()
        .ok_or_else(|| anyhow!("empty stream document"))
}

fn lab_demo(g: &Global, a: &Args) -> CmdResult {
    let opts = LabOptions {
        name: format!("demo{}", std::process::id()),
        scenarios: vec![Scenario::Std, Scenario::Jumbo],
        offload: false,
        ..LabOptions::default()
    };
    println!("demo: building lab {:?}: client ↔ std (MTU 1500) and client ↔ jumbo (MTU 9000), offloads off", opts.name);
    let mut lab = DemoLab(Lab::up(&opts).map_err(|e| Failure::new(exit::ENVIRONMENT, e))?);
    lab.0
        .serve(&[])
        .map_err(|e| Failure::new(exit::FAILED, e))?;
    let db = if g.no_store {
        None
    } else {
        Some(
            g.db.clone()
                .unwrap_or_else(mtuperf_store::Store::default_path),
        )
    };
    let stop = common::interrupt_flag();
    let paths = [(Scenario::Std, "std"), (Scenario::Jumbo, "jumbo")];
    let mut runs: Vec<Vec<RunDoc>> = vec![Vec::new(), Vec::new()];
    for i in 0..a.repeat {
        for (k, (sc, name)) in paths.iter().enumerate() {
            let target = lab
                .0
                .target(*sc)
                .ok_or_else(|| anyhow!("lab has no {name} target"))?
                .to_string();
            let run = lab_stream(&lab.0, db.as_ref(), &target, a, name)?;
            println!(
                "  run {}/{} {name:<5} {}",
                i + 1,
                a.repeat,
                mtuperf_report::fmt::rate(run.metrics.headline_bps)
            );
            runs[k].push(run);
            if stop.load(Ordering::Relaxed) {
                return Ok(exit::INTERRUPTED);
            }
        }
    }
    println!();
    print!(
        "{}",
        mtuperf_report::demo::comparison(&[("std", &runs[0]), ("jumbo", &runs[1])])
    );
    drop(lab);
    println!("demo: lab removed. Reproduce by hand: see README, \"Reproduce the documents' experiments on one machine\".");
    Ok(0)
}
