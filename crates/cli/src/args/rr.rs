//! The flags of one block request/response test (`rr`), turned into the engine's
//! [`RrConfig`] for each load step.
use std::time::Duration;

use mtuperf_engine::config::{bounds, RrConfig};
use mtuperf_engine::rr::MAX_UDP_BLOCK;
use mtuperf_proto::msg::rr::{RrHooks, RrProto};

use crate::exit::Failure;
use crate::heading;
use crate::parse;
use crate::parse::{parse_any_duration, parse_interval, parse_test_time};

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Proto {
    Udp,
    Tcp,
}

#[derive(Debug, clap::Args)]
pub struct RrArgs {
    /// udp: one datagram per block (IP fragments it above the MTU); tcp: one persistent
    /// connection per client.
    #[arg(long, value_enum, default_value = "udp", help_heading = heading::SEND)]
    proto: Proto,
    /// Block size the agent answers with (bytes after mtuperf's 40-byte header), 1 B to 1 MiB
    /// (udp: at most 65467 B).
    #[arg(long, default_value = "8K", value_parser = parse_rr_block, help_heading = heading::SEND)]
    block: u32,
    /// Request size (bytes after the 40-byte header), 0 to 65467 B.
    #[arg(long, default_value = "128", value_parser = parse_request, help_heading = heading::SEND)]
    request: u32,
    /// Concurrent clients; a comma-separated list runs a sweep (e.g. 1,2,4,8,16,32,64,128,256).
    /// Default 1 (closed loop) or 16 (with --rate).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=i64::from(bounds::MAX_CLIENTS)), help_heading = heading::LOAD)]
    clients: Vec<u32>,
    /// Open loop: requests per second across all clients, latency measured from each
    /// request's due time. Without it, each client asks again as soon as its block arrives.
    #[arg(long, value_parser = parse_rate, help_heading = heading::LOAD)]
    rate: Option<u64>,
    /// Agent serving threads (the "LMS processes"); default: the agent's core count (one for a
    /// single UDP client, which has one request in flight).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(bounds::MAX_WORKERS)), help_heading = heading::LOAD)]
    workers: Option<u32>,
    /// Client threads, each owning its share of the clients; default: one per core. Add
    /// threads when rr warns that the client's threads were busy.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(bounds::MAX_THREADS)), help_heading = heading::LOAD)]
    threads: Option<u32>,
    /// Length of each load step.
    #[arg(long, default_value = "10s", value_parser = parse_test_time, help_heading = heading::SEND)]
    pub time: Duration,
    /// UDP: a request unanswered this long is counted lost and re-sent under a new
    /// sequence number (1 ms to 60 s).
    #[arg(long, default_value = "100ms", value_parser = parse_timeout, help_heading = heading::LOAD)]
    timeout: Duration,
    /// Check every block's checksum (catches corruption such as broken checksum offload).
    #[arg(long, help_heading = heading::SEND)]
    pub verify: bool,
    /// Both ends request and serve blocks at the same time: the agent also requests
    /// blocks of the same sizes, clients and load from a responder on this host.
    #[arg(long, help_heading = heading::SEND)]
    bidir: bool,
    /// Print live per-interval lines.
    #[arg(long, value_parser = parse_interval, help_heading = heading::OUTPUT)]
    pub interval: Option<Duration>,
    /// Test hook (agent needs --test-hooks): stall every agent worker once for this long.
    #[arg(long, hide = true, value_parser = parse_any_duration)]
    hook_stall: Option<Duration>,
    /// Test hook: when the stall starts, after Go.
    #[arg(long, hide = true, value_parser = parse_any_duration)]
    hook_stall_after: Option<Duration>,
    /// Test hook: flip one byte of response number N (1-based).
    #[arg(long, hide = true)]
    hook_corrupt: Option<u64>,
}

impl RrArgs {
    /// The longest a sweep over `loads` can take (each step's time and 30 s of setup).
    pub fn longest(&self, loads: &[u32]) -> Duration {
        (self.time + Duration::from_secs(30)) * loads.len() as u32
    }

