//! `compare`'s plan flags: the paths, tests, blocks, clients, repetitions and placement
//! that become an engine [`Plan`].
use std::time::Duration;

use mtuperf_engine::compare::{self, PathSpec, Plan, Repeat, TestKind};

use crate::common::{self, parse_block, parse_test_time};
use crate::exit::Failure;

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// A path to compare: NAME=HOST[,bind=LOCAL_ADDR]; give two or more, the first is the baseline.
    #[arg(long = "path", value_name = "NAME=HOST[,bind=ADDR]", value_parser = common::parse_path, required_unless_present = "resume")]
    pub paths: Vec<PathSpec>,
    /// Tests to run over every path.
    #[arg(long, value_delimiter = ',', default_value = "stream")]
    pub tests: Vec<TestArg>,
    /// Block sizes (bytes per write/read): 2K,4K,8K,16K ...
    #[arg(long, value_delimiter = ',', default_value = "8K", value_parser = parse_block)]
    pub block: Vec<u32>,
    /// Concurrent clients for rr.
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub clients: Vec<u32>,
    /// Repetitions per path, test and block.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=1000), conflicts_with = "ci_width")]
    pub repeat: u32,
    /// Repeat until every headline mean's 95% CI half-width is within ±PCT% (at least 3, at most --max-repeat).
    #[arg(long, value_name = "PCT", value_parser = common::parse_pct)]
    pub ci_width: Option<f64>,
    /// Upper bound on repetitions with --ci-width.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(3..=1000))]
    pub max_repeat: u32,
    /// Length of each repetition.
    #[arg(long, default_value = "5s", value_parser = parse_test_time)]
    pub time: Duration,
    /// Compare even paths whose check failed (the report flags them).
    #[arg(long)]
    pub force: bool,
    /// CPU placement of every repetition (rr, stream, UDP stream), the same for every path: same (client and
    /// agent threads on CPU 0), split (client CPU 0, agent CPU 1) or free (not pinned).
    #[arg(long, value_enum, default_value = "free")]
    pub placement: crate::placement_args::PlacementArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TestArg {
    Stream,
    Rr,
    Udp,
}

impl PlanArgs {
    /// The comparison these flags ask for, checked.
    pub fn plan(&self) -> Result<Plan, Failure> {
        let a = self;
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
}
