//! The node's side (`mtuperf serve --ssh-stdio`, started by the bootstrap script): say
//! hello, take the one-time key and addresses from stdin, listen on one port chosen by
//! the kernel on every address, say ready, then stop at the coordinator's `stop`, at
//! end of input, or when no line came for [`LEASE`].

use std::io::{BufRead, Write};
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use ipnet::IpNet;
use mtuperf_proto::auth::Key;

use super::wire::{ssh_connection, Hello, NodeMsg, Ready, Start, LEASE, PING, STOP};
use crate::agent::{Agent, AgentConfig};
use crate::{EngineError, Shutdown};

/// Lines of stdin, read on their own thread (`None`: end of input).
pub struct Lines {
    rx: Receiver<Option<String>>,
}

/// What the next line was.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Line(String),
    End,
    Silent,
}

impl Lines {
    pub fn spawn(input: impl BufRead + Send + 'static) -> Lines {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in input.lines() {
                match line {
                    Ok(l) => {
                        if tx.send(Some(l)).is_err() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            let _ = tx.send(None);
        });
        Lines { rx }
    }

    pub fn next(&self, within: Duration) -> Next {
        match self.rx.recv_timeout(within) {
            Ok(Some(l)) => Next::Line(l),
            Ok(None) | Err(RecvTimeoutError::Disconnected) => Next::End,
            Err(RecvTimeoutError::Timeout) => Next::Silent,
        }
    }
}

/// What the coordinator's [`Start`] gave this agent.
#[derive(Debug)]
pub struct Setup {
    pub key: Key,
    pub binds: Vec<IpAddr>,
    pub allow: Vec<IpNet>,
    pub max_sessions: u32,
}

fn say(out: &mut dyn Write, msg: &NodeMsg) -> Result<(), EngineError> {
    let line = serde_json::to_string(msg).map_err(|e| EngineError::Protocol(e.to_string()))?;
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| EngineError::io("write to the SSH channel", e))
}

/// Says hello (version, interfaces, the SSH connection's ends) and waits for the
/// coordinator's [`Start`] at most `wait`: the coordinator sends it once every node
/// has said hello, which can take a slow node's whole bootstrap deadline, so the
/// caller gives the agent's lifetime (the end of the channel ends the wait earlier).
pub fn handshake(
    version: &str,
    lines: &Lines,
    out: &mut dyn Write,
    wait: Duration,
) -> Result<Setup, EngineError> {
    let (ssh_client, ssh_server) =
        ssh_connection(&std::env::var("SSH_CONNECTION").unwrap_or_default());
    let hello = Hello {
        version: version.to_string(),
        discovery: crate::mesh::agent::discover(),
        addrs: mtuperf_sys::netdev::addresses().unwrap_or_default(),
        ssh_server,
        ssh_client,
    };
    say(out, &NodeMsg::Hello(Box::new(hello)))?;
    let until = std::time::Instant::now() + wait;
    let what = || "the coordinator's start".to_string();
    let line = loop {
        match lines.next(until.saturating_duration_since(std::time::Instant::now())) {
            Next::Line(l) if l.trim() == PING => {}
            Next::Line(l) => break l,
            Next::End => return Err(EngineError::Closed { what: what() }),
            Next::Silent => {
                return Err(EngineError::Timeout {
                    what: what(),
                    secs: wait.as_secs(),
                })
            }
        }
    };
    let start: Start = serde_json::from_str(&line)
        .map_err(|e| EngineError::Protocol(format!("the coordinator's start: {e}")))?;
    let key = Key::parse_file(&start.key)
        .map_err(|e| EngineError::Protocol(format!("the coordinator's key: {e}")))?;
    if start.binds.is_empty() {
        return Err(EngineError::Protocol("no address to listen on".into()));
    }
    Ok(Setup {
        key,
        binds: start.binds,
        allow: start.allow,
        max_sessions: start.max_sessions,
    })
}

/// Binds the agent on every address of `ips` with one port the kernel picks (tried
/// again when another program takes it on a later address in between).
pub fn bind_one_port(mut config: AgentConfig, ips: &[IpAddr]) -> Result<Agent, EngineError> {
    let first = *ips
        .first()
        .ok_or_else(|| EngineError::Protocol("no address to listen on".into()))?;
    let mut tries = 0;
    loop {
        let probe = SocketAddr::new(first, 0);
        let port = TcpListener::bind(probe)
            .and_then(|l| l.local_addr())
            .map_err(|source| EngineError::Bind {
                addr: probe,
                source,
            })?
            .port();
        config.binds = ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect();
        match Agent::bind(config.clone()) {
            Err(EngineError::Bind { source, .. })
                if source.kind() == std::io::ErrorKind::AddrInUse && tries < 8 =>
            {
                tries += 1;
            }
            r => return r,
        }
    }
}

