//! `mtuperf mesh`: verify a whole cluster: every node pair, every interconnect
//! network, both directions, through the nodes' keyed agents (docs/mesh.md). Exit
//! codes like `path`: 0 every path carries its network's MTU, 1 a finding, 2 an error.
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_engine::config::bounds;
use mtuperf_engine::mesh::{self, MeshConfig, MeshTests};
use mtuperf_report::mesh::{self as rm, Document};

use crate::connect;
use crate::exit::CmdResult;
use crate::global::Global;
use crate::history;
use crate::interrupt;
use crate::live::mesh::Progress;
use crate::output::{self, Format, Output};
use crate::parse;

/// Mesh's error exit code (any error, usage and unreachable agents included).
const MESH_ERROR: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Test {
    Path,
    Rr,
    Stream,
    Doctor,
}

/// mesh's outputs.
#[derive(Debug, Clone)]
pub struct Formats;

impl output::Formats for Formats {
    const HAS: &'static [Format] = &[Format::Text, Format::Json];
    const HELP: &'static str = "text (the default), or json: one document of schema mtuperf.mesh/7";
    const HINT: &'static str = "mesh prints its matrices as text or as its JSON document; its HTML grid: `mtuperf report ID`";
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
    #[arg(long = "net", value_name = "CIDR", help_heading = crate::heading::TEST)]
    nets: Vec<IpNet>,
    /// IP packet size every path must carry both ways, 576 to 65535: MTU for every
    /// network, or CIDR=MTU for the networks inside CIDR (repeatable; e.g. a public
    /// 198.51.100.0/24=1500 beside private ones at 9000). Default: the largest
    /// interface MTU on each network.
    #[arg(long, value_name = "[CIDR=]MTU", value_parser = parse_expect, help_heading = crate::heading::TEST)]
    expect: Vec<Expect>,
    /// Tests to run, comma-separated: path (all ordered pairs in parallel), rr (8 KiB
    /// UDP blocks for a 128 B request, one in flight: Cache Fusion) and stream (both in
    /// rounds of disjoint pairs), doctor (settings compared across nodes).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "path", help_heading = crate::heading::TEST)]
    tests: Vec<Test>,
    /// Tests one node takes part in at once (as sender or peer), 1 to 16; at most
    /// the agents' --max-sessions.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=16), help_heading = crate::heading::LOAD)]
    per_node: u16,
    /// Pair tests at once over the whole mesh, 1 to 64 (each waits on one agent; the
    /// agents' hosts run the tests).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=64), help_heading = crate::heading::LOAD)]
    parallel: u16,
    /// Deadline of one pair's test, retries included (a black-holed pair or a node
    /// that never returns its result costs at most this once), 5s to 10m. The run's
    /// deadline follows from it and is printed at the start.
    #[arg(long, default_value = "60s", value_parser = parse_pair_timeout, value_name = "DURATION", help_heading = crate::heading::LOAD)]
    pair_timeout: Duration,
    /// Length of each rr and stream test, 100ms to 1m.
    #[arg(long, default_value = "2s", value_parser = parse_load_time, value_name = "DURATION", help_heading = crate::heading::TEST)]
    time: Duration,
    #[command(flatten)]
    rr: crate::args::mesh::MeshRrArgs,
    #[command(flatten)]
    output: Output<Formats>,
    #[command(flatten)]
    ssh: crate::args::ssh::SshArgs,
}

/// One `--expect`: every network's MTU, or those inside a CIDR.
#[derive(Debug, Clone, Copy)]
enum Expect {
    All(u32),
    Net(mesh::NetExpect),
}

fn parse_expect(s: &str) -> Result<Expect, String> {
    let range = format!("{} to {}", bounds::MIN_EXPECT_MTU, bounds::MAX_EXPECT_MTU);
    let mtu = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|m| (bounds::MIN_EXPECT_MTU..=bounds::MAX_EXPECT_MTU).contains(m))
            .ok_or_else(|| format!("the MTU {v:?} is not a number from {range}"))
    };
    match s.split_once('=') {
        None => mtu(s).map(Expect::All),
        Some((net, m)) => {
            let net: IpNet = net.trim().parse().map_err(|_| {
                format!("{net:?} is not a CIDR; give MTU, or CIDR=MTU such as 198.51.100.0/24=1500")
            })?;
            Ok(Expect::Net(mesh::NetExpect {
                net: net.trunc(),
                mtu: mtu(m)?,
            }))
        }
    }
}

