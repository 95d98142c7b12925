//! `mtuperf compare`: the same tests over several paths, interleaved and repeated, each
//! repetition stored as it finishes; summary with 95% intervals and a plain verdict.
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use indicatif::{ProgressBar, ProgressStyle};
use mtuperf_engine::client::ConnectOptions;
use mtuperf_engine::compare::Outcome;
use mtuperf_engine::compare::{
    self, Cell, CompareObserver, PathCheck, PathSpec, Plan, Repeat, Repetition, TestKind,
};
use mtuperf_engine::EngineError;
use mtuperf_report::compare::{self as rc, CompareDoc, Rep};
use mtuperf_report::stream::{self as rs, Document, RunDoc};
use mtuperf_store::{NewRun, Store};

use crate::cli::Global;
use crate::common::{self, parse_block, parse_test_time};
use crate::exit::{self, CmdResult, Failure};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    /// perl-sockets' packet-averages.pl labels ("key/avg: Bytes Received ...").
    Legacy,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A path to compare: NAME=HOST[,bind=LOCAL_ADDR]; give two or more, the first is the baseline.
    #[arg(long = "path", value_name = "NAME=HOST[,bind=ADDR]", value_parser = parse_path, required_unless_present = "resume")]
    paths: Vec<PathSpec>,
    /// Tests to run over every path.
    #[arg(long, value_delimiter = ',', default_value = "stream")]
    tests: Vec<TestArg>,
    /// Block sizes (bytes per write/read): 2K,4K,8K,16K ...
    #[arg(long, value_delimiter = ',', default_value = "8K", value_parser = parse_block)]
    block: Vec<u32>,
    /// Concurrent clients for rr.
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(1..=256))]
    clients: Vec<u32>,
    /// Repetitions per path, test and block.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=1000), conflicts_with = "ci_width")]
    repeat: u32,
    /// Repeat until every headline mean's 95% CI half-width is within ±PCT% (at least 3, at most --max-repeat).
    #[arg(long, value_name = "PCT", value_parser = parse_pct)]
    ci_width: Option<f64>,
    /// Upper bound on repetitions with --ci-width.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(3..=1000))]
    max_repeat: u32,
    /// Length of each repetition.
    #[arg(long, default_value = "5s", value_parser = parse_test_time)]
    time: Duration,
    /// Compare even paths whose check failed (the report flags them).
    #[arg(long)]
    force: bool,
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Print one JSON document (schema mtuperf.compare/1).
    #[arg(long)]
    json: bool,
    /// Continue an interrupted comparison (its group id, see `mtuperf history --kind stream`).
    #[arg(long, value_name = "ID", conflicts_with = "paths")]
    resume: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestArg {
    Stream,
    Rr,
}

fn parse_pct(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if (0.1..=50.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s} is not a percentage from 0.1 to 50 (e.g. 5 for ±5%)"
        )),
    }
}

/// NAME=HOST[,bind=ADDR]
pub fn parse_path(s: &str) -> Result<PathSpec, String> {
    let hint = "expected NAME=HOST[,bind=LOCAL_ADDR], e.g. jumbo=10.0.9.2,bind=10.0.9.1";
    let (name, rest) = s.split_once('=').ok_or_else(|| format!("{s}: {hint}"))?;
    let ok_name = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !ok_name {
        return Err(format!(
            "{name:?}: a path name is 1 to 32 letters, digits, '-' or '_'; {hint}"
        ));
    }
    let mut parts = rest.split(',');
    let target = parts.next().unwrap_or_default().to_string();
    if target.is_empty() {
        return Err(format!("{s}: no host; {hint}"));
    }
    let mut bind = None;
    for p in parts {
        match p.split_once('=') {
            Some(("bind", a)) => {
                bind = Some(
                    a.parse::<IpAddr>()
                        .map_err(|e| format!("bind={a}: {e}; {hint}"))?,
                );
            }
            _ => return Err(format!("{p}: unknown path option; {hint}")),
        }
    }
    Ok(PathSpec {
        name: name.to_string(),
        target,
        bind,
    })
}

