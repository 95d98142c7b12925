//! `mtuperf compare`: the same tests over several paths, interleaved and repeated, each
//! repetition stored as it finishes; summary with 95% intervals and a plain verdict.
use std::time::Duration;

use anyhow::anyhow;
use mtuperf_engine::compare::{self, PathSpec, Plan, Repeat, TestKind};
use mtuperf_report::compare as rc;

use crate::common::{self, parse_block, parse_test_time};
use crate::exit::{self, CmdResult, Failure};
use crate::global::Global;
use crate::groups;
use crate::output::{Format, Output};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A path to compare: NAME=HOST[,bind=LOCAL_ADDR]; give two or more, the first is the baseline.
    #[arg(long = "path", value_name = "NAME=HOST[,bind=ADDR]", value_parser = common::parse_path, required_unless_present = "resume")]
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
    #[arg(long, value_name = "PCT", value_parser = common::parse_pct)]
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
    /// text, json (schema mtuperf.compare/1) or legacy (packet-averages.pl labels).
    #[command(flatten)]
    output: Output,
    /// Continue an interrupted comparison (its group id, see `mtuperf history --kind stream`).
    #[arg(long, value_name = "ID", conflicts_with = "paths")]
    resume: Option<i64>,
    /// CPU placement of every rr repetition, the same for every path: same (client and
    /// agent threads on CPU 0), split (client CPU 0, agent CPU 1) or free (not pinned).
    #[arg(long, value_enum, default_value = "free")]
    placement: crate::placement_args::PlacementArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestArg {
    Stream,
    Rr,
    Udp,
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
                TestArg::Udp => TestKind::Udp,
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
        placement: a.placement.policy(),
    })
}

#[allow(clippy::needless_pass_by_value)] // the dispatcher hands every subcommand its Args by value
pub fn run(g: &Global, a: Args) -> CmdResult {
    let format = a
        .output
        .pick(Format::Text, &[Format::Text, Format::Json, Format::Legacy])?;
    let json = format == Format::Json;
    let store = common::open_store(g)?;
    let (plan, prior, group) = if let Some(id) = a.resume {
        let s = store.as_ref().ok_or_else(|| {
            Failure::usage(
                "--no-store",
                "set",
                "--resume reads the history",
                "drop --no-store",
            )
        })?;
        let (plan, reps, _) =
            groups::load_group(s, id).map_err(|e| Failure::new(exit::USAGE, e))?;
        (plan, reps, Some(id))
    } else {
        let plan = plan(&a)?;
        let group = groups::start_group(store.as_ref(), &plan)?;
        (plan, Vec::new(), group)
    };
    let opts = common::connect_options(g, None)?;
    let stop = common::interrupt_flag();
    let (doc, out) = groups::execute(store.as_ref(), &plan, group, prior, &opts, &stop, json)?;
    if json {
        crate::out::json(&doc);
    } else if format == Format::Legacy && out.refused.is_none() {
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