/// Tells the coordinator the agent listens on `port`.
pub fn ready(out: &mut dyn Write, port: u16) -> Result<(), EngineError> {
    say(out, &NodeMsg::Ready(Ready { port }))
}

/// Tells the coordinator why the agent could not start.
pub fn failed(out: &mut dyn Write, why: &str) {
    let _ = say(out, &NodeMsg::Failed(why.to_string()));
}

/// Why the agent stopped by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Stop,
    EndOfInput,
    Lease,
}

impl Ended {
    pub fn describe(self) -> String {
        match self {
            Ended::Stop => "the coordinator said stop".into(),
            Ended::EndOfInput => "the SSH channel closed (coordinator or connection gone)".into(),
            Ended::Lease => format!("no word from the coordinator for {} s", LEASE.as_secs()),
        }
    }
}

/// Watches stdin on its own thread: triggers `shutdown` at `stop`, end of input or a
/// silence of `lease`, and calls `ended` with why.
pub fn watch(
    lines: Lines,
    lease: Duration,
    shutdown: Shutdown,
    ended: impl FnOnce(Ended) + Send + 'static,
) {
    std::thread::spawn(move || {
        let why = loop {
            if shutdown.is_set() {
                return;
            }
            match lines.next(lease) {
                Next::Line(l) if l.trim() == STOP => break Ended::Stop,
                Next::Line(_) => {}
                Next::End => break Ended::EndOfInput,
                Next::Silent => break Ended::Lease,
            }
        };
        ended(why);
        shutdown.trigger();
    });
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;
    use std::net::Ipv4Addr;

    use super::*;

    #[test]
    fn hello_then_start_gives_the_setup() {
        let key = Key([7; 32]);
        let start = Start {
            key: key.to_file(),
            binds: vec![IpAddr::V4(Ipv4Addr::LOCALHOST)],
            allow: vec!["127.0.0.1/32".parse().unwrap()],
            max_sessions: 8,
        };
        let input = format!("ping\n{}\n", serde_json::to_string(&start).unwrap());
        let lines = Lines::spawn(Cursor::new(input.into_bytes()));
        let mut out = Vec::new();
        let s = handshake("mtuperf test", &lines, &mut out, Duration::from_secs(5)).unwrap();
        assert_eq!(s.key, key);
        assert_eq!(s.max_sessions, 8);
        let hello: NodeMsg =
            serde_json::from_slice(out.split(|&b| b == b'\n').next().unwrap()).unwrap();
        let NodeMsg::Hello(h) = hello else {
            panic!("{hello:?}")
        };
        assert_eq!(h.version, "mtuperf test");
    }

    #[test]
    fn a_closed_channel_before_start_is_an_error() {
        let lines = Lines::spawn(Cursor::new(Vec::new()));
        let e = handshake("v", &lines, &mut Vec::new(), Duration::from_secs(5)).unwrap_err();
        assert!(e.to_string().contains("start"), "{e}");
    }

    #[test]
    fn one_port_on_every_address() {
        let ips = [
            IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)),
        ];
        let agent = bind_one_port(AgentConfig::new(Vec::new()), &ips).unwrap();
        let addrs = agent.local_addrs();
        assert_eq!(addrs.len(), 2);
        assert_eq!(addrs[0].port(), addrs[1].port());
        assert_ne!(addrs[0].port(), 0);
    }

    #[test]
    fn stops_at_stop_at_end_of_input_and_after_the_lease() {
        let cases: [(&[u8], Ended); 3] = [
            (b"ping\nstop\n", Ended::Stop),
            (b"ping\n", Ended::EndOfInput),
            // A reader that never ends: the lease runs out.
            (b"", Ended::Lease),
        ];
        for (input, want) in cases {
            let shutdown = Shutdown::new();
            let (tx, rx) = mpsc::channel();
            let lines = if want == Ended::Lease {
                let (r, w) = std::io::pipe().unwrap();
                std::mem::forget(w);
                Lines::spawn(std::io::BufReader::new(r))
            } else {
                Lines::spawn(Cursor::new(input.to_vec()))
            };
            watch(
                lines,
                Duration::from_millis(200),
                shutdown.clone(),
                move |e| {
                    let _ = tx.send(e);
                },
            );
            assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), want);
            std::thread::sleep(Duration::from_millis(20));
            assert!(shutdown.is_set());
        }
    }
}