fn plan(a: &Args) -> Result<Plan, Failure> {
    if a.paths.len() < 2 {
        return Err(Failure::usage(
            "--path",
            &a.paths.len().to_string(),
            "two or more paths",
            "add --path NAME=HOST for each path",
        ));
    }
    for (i, p) in a.paths.iter().enumerate() {
        if a.paths.iter().skip(i + 1).any(|q| q.name == p.name) {
            return Err(Failure::usage(
                "--path",
                &p.name,
                "distinct path names",
                "name each path once",
            ));
        }
    }
    Ok(Plan {
        version: compare::PLAN_VERSION,
        paths: a.paths.clone(),
        tests: a
            .tests
            .iter()
            .map(|t| match t {
                TestArg::Stream => TestKind::Stream,
                TestArg::Rr => TestKind::Rr,
            })
            .collect(),
        blocks: a.block.clone(),
        clients: a.clients.clone(),
        time_ms: a.time.as_millis() as u64,
        repeat: match a.ci_width {
            Some(pct) => Repeat::CiWidth {
                pct,
                max: a.max_repeat,
            },
            None => Repeat::Fixed { n: a.repeat },
        },
        force: a.force,
        sysctls: compare::local_sysctls(),
    })
}

/// A stored group's plan and its usable repetitions (rounds numbered per path and block).
pub fn load_group(store: &Store, id: i64) -> anyhow::Result<(Plan, Vec<Rep>, Option<String>)> {
    let g = store
        .group(id)?
        .ok_or_else(|| anyhow!("no comparison group {id} in {}", store.path().display()))?;
    if g.kind != "compare" {
        return Err(anyhow!(
            "group {id} is a {} group, not a comparison",
            g.kind
        ));
    }
    let plan: Plan = serde_json::from_str(&g.plan_json)
        .with_context(|| format!("group {id}: unreadable plan"))?;
    let mut reps: Vec<Rep> = Vec::new();
    for r in store.group_runs(id)? {
        let Some(path) = r.label.clone() else {
            continue;
        };
        let (cell, stream, rr) = if r.kind == "rr" {
            let Some(step) = serde_json::from_str::<mtuperf_report::rr::Document>(&r.document)
                .ok()
                .and_then(|d| d.steps.into_iter().next())
            else {
                continue;
            };
            let q = &step.result.request;
            let cell = Cell {
                test: TestKind::Rr,
                block: q.block,
                clients: q.clients,
            };
            (cell, None, Some(step.result))
        } else {
            let Some(run) = serde_json::from_str::<Document>(&r.document)
                .ok()
                .and_then(|d| d.runs.into_iter().next())
            else {
                continue;
            };
            let cell = Cell {
                test: TestKind::Stream,
                block: run.result.request.block,
                clients: 1,
            };
            (cell, Some(run.result), None)
        };
        let round = reps
            .iter()
            .filter(|x| x.rep.path == path && x.rep.cell == cell && !x.rep.interrupted())
            .count() as u32;
        reps.push(Rep {
            run_id: Some(r.id),
            rep: Repetition {
                path,
                cell,
                round,
                stream,
                rr,
            },
        });
    }
    Ok((plan, reps, g.summary_json))
}

struct Observer<'a> {
    store: Option<&'a Store>,
    group: Option<i64>,
    bar: ProgressBar,
    reps: Vec<Rep>,
}

impl CompareObserver for Observer<'_> {
    fn checked(&mut self, c: &PathCheck) {
        self.bar
            .println(format!("  check {}: {}", c.name, c.reason));
    }
    fn starting(&mut self, p: &PathSpec, cell: Cell, round: u32, done: u32, planned: u32) {
        self.bar.set_length(u64::from(planned));
        self.bar.set_position(u64::from(done));
        self.bar.set_message(format!(
            "{} {} {} #{}",
            p.name,
            cell.test.name(),
            rc::block_label(cell.block),
            round + 1
        ));
    }
    fn finished(&mut self, rep: &Repetition) -> Result<(), EngineError> {
        let id = self.store_rep(rep)?;
        self.bar.inc(1);
        self.reps.push(Rep {
            run_id: id,
            rep: rep.clone(),
        });
        Ok(())
    }
}

