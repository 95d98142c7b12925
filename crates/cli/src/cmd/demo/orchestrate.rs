//! The demo's orchestration, apart from its printing: on loopback, an in-process agent
//! and two stream runs (8K and 128K blocks), each stored; in a lab, a two-path lab
//! (MTU 1500 and 9000, offloads off) built through netlink, a compact `compare` run
//! from the lab's client host, and the lab removed however the demo ends. What the
//! user sees comes through [`DemoObserver`].
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{anyhow, Context};
use mtuperf_engine::agent::{Agent, AgentConfig};
use mtuperf_engine::client::Session;
use mtuperf_engine::config::StreamConfig;
use mtuperf_engine::stream::{self, client::Quiet};
use mtuperf_lab::{Lab, LabOptions, Scenario};
use mtuperf_report::compare::CompareDoc;
use mtuperf_report::stream::RunDoc;

use crate::connect;
use crate::exit::{self, Failure};
use crate::global::Global;
use crate::history;
use crate::interrupt;

/// What the demo tells the user as it goes.
pub trait DemoObserver {
    /// A line saying what happens next.
    fn say(&mut self, line: &str);
    /// A loopback run, measured and stored.
    fn stream_run(&mut self, run: &RunDoc);
}

/// Stream over loopback against an in-process agent, 8K then 128K blocks.
pub fn loopback(g: &Global, time: Duration, obs: &mut dyn DemoObserver) -> Result<(), Failure> {
    let agent = Agent::bind(AgentConfig::new(vec!["127.0.0.1:0"
        .parse()
        .map_err(|e| anyhow!("{e}"))?]))
    .map_err(|e| Failure::new(exit::FAILED, e))?;
    let addr = agent
        .local_addrs()
        .first()
        .copied()
        .ok_or_else(|| anyhow!("agent has no address"))?;
    let shutdown = mtuperf_engine::Shutdown::new();
    let s = shutdown.clone();
    std::thread::spawn(move || agent.run(&s));
    let stop = interrupt::flag();
    let store = history::open_store(g)?;
    for block in [8192u32, 131_072] {
        let session = Session::connect(&addr.to_string(), &connect::connect_options(g, None)?)
            .map_err(connect::engine_failure)?;
        let params = StreamConfig::timed(block, time).params();
        let result =
            stream::run(&session, &params, &stop, &Quiet).map_err(connect::engine_failure)?;
        session.close();
        let mut run = RunDoc::new(result);
        run.run_id = history::store_record(
            store.as_ref(),
            &run,
            history::Place {
                target: &addr.to_string(),
                group: None,
                label: Some("loopback"),
            },
        )?;
        obs.stream_run(&run);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    shutdown.trigger();
    Ok(())
}

/// Removes the demo lab however the demo ends.
pub(super) struct DemoLab(pub(super) Lab);
impl Drop for DemoLab {
    fn drop(&mut self) {
        let _ = Lab::down(&self.0.name, false);
    }
}

/// Builds the two-path lab, compares 8K stream and 8K UDP rr over both paths
/// (`repeat` interleaved repetitions of `time` each) and removes the lab.
pub fn lab(
    g: &Global,
    repeat: u32,
    time: Duration,
    obs: &mut dyn DemoObserver,
) -> Result<CompareDoc, Failure> {
    let opts = LabOptions {
        name: format!("demo{}", std::process::id()),
        scenarios: vec![Scenario::Std, Scenario::Jumbo],
        offload: false,
        ..LabOptions::default()
    };
    obs.say(&format!(
        "demo: building lab {:?}: client ↔ std (MTU 1500) and client ↔ jumbo (MTU 9000), offloads off",
        opts.name
    ));
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
    let mut argv = mtuperf_argv(g)?;
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
        repeat.max(2).to_string(),
        "--time".into(),
        format!("{}ms", time.as_millis()),
        "--json".into(),
    ]);
    obs.say(&format!(
        "demo: comparing 8K stream and 8K UDP rr over std and jumbo, {} repetitions of {} each, interleaved; stream and rr with client and agent pinned to CPU 0",
        repeat.max(2),
        humantime::format_duration(time)
    ));
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
    Ok(doc.context("reading the compare document")?)
}

/// This mtuperf binary with the demo's history options (`--no-store`, `--db`), for a
/// command the demo runs inside a lab host.
pub(super) fn mtuperf_argv(g: &Global) -> anyhow::Result<Vec<String>> {
    let exe = std::env::current_exe().context("locating the mtuperf binary")?;
    let mut argv = vec![exe.display().to_string()];
    match (&g.db, g.no_store) {
        (_, true) => argv.push("--no-store".into()),
        (Some(p), false) => argv.extend(["--db".into(), p.display().to_string()]),
        (None, false) => {}
    }
    Ok(argv)
}
