//! `mtuperf stream --udp`: paced UDP datagram streams (the flags that only UDP has,
//! flattened into `stream`'s, and the run).
use std::sync::atomic::Ordering;
use std::time::Duration;

use mtuperf_engine::client::Session;
use mtuperf_engine::config::UdpStreamConfig;
use mtuperf_engine::stream::udp::{self, UdpObserver};
use mtuperf_engine::stream::End;
use mtuperf_proto::msg::udp::{UdpInterval, UdpStreamReady, MAX_UDP_BLOCK, MIN_UDP_BLOCK};
use mtuperf_proto::msg::{Direction, StreamLimit};
use mtuperf_proto::units::BitsPerSec;
use mtuperf_report::stream::udp::{self as ru, Document, RunDoc, Sweep};

use crate::common;
use crate::exit::{CmdResult, Failure};
use crate::global::Global;

#[derive(Debug, Clone, clap::Args)]
pub struct UdpArgs {
    /// Send UDP datagrams of --block bytes (default 8K; fragmented by the kernel above
    /// the path MTU) paced at --rate, and count them on the receiving end.
    #[arg(long, conflicts_with_all = ["file", "mss", "omit"])]
    pub udp: bool,
    /// With --udp: offered rate per direction in bit/s of UDP payload (1G, 500M, 0 or
    /// max = as fast as the agent's --max-rate allows); a comma-separated list
    /// (1G,2G,4G,max) sweeps the rates and reports the knee.
    #[arg(long, requires = "udp", default_value = "1G", value_parser = parse_rates)]
    pub rate: Rates,
    /// With --udp and a rate list: the loss a rate may show and still pass, in %.
    #[arg(long, requires = "udp", default_value = "0.1", value_parser = parse_loss)]
    pub max_loss: f64,
}

/// One or more rates (0 = max).
#[derive(Debug, Clone, PartialEq)]
pub struct Rates(pub Vec<u64>);

fn parse_rates(s: &str) -> Result<Rates, String> {
    let rates = s
        .split(',')
        .map(|r| match r.trim() {
            "max" | "0" => Ok(0),
            r => BitsPerSec::parse(r)
                .map(|b| b.0 as u64)
                .map_err(|e| format!("{e}, or max")),
        })
        .collect::<Result<Vec<u64>, String>>()?;
    if rates.len() > 64 {
        return Err(format!("{} rates: at most 64", rates.len()));
    }
    Ok(Rates(rates))
}

fn parse_loss(s: &str) -> Result<f64, String> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s} is not a loss percentage from 0 to 100 (e.g. 0.1)"
        )),
    }
}

/// What `stream` passes on: the flags it shares with TCP.
pub struct Common<'a> {
    pub target: &'a str,
    pub bind: Option<std::net::IpAddr>,
    pub block: Option<u32>,
    pub time: Duration,
    pub bytes: Option<u64>,
    pub streams: u32,
    pub reverse: bool,
    pub bidir: bool,
    pub window: Option<u32>,
    pub interval: Option<Duration>,
    pub repeat: u32,
    pub json: bool,
    pub label: Option<&'a str>,
}

struct Printer {
    live: bool,
}

impl UdpObserver for Printer {
    fn ready(&self, _r: &UdpStreamReady) {
        if self.live {
            outln!("{}", ru::interval_header());
        }
    }
    fn interval(&self, end: End, s: &UdpInterval) {
        if self.live {
            outln!("{}", ru::interval_line(end, s));
        }
    }
}

fn config(c: &Common<'_>, rate_bps: u64) -> UdpStreamConfig {
    UdpStreamConfig {
        streams: c.streams,
        direction: if c.bidir {
            Direction::Bidir
        } else if c.reverse {
            Direction::Reverse
        } else {
            Direction::Forward
        },
        block: c.block.unwrap_or(8192),
        limit: match c.bytes {
            Some(total) => StreamLimit::Bytes { total },
            None => StreamLimit::Time {
                ms: c.time.as_millis() as u64,
            },
        },
        rate_bps,
        window: c.window,
        interval: c.interval,
    }
}

pub fn run(g: &Global, c: &Common<'_>, u: &UdpArgs) -> CmdResult {
    let block = c.block.unwrap_or(8192);
    if !(MIN_UDP_BLOCK..=MAX_UDP_BLOCK).contains(&block) {
        return Err(Failure::usage(
            "--block",
            &block.to_string(),
            &format!("{MIN_UDP_BLOCK} to {MAX_UDP_BLOCK} bytes with --udp"),
            "a datagram carries a 40-byte header and at most 65507 bytes over IPv4; e.g. --block 8K",
        ));
    }
    let store = common::open_store(g)?;
    let opts = common::connect_options(g, c.bind)?;
    let stop = common::interrupt_flag();
    let printer = Printer {
        live: c.interval.is_some() && !c.json,
    };
    let sweeping = u.rate.0.len() > 1;
    // A sweep runs each rate once (--repeat times each); a single rate --repeat times.
    let plan: Vec<u64> = u
        .rate
        .0
        .iter()
        .flat_map(|&r| std::iter::repeat_n(r, c.repeat as usize))
        .collect();
    let mut runs = Vec::new();
    for (i, &rate) in plan.iter().enumerate() {
        let session = Session::connect(c.target, &opts).map_err(common::engine_failure)?;
        let result =
            udp::run(&session, &config(c, rate), &stop, &printer).map_err(common::engine_failure);
        session.close();
        let mut run = RunDoc::new(result?);
        if !c.json {
            if i == 0 {
                out!("{}", ru::header(&run.result));
            }
            if plan.len() == 1 {
                out!("{}", ru::summary_text(&run));
            } else {
                outln!("{}", ru::run_line(i, &run));
            }
        }
        run.run_id = common::store_record(
            store.as_ref(),
            &run,
            common::Place {
                target: c.target,
                group: None,
                label: c.label,
            },
        )?;
        if let (Some(id), false, 1) = (run.run_id, c.json, plan.len()) {
            outln!("stored as run {id}");
        }
        runs.push(run);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    let sweep = sweeping.then(|| Sweep::new(&runs, u.max_loss));
    let doc = Document::new(runs, sweep);
    if c.json {
        crate::out::json(&doc);
    } else if doc.runs.len() > 1 {
        out!("{}", ru::text(&doc));
    }
    let why = doc
        .runs
        .iter()
        .find_map(|r| r.result.interrupt_reason.as_deref());
    Ok(common::measured_exit(&stop, why, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_lists_and_max() {
        assert_eq!(
            parse_rates("1G,2.5G,max,0,500M"),
            Ok(Rates(vec![1_000_000_000, 2_500_000_000, 0, 0, 500_000_000]))
        );
        assert!(parse_rates("fast").unwrap_err().contains("or max"));
        assert_eq!(parse_loss("0.1%"), Ok(0.1));
        assert!(parse_loss("101").is_err());
    }
}