impl Observer<'_> {
    fn store(&self, new: &NewRun) -> Result<Option<i64>, EngineError> {
        common::store_run(self.store, new).map_err(|f| EngineError::Io {
            op: "storing the repetition".into(),
            source: std::io::Error::other(format!("{:#}", f.error)),
        })
    }

    /// Stores one repetition as an ordinary run of its kind, in the group, labelled
    /// with the path name.
    fn store_rep(&self, rep: &Repetition) -> Result<Option<i64>, EngineError> {
        if let Some(res) = rep.rr.clone() {
            let step = mtuperf_report::rr::StepDoc::new(res);
            let doc = mtuperf_report::rr::Document::new(vec![step.clone()]);
            return self.store(&NewRun {
                kind: "rr".into(),
                target: step.result.target.clone(),
                started_unix_ms: step.result.started_unix_ms,
                headline: mtuperf_report::rr::headline(&step),
                headline_value: Some(step.metrics.blocks_per_s),
                interrupted: step.result.interrupted,
                document: serde_json::to_string(&doc).unwrap_or_default(),
                group_id: self.group,
                label: Some(rep.path.clone()),
            });
        }
        let Some(res) = rep.stream.clone() else {
            return Ok(None);
        };
        let run = RunDoc::new(res);
        self.store(&NewRun {
            kind: "stream".into(),
            target: run.result.target.clone(),
            started_unix_ms: run.result.started_unix_ms,
            headline: rs::headline(&run),
            headline_value: Some(run.metrics.headline_bps),
            interrupted: run.result.interrupted,
            document: serde_json::to_string(&Document::new(vec![run.clone()])).unwrap_or_default(),
            group_id: self.group,
            label: Some(rep.path.clone()),
        })
    }
}

fn bar(quiet: bool) -> ProgressBar {
    if quiet || std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(1);
    b.set_style(
        ProgressStyle::with_template("  {bar:30} {pos}/{len} repetitions, ETA {eta}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    b
}

/// Stores the plan as a new comparison group (before anything runs).
pub fn start_group(store: Option<&Store>, plan: &Plan) -> Result<Option<i64>, Failure> {
    let Some(s) = store else { return Ok(None) };
    s.create_group("compare", &serde_json::to_string(plan).unwrap_or_default())
        .context("storing the comparison plan")
        .map(Some)
        .map_err(|e| Failure::new(exit::FAILED, e))
}

/// Runs (or continues, with `prior`) a comparison: every repetition stored in `group`
/// as it finishes, a progress bar on a terminal unless `quiet`, the summary stored when
/// the plan completes. For `demo` and `compare` alike.
pub fn execute(
    store: Option<&Store>,
    plan: &Plan,
    group: Option<i64>,
    prior: Vec<Rep>,
    opts: &ConnectOptions,
    stop: &Arc<AtomicBool>,
    quiet: bool,
) -> Result<(CompareDoc, Outcome), Failure> {
    let mut obs = Observer {
        store,
        group,
        bar: bar(quiet),
        reps: Vec::new(),
    };
    let engine_prior = prior.iter().map(|r| r.rep.clone()).collect();
    let out = compare::run(plan, opts, engine_prior, stop, &mut obs);
    obs.bar.finish_and_clear();
    let out = out.map_err(common::engine_failure)?;
    let mut reps: Vec<Rep> = prior.into_iter().filter(|r| !r.rep.interrupted()).collect();
    reps.extend(obs.reps);
    let doc = rc::build(
        plan,
        &out.checks,
        &reps,
        group,
        out.refused.clone(),
        out.interrupted,
    );
    if let (Some(s), Some(id)) = (store, group) {
        if !out.interrupted {
            let json = serde_json::to_string(&doc).unwrap_or_default();
            if let Err(e) = s.finish_group(id, &json) {
                crate::unsaved::keep(s.path(), "compare", &json, &e.into());
            }
        }
    }
    Ok((doc, out))
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
pub fn run(g: &Global, a: Args) -> CmdResult {
    let store = common::open_store(g)?;
    let (plan, prior, group) = if let Some(id) = a.resume {
        {
            let s = store.as_ref().ok_or_else(|| {
                Failure::usage(
                    "--no-store",
                    "set",
                    "--resume reads the history",
                    "drop --no-store",
                )
            })?;
            let (plan, reps, _) = load_group(s, id).map_err(|e| Failure::new(exit::USAGE, e))?;
            (plan, reps, Some(id))
        }
    } else {
        {
            let plan = plan(&a)?;
            let group = start_group(store.as_ref(), &plan)?;
            (plan, Vec::new(), group)
        }
    };
    let opts = common::connect_options(g, None)?;
    let stop = common::interrupt_flag();
    let (doc, out) = execute(store.as_ref(), &plan, group, prior, &opts, &stop, a.json)?;
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else if a.format == Format::Legacy && out.refused.is_none() {
        out!("{}", rc::legacy(&doc));
    } else {
        out!("{}", rc::text(&doc));
    }
    if let Some(r) = out.refused {
        return Err(Failure::new(
            exit::CHECK_FAILED,
            anyhow!("compare refused: {r}; --force compares anyway"),
        ));
    }
    let why = out.interrupted.then(|| {
        out.interrupt_reason
            .as_deref()
            .unwrap_or("a repetition ended early")
    });
    Ok(common::measured_exit(&stop, why, 0))
}
