//! `mtuperf mesh`: verify a whole cluster: every node pair, every interconnect
//! network, both directions, through the nodes' keyed agents (docs/mesh.md). Exit
//! codes like `path`: 0 every path carries its network's MTU, 1 a finding, 2 an error.
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_engine::config::bounds;
use mtuperf_engine::mesh::{self, MeshConfig, MeshTests};
use mtuperf_report::mesh::{self as rm, Document};

use crate::common;
use crate::exit::CmdResult;
use crate::global::Global;
use crate::live::mesh::Progress;
use crate::output::{Format, Output};

/// Mesh's error exit code (any error, usage and unreachable agents included).
const MESH_ERROR: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Test {
    Path,
    Rr,
    Stream,
    Doctor,
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The nodes' agents: HOST[:PORT] or NAME=HOST[:PORT], at least two. Every agent
    /// must run with the same --key-file as this command. With --ssh, the nodes as ssh
    /// reaches them: [NAME=][USER@]HOST[:PORT].
    #[arg(required = true, num_args = 2.., value_name = "NODE")]
    nodes: Vec<String>,
    /// Only the networks inside CIDR (repeatable), like `oifcfg getif` (default:
    /// every subnet on which at least two nodes have an address).
    #[arg(long = "net", value_name = "CIDR")]
    nets: Vec<IpNet>,
    /// IP packet size every path must carry both ways, 576 to 65535 (default: the
    /// largest interface MTU on each network).
    #[arg(long, value_name = "MTU", value_parser = clap::value_parser!(u32).range(i64::from(bounds::MIN_EXPECT_MTU)..=i64::from(bounds::MAX_EXPECT_MTU)))]
    expect: Option<u32>,
    /// Tests to run, comma-separated: path (all ordered pairs in parallel), rr (8 KiB
    /// UDP blocks for a 128 B request, one in flight: Cache Fusion) and stream (both in
    /// rounds of disjoint pairs), doctor (settings compared across nodes).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "path")]
    tests: Vec<Test>,
    /// Tests one node takes part in at once (as sender or peer), 1 to 16; at most
    /// the agents' --max-sessions.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=16))]
    per_node: u16,
    /// Pair tests at once over the whole mesh, 1 to 64 (each waits on one agent; the
    /// agents' hosts run the tests).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=64))]
    parallel: u16,
    /// Deadline of one pair's test, retries included (a black-holed pair or a node
    /// that never returns its result costs at most this once), 5s to 10m. The run's
    /// deadline follows from it and is printed at the start.
    #[arg(long, default_value = "60s", value_parser = parse_pair_timeout, value_name = "DURATION")]
    pair_timeout: Duration,
    /// Length of each rr and stream test, 100ms to 1m.
    #[arg(long, default_value = "2s", value_parser = parse_load_time, value_name = "DURATION")]
    time: Duration,
    #[command(flatten)]
    rr: crate::args::mesh::MeshRrArgs,
    /// text, or json (one document, schema mtuperf.mesh/4).
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    ssh: crate::args::ssh::SshArgs,
}

fn parse_pair_timeout(s: &str) -> Result<Duration, String> {
    common::duration_in(s, Duration::from_secs(5), Duration::from_mins(10))
}

fn parse_load_time(s: &str) -> Result<Duration, String> {
    common::duration_in(s, Duration::from_millis(100), Duration::from_mins(1))
}

// The dispatcher hands every subcommand its Args by value.
#[allow(clippy::needless_pass_by_value)]
pub fn run(g: &Global, a: Args) -> CmdResult {
    a.output
        .pick(Format::Text, &[Format::Text, Format::Json])
        .and_then(|f| measure(g, &a, f == Format::Json))
        .map_err(|f| common::error_code(f, MESH_ERROR))
}

fn measure(g: &Global, a: &Args, json: bool) -> CmdResult {
    let store = common::open_store(g)?;
    let mut tests: Vec<MeshTests> = a
        .tests
        .iter()
        .map(|t| match t {
            Test::Path => MeshTests::Path,
            Test::Rr => MeshTests::Rr,
            Test::Stream => MeshTests::Stream,
            Test::Doctor => MeshTests::Doctor,
        })
        .collect();
    tests.sort_unstable();
    tests.dedup();
    let mut cfg = MeshConfig {
        nodes: Vec::new(),
        connect: common::connect_options(g, None)?,
        nets: a.nets.clone(),
        expect: a.expect,
        tests,
        per_node: usize::from(a.per_node),
        parallel: usize::from(a.parallel),
        pair_timeout: a.pair_timeout,
        load_time: a.time,
        block: a.rr.block()?,
        oifcfg: a.rr.oifcfg()?,
        max_block_p99: a.rr.max_block_p99(),
    };
    // Agents started over SSH (--ssh) are stopped when `agents` goes, however this ends.
    let agents = crate::groups::ssh::mesh_agents(&a.ssh, &a.nodes, &mut cfg)?;
    let stop = common::interrupt_flag();
    let progress = Progress::new(json);
    let result = mesh::run(&cfg, &stop, &progress);
    progress.bar.finish_and_clear();
    let mut result = result.map_err(common::engine_failure)?;
    if let Some(agents) = &agents {
        mtuperf_engine::ssh::mesh::add_failed(&mut result, &agents.fleet);
    }
    let mut doc = Document::new(result);
    doc.run_id = common::store_record(
        store.as_ref(),
        &doc,
        common::Place {
            target: &a.nodes.join(" "),
            ..common::Place::default()
        },
    )?;
    if json {
        crate::out::json(&doc);
    } else {
        out!("{}", rm::text(&doc));
        if let Some(id) = doc.run_id {
            outln!("stored as run {id}");
        }
    }
    let code = u8::from(!doc.ok);
    Ok(common::measured_exit(&stop, None, code))
}
