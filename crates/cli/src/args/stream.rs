//! The flags of one bulk TCP stream test (`stream`), turned into the engine's
//! [`StreamConfig`].
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use mtuperf_engine::config::{bounds, StreamConfig};
use mtuperf_engine::stream::StreamParams;
use mtuperf_proto::msg::{Direction, StreamLimit};

use crate::exit::{self, Failure};
use crate::heading;
use crate::parse;
use crate::parse::{parse_block, parse_interval, parse_test_time, parse_total, parse_window};

#[derive(Debug, clap::Args)]
pub struct StreamArgs {
    /// Bytes per write() and read(): 8K, 8KiB, 9000, 128K ... [default: 128K; 8K
    /// with --udp, where it is the datagram size]
    #[arg(long, value_parser = parse_block, help_heading = heading::SEND)]
    pub block: Option<u32>,
    /// Test length.
    #[arg(long, default_value = "10s", value_parser = parse_test_time, conflicts_with_all = ["bytes", "file"], help_heading = heading::SEND)]
    pub time: Duration,
    /// Send this many bytes per direction instead of running for a time.
    #[arg(long, value_parser = parse_total, conflicts_with = "file", help_heading = heading::SEND)]
    pub bytes: Option<u64>,
    /// Send this file's content (as perl-sockets does); client → agent only.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["reverse", "bidir"], help_heading = heading::SEND)]
    pub file: Option<PathBuf>,
    /// Parallel TCP connections per direction.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=i64::from(bounds::MAX_STREAMS)), help_heading = heading::LOAD)]
    pub streams: u32,
    /// The agent sends, this end receives.
    #[arg(long, conflicts_with = "bidir", help_heading = heading::SEND)]
    pub reverse: bool,
    /// Both directions at once.
    #[arg(long, help_heading = heading::SEND)]
    pub bidir: bool,
    /// Send with sendfile(2) from a memory file holding the payload (zero-copy, as
    /// iperf3 -Z): the sending host does not copy each block in from user memory.
    /// Either end's senders (--reverse, --bidir too); the result says whether each
    /// could (a host that cannot writes instead).
    #[arg(long, help_heading = heading::SEND)]
    pub zerocopy: bool,
    /// Socket buffer size to request (SO_SNDBUF/SO_RCVBUF); the granted size is reported.
    #[arg(long, value_parser = parse_window, help_heading = heading::LOAD)]
    pub window: Option<u32>,
    /// TCP maximum segment size to request (TCP_MAXSEG), 88 to 65495.
    #[arg(long, value_parser = clap::value_parser!(u32).range(88..=65495), help_heading = heading::LOAD)]
    pub mss: Option<u32>,
    /// Print live per-interval lines of both ends.
    #[arg(long, value_parser = parse_interval, help_heading = heading::OUTPUT)]
    pub interval: Option<Duration>,
    /// Warm-up excluded from the summary goodput (still reported).
    #[arg(long, default_value = "0s", value_parser = parse::parse_any_duration, help_heading = heading::OUTPUT)]
    pub omit: Duration,
    /// Receive coalescing: after a read that drained the socket, wait up to this long
    /// before reading again (0 reads again at once, like a plain blocking loop). Never
    /// waits while data is queued nor in the first 100 ms, and never pauses longer than
    /// a quarter of the receive buffer takes to fill. 0 to 10ms [default: 200us for
    /// blocks under 64K, 0 from 64K]
    #[arg(long, value_parser = parse::parse_rx_coalesce, help_heading = heading::LOAD)]
    pub rx_coalesce: Option<Duration>,
    /// Receive polling: after a read that drained the socket, read again at once
    /// without blocking for up to this long before blocking until data comes (as the
    /// kernel's busy polling, on any link). The receiver then processes the packets
    /// that arrive on its own CPU and is never woken per packet; its CPU time includes
    /// the polling. Either end's receivers (--reverse, --bidir too). Excludes
    /// --rx-coalesce. 0 (off, the default) to 10ms, e.g. 50us
    #[arg(long, value_parser = parse::parse_rx_poll, conflicts_with = "rx_coalesce", help_heading = heading::LOAD)]
    pub rx_poll: Option<Duration>,
}

impl StreamArgs {
    /// The engine's parameters: the config (the agent's data threads pinned to
    /// `agent_cpus`, `--agent-cpu`) and, with --file, the file's content.
    pub fn params(&self, agent_cpus: Option<Vec<u32>>) -> Result<StreamParams, Failure> {
        Ok(StreamParams {
            file: self.file.as_ref().map(load_file).transpose()?,
            ..StreamConfig {
                agent_cpus,
                ..self.config()?
            }
            .params()
        })
    }

    fn config(&self) -> Result<StreamConfig, Failure> {
        let a = self;
        if let Some(ms) = a.bytes.map(|_| 0).or(Some(a.time.as_millis() as u64)) {
            if a.bytes.is_none() && a.file.is_none() && a.omit.as_millis() as u64 >= ms {
                return Err(Failure::bad_value(
                    "--omit",
                    &humantime::format_duration(a.omit).to_string(),
                    "less than --time",
                    "the warm-up must leave part of the run to summarise",
                ));
            }
        }
        Ok(StreamConfig {
            streams: a.streams,
            direction: if a.bidir {
                Direction::Bidir
            } else if a.reverse {
                Direction::Reverse
            } else {
                Direction::Forward
            },
            block: a.block.unwrap_or(128 * 1024),
            limit: match a.bytes {
                Some(total) => StreamLimit::Bytes { total },
                None => StreamLimit::Time {
                    ms: a.time.as_millis() as u64,
                },
            },
            window: a.window,
            mss: a.mss,
            interval: a.interval,
            omit: a.omit,
            rx_coalesce: a.rx_coalesce,
            rx_poll: a.rx_poll.unwrap_or_default(),
            agent_cpus: None,
            zerocopy: a.zerocopy,
        })
    }
}

fn load_file(path: &PathBuf) -> Result<(String, Arc<[u8]>), Failure> {
    let data = std::fs::read(path)
        .with_context(|| format!("reading --file {}", path.display()))
        .map_err(|e| Failure::new(exit::USAGE, e))?;
    if data.is_empty() {
        return Err(Failure::bad_value(
            "--file",
            &path.display().to_string(),
            "a non-empty file",
            "this one is empty, so there is nothing to send",
        ));
    }
    Ok((path.display().to_string(), Arc::from(data)))
}