    /// The client counts of the steps to run (one unless --clients lists a sweep).
    pub fn loads(&self) -> Result<Vec<u32>, Failure> {
        let a = self;
        if matches!(a.proto, Proto::Udp) && a.block > MAX_UDP_BLOCK {
            return Err(Failure::bad_value(
                "--block",
                &a.block.to_string(),
                &format!("1 to {MAX_UDP_BLOCK} B with --proto udp"),
                "a UDP datagram carries at most 65507 B, 40 of them mtuperf's header; use --proto tcp for larger blocks",
            ));
        }
        Ok(if a.clients.is_empty() {
            vec![if a.rate.is_some() { 16 } else { 1 }]
        } else {
            a.clients.clone()
        })
    }

    /// One load step's config.
    pub fn config(&self, clients: u32) -> RrConfig {
        let a = self;
        RrConfig {
            proto: match a.proto {
                Proto::Udp => RrProto::Udp,
                Proto::Tcp => RrProto::Tcp,
            },
            block: a.block,
            request: a.request,
            workers: a.workers,
            clients,
            time: a.time,
            rate: a.rate,
            timeout: a.timeout,
            verify: a.verify,
            threads: a.threads,
            interval: a.interval.unwrap_or(Duration::from_secs(1)),
            bidir: a.bidir,
            hooks: self.hooks(),
            cpus: None,
            agent_cpus: None,
            // A step that gets nothing back names its likely cause.
            explain: true,
        }
    }

    fn hooks(&self) -> Option<RrHooks> {
        let a = self;
        (a.hook_stall.is_some() || a.hook_corrupt.is_some()).then(|| RrHooks {
            stall_ms: a.hook_stall.map_or(0, |d| d.as_millis() as u64),
            stall_after_ms: a.hook_stall_after.map_or(0, |d| d.as_millis() as u64),
            corrupt_response: a.hook_corrupt.unwrap_or(0),
        })
    }
}

/// --rate: 1 to 100M requests/s, SI suffixes allowed.
pub(crate) fn parse_rate(s: &str) -> Result<u64, String> {
    parse::count_in(
        s,
        1,
        bounds::MAX_RATE,
        " requests/s (e.g. 5000, 10k, 2.5k, 1M)",
    )
}

pub(crate) fn parse_rr_block(s: &str) -> Result<u32, String> {
    let v = parse::parse_block(s)?;
    if u64::from(v) > bounds::MAX_RR_BLOCK {
        return Err(format!("{v} is out of range: allowed 1 B to 1.0 MiB"));
    }
    Ok(v)
}

pub(crate) fn parse_request(s: &str) -> Result<u32, String> {
    let v = mtuperf_proto::units::Bytes::parse(s)
        .map_err(|e| e.to_string())?
        .0;
    if v > u64::from(bounds::MAX_REQUEST) {
        return Err(format!(
            "{v} is out of range: allowed 0 to {} B",
            bounds::MAX_REQUEST
        ));
    }
    Ok(v as u32)
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = mtuperf_proto::units::parse_duration(s).map_err(|e| e.to_string())?;
    if d < bounds::MIN_RR_TIMEOUT || d > bounds::MAX_RR_TIMEOUT {
        return Err(format!("{s} is out of range: allowed 1ms to 60s"));
    }
    Ok(d)
}

/// `--from` needs a key (only keyed agents test toward others) and a client per host.
pub fn check_from(from: &[String], loads: &[u32], keyed: bool) -> Result<(), Failure> {
    if !keyed {
        return Err(Failure::needs(
            "--from",
            "--key-file",
            "it asks agents to test toward another agent, which only keyed agents do",
            "give the key file every --from agent and the target's agent run with (or MTUPERF_KEY_FILE); `mtuperf keygen` writes one",
        ));
    }
    let n = from.len() as u32;
    match loads.iter().find(|&&c| c < n) {
        Some(c) => Err(Failure::bad_value(
            "--clients",
            &c.to_string(),
            &format!("at least {n}, one per --from host"),
            "--clients is the total over the --from hosts, split as evenly as it goes",
        )),
        None => Ok(()),
    }
}
