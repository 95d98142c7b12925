//! The mesh's block test and the cluster's own definition of its networks: `--block`,
//! `--request`, `--proto`, `--rate` (the Cache Fusion pattern by default),
//! `--max-block-p99`, and `--oifcfg FILE|-` (the output of `oifcfg getif`).
use std::io::Read as _;
use std::path::PathBuf;
use std::time::Duration;

use mtuperf_engine::mesh::{oifcfg, BlockTest, OifcfgEntry};
use mtuperf_engine::rr::MAX_UDP_BLOCK;
use mtuperf_proto::msg::rr::RrProto;

use crate::args::rr::{parse_rate, parse_request, parse_rr_block, Proto};
use crate::exit::Failure;
use crate::parse;

/// Largest `--oifcfg` input read (`oifcfg getif` prints a few lines).
const MAX_OIFCFG_BYTES: u64 = 1 << 20;

#[derive(Debug, clap::Args)]
pub struct MeshRrArgs {
    /// rr: block each pair's answering node sends, 1 B to 1 MiB (udp: at most 65467 B);
    /// RAC's database block by default.
    #[arg(long, default_value = "8K", value_parser = parse_rr_block, help_heading = crate::heading::SEND)]
    block: u32,
    /// rr: request size, 0 to 65467 B.
    #[arg(long, default_value = "128", value_parser = parse_request, help_heading = crate::heading::SEND)]
    request: u32,
    /// rr: udp (one datagram per block, fragmented by IP above the MTU: Cache Fusion's
    /// transport) or tcp.
    #[arg(long, value_enum, default_value = "udp", help_heading = crate::heading::SEND)]
    proto: Proto,
    /// rr: open loop, requests per second per pair (latency from each request's due
    /// time); without it each pair asks again as soon as its block arrives.
    #[arg(long, value_parser = parse_rate, help_heading = crate::heading::LOAD)]
    rate: Option<u64>,
    /// The rr check's limit on every pair's block p99, 10us to 10s (default: 1ms on
    /// a network in private address space, none elsewhere).
    #[arg(long, value_parser = parse_max_p99, value_name = "DURATION", help_heading = crate::heading::TEST)]
    max_block_p99: Option<Duration>,
    /// The output of `$GRID_HOME/bin/oifcfg getif` (a file, or - for stdin): test
    /// exactly its cluster_interconnect subnets, by interface, and the HAIP
    /// link-local subnets on those interfaces. Not with --net.
    #[arg(long, value_name = "FILE|-", conflicts_with = "nets", help_heading = crate::heading::TEST)]
    oifcfg: Option<PathBuf>,
}

fn parse_max_p99(s: &str) -> Result<Duration, String> {
    parse::duration_in(s, Duration::from_micros(10), Duration::from_secs(10))
}

impl MeshRrArgs {
    /// The block test the flags describe.
    pub fn block(&self) -> Result<BlockTest, Failure> {
        let proto = match self.proto {
            Proto::Udp => RrProto::Udp,
            Proto::Tcp => RrProto::Tcp,
        };
        if proto == RrProto::Udp && self.block > MAX_UDP_BLOCK {
            return Err(Failure::bad_value(
                "--block",
                &self.block.to_string(),
                &format!("1 to {MAX_UDP_BLOCK} B with --proto udp"),
                "a UDP datagram carries at most 65507 B, 40 of them mtuperf's header; use --proto tcp for larger blocks",
            ));
        }
        Ok(BlockTest {
            proto,
            block: self.block,
            request: self.request,
            rate: self.rate,
        })
    }

    pub fn max_block_p99(&self) -> Option<Duration> {
        self.max_block_p99
    }

    /// `--oifcfg`: its entries, read and parsed (None without the flag).
    pub fn oifcfg(&self) -> Result<Option<Vec<OifcfgEntry>>, Failure> {
        let Some(path) = &self.oifcfg else {
            return Ok(None);
        };
        let shown = path.display().to_string();
        let mut text = String::new();
        let read = if path.as_os_str() == "-" {
            std::io::stdin()
                .take(MAX_OIFCFG_BYTES)
                .read_to_string(&mut text)
        } else {
            std::fs::File::open(path)
                .and_then(|f| f.take(MAX_OIFCFG_BYTES).read_to_string(&mut text))
        };
        read.map_err(|e| {
            Failure::bad_value(
                "--oifcfg",
                &shown,
                "a readable text file, or - for stdin",
                &format!("{e}; save it on a cluster node with `$GRID_HOME/bin/oifcfg getif > oifcfg.txt`"),
            )
        })?;
        oifcfg::parse(&text).map(Some).map_err(|e| {
            Failure::bad_value(
                "--oifcfg",
                &shown,
                "the output of `oifcfg getif`",
                &e.to_string(),
            )
        })
    }
}
