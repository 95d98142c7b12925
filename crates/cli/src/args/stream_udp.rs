//! `stream --udp`'s own flags (flattened into `stream`'s), what it shares with TCP,
//! and the engine config they make.
use std::time::Duration;

use mtuperf_engine::config::UdpStreamConfig;
use mtuperf_proto::msg::udp::UdpIo;
use mtuperf_proto::msg::{Direction, StreamLimit};
use mtuperf_proto::units::BitsPerSec;

#[derive(Debug, Clone, clap::Args)]
#[command(next_help_heading = crate::heading::UDP)]
pub struct UdpArgs {
    /// Send UDP datagrams of --block bytes (default 8K; fragmented by the kernel above
    /// the path MTU) paced at --rate, and count them on the receiving end.
    #[arg(long, conflicts_with_all = ["file", "mss", "omit", "ssh", "zerocopy", "rx_poll"])]
    pub udp: bool,
    /// With --udp: offered rate per direction in bit/s of UDP payload (1G, 500M, 0 or
    /// max = as fast as the agent's --max-rate allows); a comma-separated list
    /// (1G,2G,4G,max) sweeps the rates and reports the knee.
    #[arg(long, requires = "udp", default_value = "1G", value_parser = parse_rates)]
    pub rate: Rates,
    /// With --udp and a rate list: the loss a rate may show and still pass, in %.
    #[arg(long, requires = "udp", default_value = "0.1", value_parser = parse_loss)]
    pub max_loss: f64,
    /// With --udp: how both ends move datagrams, at most: plain (a system call per
    /// datagram), batch (sendmmsg/recvmmsg), gso (batches, plus UDP GSO for
    /// datagrams that fit the path MTU and UDP_GRO, where the kernel has them).
    /// Each socket falls back to what its kernel and path allow, and the result says
    /// what each end used.
    #[arg(long, requires = "udp", default_value = "gso", value_name = "plain|batch|gso", value_parser = parse_io)]
    pub udp_io: UdpIo,
}

fn parse_io(s: &str) -> Result<UdpIo, String> {
    match s {
        "plain" => Ok(UdpIo::Plain),
        "batch" => Ok(UdpIo::Batch),
        "gso" => Ok(UdpIo::Gso),
        _ => Err(format!(
            "{s} is not an I/O mode: plain, batch or gso (gso, the default, uses the best the kernel and path allow)"
        )),
    }
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
    /// `--cpu` and `--agent-cpu`.
    pub cpus: Option<Vec<u32>>,
    pub agent_cpus: Option<Vec<u32>>,
}

impl Common<'_> {
    pub fn config(&self, rate_bps: u64, io: UdpIo) -> UdpStreamConfig {
        let c = self;
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
            cpus: c.cpus.clone(),
            agent_cpus: c.agent_cpus.clone(),
            io,
        }
    }
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
        assert_eq!(parse_io("batch"), Ok(UdpIo::Batch));
        let e = parse_io("fast").unwrap_err();
        assert!(
            e.contains("fast") && e.contains("plain, batch or gso"),
            "{e}"
        );
    }
}
