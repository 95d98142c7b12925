//! `Lab::serve`: start `mtuperf serve` inside every server host, detached (its own
//! session, output to a log in the state directory), and wait until each one listens.
//! The namespace is entered and the session left by mtuperf itself (no `ip`,
//! `setsid` or `ss` needed).
use std::fs::File;
use std::net::IpAddr;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mtuperf_sys::netns;

use crate::cmd::{in_ns, shell_line, Runner};
use crate::down::{agent_alive, process_running};
use crate::env::check_privilege;
use crate::error::LabError;
use crate::scenario::Role;
use crate::state::{Agent, Lab};

/// How long an agent may take to listen.
const LISTEN_WAIT: Duration = Duration::from_secs(5);

/// The port the agent will listen on: the last `--port P` / `--port=P` in `extra`.
pub(crate) fn port_from_args(extra: &[String]) -> u16 {
    let mut port = mtuperf_proto::DEFAULT_PORT;
    let mut it = extra.iter();
    while let Some(a) = it.next() {
        let value = match a.strip_prefix("--port=") {
            Some(v) => Some(v.to_string()),
            None if a == "--port" || a == "-p" => it.next().cloned(),
            None => None,
        };
        if let Some(p) = value.and_then(|v| v.parse().ok()) {
            port = p;
        }
    }
    port
}

/// Whether a TCP socket listens on `port` inside namespace `ns`: the namespace's
/// `/proc/net/tcp` and `tcp6`, read from a thread inside it.
pub(crate) fn listening(ns: &str, port: u16) -> bool {
    netns::run_in(ns, || {
        ["tcp", "tcp6"].iter().any(|t| {
            std::fs::read_to_string(format!("/proc/thread-self/net/{t}"))
                .is_ok_and(|table| listens_on(&table, port))
        })
    })
    .unwrap_or(false)
}

/// Whether the text of a `/proc/net/tcp{,6}` table has a socket in state LISTEN (0A)
/// on local port `port` (hex after the colon of `local_address`).
pub(crate) fn listens_on(table: &str, port: u16) -> bool {
    table.lines().skip(1).any(|l| {
        let mut f = l.split_whitespace();
        let local = f.nth(1).and_then(|a| a.rsplit(':').next());
        let state = f.nth(1);
        let local_port = local.and_then(|p| u16::from_str_radix(p, 16).ok());
        local_port == Some(port) && state == Some("0A")
    })
}