/// The `--expect`s as (every network's, per network), at most one of the first.
fn expects(list: &[Expect]) -> Result<(Option<u32>, Vec<mesh::NetExpect>), crate::exit::Failure> {
    let all: Vec<u32> = list
        .iter()
        .filter_map(|e| match e {
            Expect::All(m) => Some(*m),
            Expect::Net(_) => None,
        })
        .collect();
    if let [_, second, ..] = all.as_slice() {
        return Err(crate::exit::Failure::bad_value(
            "--expect",
            &second.to_string(),
            "one MTU for every network, and any number of CIDR=MTU",
            "give the other networks' MTUs as CIDR=MTU",
        ));
    }
    let per = list
        .iter()
        .filter_map(|e| match e {
            Expect::Net(n) => Some(*n),
            Expect::All(_) => None,
        })
        .collect();
    Ok((all.first().copied(), per))
}

fn parse_pair_timeout(s: &str) -> Result<Duration, String> {
    parse::duration_in(s, Duration::from_secs(5), Duration::from_mins(10))
}

fn parse_load_time(s: &str) -> Result<Duration, String> {
    parse::duration_in(s, Duration::from_millis(100), Duration::from_mins(1))
}

// The dispatcher hands every subcommand its Args by value.
#[allow(clippy::needless_pass_by_value)]
pub fn run(g: &Global, a: Args) -> CmdResult {
    let json = a.output.pick() == Format::Json;
    measure(g, &a, json).map_err(|f| interrupt::error_code(f, MESH_ERROR))
}

fn measure(g: &Global, a: &Args, json: bool) -> CmdResult {
    let store = history::open_store(g)?;
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
    let (expect, expect_nets) = expects(&a.expect)?;
    let mut cfg = MeshConfig {
        nodes: Vec::new(),
        connect: connect::connect_options(g, None)?,
        nets: a.nets.clone(),
        expect,
        expect_nets,
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
    let agents = crate::ssh::mesh_agents(&a.ssh, &a.nodes, &mut cfg)?;
    let stop = interrupt::flag();
    let progress = Progress::new(json);
    let result = mesh::run(&cfg, &stop, &progress);
    progress.bar.finish_and_clear();
    let mut result = result.map_err(connect::engine_failure)?;
    if let Some(agents) = &agents {
        mtuperf_engine::ssh::mesh::add_failed(&mut result, &agents.fleet);
    }
    let mut doc = Document::new(result);
    doc.run_id = history::store_record(
        store.as_ref(),
        &doc,
        history::Place {
            target: &a.nodes.join(" "),
            ..history::Place::default()
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
    Ok(interrupt::measured_exit(&stop, None, code))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expect_takes_an_mtu_or_cidr_mtu_and_one_mtu_for_all() {
        assert!(matches!(parse_expect("9000"), Ok(Expect::All(9000))));
        let Ok(Expect::Net(n)) = parse_expect("198.19.100.7/24=1500") else {
            panic!("CIDR=MTU");
        };
        assert_eq!((n.net.to_string(), n.mtu), ("198.19.100.0/24".into(), 1500));
        for bad in [
            "100",
            "70000",
            "x",
            "198.19.100.0/24=",
            "198.19.100.0=1500",
            "10.0.0.0/8=9k",
        ] {
            let e = parse_expect(bad).unwrap_err();
            assert!(
                e.contains("576 to 65535") || e.contains("CIDR"),
                "{bad}: {e}"
            );
        }
        let list = [
            Expect::All(9000),
            parse_expect("198.19.100.0/24=1500").unwrap(),
        ];
        let (all, per) = expects(&list).unwrap();
        assert_eq!((all, per.len()), (Some(9000), 1));
        let e = expects(&[Expect::All(9000), Expect::All(1500)]).unwrap_err();
        assert!(
            format!("{:#}", e.error).contains("one MTU for every network"),
            "{e:?}"
        );
    }
}
