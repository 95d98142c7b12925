//! `compare`'s plan flags: the paths, tests, blocks, clients, repetitions and placement
//! that become an engine [`Plan`].
use std::time::Duration;

use mtuperf_engine::compare::{self, PathSpec, Plan, Repeat, TestKind};

use crate::exit::Failure;
use crate::parse;
use crate::parse::{parse_block, parse_test_time};

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// A path to compare: NAME=HOST[,bind=LOCAL_ADDR]; give two or more, the first is the baseline.
    #[arg(long = "path", value_name = "NAME=HOST[,bind=ADDR]", value_parser = parse::parse_path, required_unless_present = "resume", help_heading = crate::heading::TEST)]
    pub paths: Vec<PathSpec>,
    /// Tests to run over every path.
    #[arg(long, value_delimiter = ',', default_value = "stream", help_heading = crate::heading::TEST)]
    pub tests: Vec<TestArg>,
    /// Block sizes (bytes per write/read): 2K,4K,8K,16K ...
    #[arg(long, value_delimiter = ',', default_value = "8K", value_parser = parse_block, help_heading = crate::heading::TEST)]
    pub block: Vec<u32>,
    /// Concurrent clients for rr.
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(1..=256), help_heading = crate::heading::TEST)]
    pub clients: Vec<u32>,
    /// Repetitions per path, test and block.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(2..=1000), conflicts_with = "ci_width", help_heading = crate::heading::REPEAT)]
    pub repeat: u32,
    /// Repeat until every headline mean's 95% CI half-width is within ±PCT% (at least 3, at most --max-repeat).
    #[arg(long, value_name = "PCT", value_parser = parse::parse_pct, help_heading = crate::heading::REPEAT)]
    pub ci_width: Option<f64>,
    /// Upper bound on repetitions with --ci-width.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(3..=1000), help_heading = crate::heading::REPEAT)]
    pub max_repeat: u32,
    /// Length of each repetition.
    #[arg(long, default_value = "5s", value_parser = parse_test_time, help_heading = crate::heading::TEST)]
    pub time: Duration,
    /// Compare even paths whose check failed (the report flags them).
    #[arg(long, help_heading = crate::heading::TEST)]
    pub force: bool,
    /// CPU placement of every repetition (rr, stream, UDP stream), the same for every path: same (client and
    /// agent threads on CPU 0), split (client CPU 0, agent CPU 1) or free (not pinned).
    #[arg(long, value_enum, default_value = "free", help_heading = crate::heading::PLACEMENT)]
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
            return Err(Failure::needs(
                "compare",
                "two or more --path",
                &format!("{} given, and a comparison needs a baseline and another path", a.paths.len()),
                "add --path NAME=HOST for each path, e.g. --path std=10.0.0.2 --path jumbo=10.0.1.2",
            ));
        }
        for (i, p) in a.paths.iter().enumerate() {
            if a.paths.iter().skip(i + 1).any(|q| q.name == p.name) {
                return Err(Failure::bad_value(
                    "--path",
                    &p.name,
                    "distinct path names",
                    "this name is given twice: name each path once (NAME=HOST)",
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