fn log_tail(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

impl Lab {
    /// The hosts that get an agent and the addresses each binds: every scenario's
    /// server (its v4 and v6 target), or every cluster node (its addresses on every
    /// network, and its HAIP addresses).
    pub fn agent_hosts(&self) -> Vec<(String, Vec<IpAddr>)> {
        if let Some(c) = &self.cluster {
            let nodes = self.hosts.iter().filter(|h| h.role == Role::Node);
            return nodes
                .map(|h| {
                    let nics = self.links.iter().map(|l| &l.a).filter(|i| i.host == h.name);
                    let mut binds: Vec<IpAddr> =
                        nics.flat_map(|i| [i.v4.into(), i.v6.into()]).collect();
                    let i: u8 = h.name.trim_start_matches('n').parse().unwrap_or(0);
                    if c.haip && i > 0 {
                        binds.extend(
                            (1..=c.nets)
                                .map(|k| IpAddr::from(crate::build_cluster::haip_addr(k, i).0)),
                        );
                    }
                    (h.name.clone(), binds)
                })
                .collect();
        }
        self.scenarios
            .iter()
            .map(|&s| {
                let binds = [self.target(s), self.target_v6(s)];
                (
                    s.server_host().to_string(),
                    binds.into_iter().flatten().collect(),
                )
            })
            .collect()
    }

    /// Starts an agent (`<this executable> serve --bind ADDR... EXTRA...`) in each
    /// of [`Lab::agent_hosts`] that has none running, records it in the state, and waits up to 5 s
    /// for each to listen. An agent that exits or does not listen is an error that
    /// quotes the end of its log.
    pub fn serve(&mut self, extra_args: &[String]) -> Result<(), LabError> {
        check_privilege("mtuperf lab serve")?;
        let exe = agent_exe()?;
        let port = port_from_args(extra_args);
        let key = if crate::key::names_key_file(extra_args) {
            None
        } else {
            Some(self.ensure_key()?.to_string_lossy().into_owned())
        };
        let mut started = Vec::new();
        for (host, binds) in self.agent_hosts() {
            if self
                .agents
                .iter()
                .any(|a| a.host == host && agent_alive(a.pid))
            {
                continue;
            }
            self.agents.retain(|a| a.host != host);
            let mut argv = vec![exe.clone()];
            if let Some(k) = &key {
                argv.extend(["--key-file".to_string(), k.clone()]);
            }
            argv.push("serve".into());
            for b in &binds {
                argv.extend(["--bind".to_string(), b.to_string()]);
            }
            argv.extend(extra_args.iter().cloned());
            let (ns, agent) = self.spawn_agent(&host, &argv, port, binds)?;
            started.push((host, ns, agent.pid));
            self.agents.push(agent);
        }
        self.save()?;
        for (host, ns, pid) in started {
            self.wait_listening(host, &ns, pid, port)?;
        }
        Ok(())
    }

    /// Starts `argv` in `host`'s namespace, in its own session, its output to the
    /// host's agent log and its pid beside it: the namespace and the agent.
    fn spawn_agent(
        &self,
        host: &str,
        argv: &[String],
        port: u16,
        binds: Vec<IpAddr>,
    ) -> Result<(String, Agent), LabError> {
        let ns = self.netns(host).expect("server hosts are lab hosts");
        let shown = in_ns(&ns, &[&["setsid".to_string()][..], argv].concat());
        let log = self.state_dir().join(format!("agent-{host}.log"));
        Runner::new(false).echo(&format!("{} >{} 2>&1 &", shell_line(&shown), log.display()));
        let spawn_err = |source| LabError::Spawn {
            line: shell_line(&shown),
            source,
        };
        let out = File::create(&log).map_err(spawn_err)?;
        let err = out.try_clone().map_err(spawn_err)?;
        let mut cmd = Command::new(&argv[0]);
        netns::enter_on_spawn(&mut cmd, &ns, true);
        let child = cmd
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(spawn_err)?;
        let pid = child.id();
        let _ = std::fs::write(
            self.state_dir().join(format!("agent-{host}.pid")),
            format!("{pid}\n"),
        );
        let agent = Agent {
            host: host.to_string(),
            pid,
            port,
            binds,
            log,
        };
        Ok((ns, agent))
    }

    /// Waits up to [`LISTEN_WAIT`] for `host`'s agent to listen on `port`; one that
    /// exits or does not listen is an error quoting the end of its log.
    fn wait_listening(&self, host: String, ns: &str, pid: u32, port: u16) -> Result<(), LabError> {
        let deadline = Instant::now() + LISTEN_WAIT;
        let log = self.state_dir().join(format!("agent-{host}.log"));
        loop {
            if listening(ns, port) {
                return Ok(());
            }
            // Just started: only whether it still runs (its command line can read
            // empty until it has exec'd).
            let gone = !process_running(pid);
            if gone || Instant::now() >= deadline {
                let what = if gone {
                    "exited"
                } else {
                    "not listening after 5 s"
                };
                let detail = format!(
                    "{what} (pid {pid}, port {port}); log {}: {}",
                    log.display(),
                    log_tail(&log)
                );
                return Err(LabError::Agent { host, detail });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The agent binary: this process, unless MTUPERF_BIN names another (tests run from a
/// test harness binary and point it at the built `mtuperf`).
fn agent_exe() -> Result<String, LabError> {
    let exe = match std::env::var_os("MTUPERF_BIN") {
        Some(p) => std::path::PathBuf::from(p),
        None => std::env::current_exe().map_err(|source| LabError::Spawn {
            line: "current_exe".into(),
            source,
        })?,
    };
    Ok(exe.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::{listens_on, port_from_args};

    #[test]
    fn finds_listening_sockets_in_proc_net_tcp() {
        let v4 = "  sl  local_address rem_address   st tx_queue rx_queue\n   \
                  0: 0100007F:1ECE 00000000:0000 0A 00000000:00000000 00:00000000\n   \
                  1: 0100007F:0016 0100007F:9C40 01 00000000:00000000 00:00000000\n";
        assert!(listens_on(v4, 7886));
        // Port 22 is only an established connection here.
        assert!(!listens_on(v4, 22));
        assert!(!listens_on(v4, 7878));
        let v6 = "  sl  local_address                         remote_address                        st\n   \
                  0: 00000000000000000000000000000000:1EC6 00000000000000000000000000000000:0000 0A\n";
        assert!(listens_on(v6, 7878));
        assert!(!listens_on("", 7878));
    }

    #[test]
    fn finds_the_agent_port_in_extra_args() {
        let s = |v: &[&str]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(port_from_args(&[]), 7878);
        assert_eq!(port_from_args(&s(&["--port", "9000"])), 9000);
        assert_eq!(port_from_args(&s(&["--port=7001", "-v"])), 7001);
        assert_eq!(port_from_args(&s(&["--port", "x"])), 7878);
    }
}
