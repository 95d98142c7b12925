//! `--ssh`: agents started over SSH for one run (the engine's `ssh` module does the
//! work). Here: the flags turned into its config, one line per node on stderr, the
//! mesh's nodes and the one peer of `path`/`rr`/`stream`/`doctor`, and the node's side
//! of `serve --ssh-stdio`.
use std::net::IpAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use mtuperf_engine::agent::{Agent, AgentConfig, LogLevel};
use mtuperf_engine::client::ConnectOptions;
use mtuperf_engine::mesh::MeshConfig;
use mtuperf_engine::ssh::{
    self, remote, Fleet, Outcome, Plan, SshConfig, SshNode, SshObserver, Stopped,
};
use mtuperf_engine::Shutdown;
use mtuperf_report::ssh::failure as words;

use crate::args::ssh::SshArgs;
use crate::connect;
use crate::exit::{self, Failure};
use crate::interrupt;

/// This binary's `--version` line: a node's own mtuperf is run only when it says the same.
pub fn version() -> String {
    format!("mtuperf {}", env!("MTUPERF_VERSION"))
}

/// One line per node on stderr (escaped: the node's words are in them), in the
/// invocation's sink (the fleet calls from its own threads).
struct Lines(std::sync::Arc<crate::out::Sink>);

impl Lines {
    fn here() -> Lines {
        Lines(crate::out::current())
    }

    fn say(&self, line: &str) {
        let _in = self.0.enter();
        errln!("ssh: {}", mtuperf_proto::text::escape_control(line));
    }
}

impl SshObserver for Lines {
    fn outcome(&self, o: &Outcome) {
        match o {
            Outcome::Ready(r) => self.say(&format!(
                "{} ready: agent on {} ({})",
                r.label,
                r.control,
                if r.copied {
                    format!("this mtuperf copied to {}, SHA-256 checked", r.dir)
                } else {
                    "its own mtuperf, same version".into()
                }
            )),
            Outcome::Failed(f) => self.say(&format!("{} failed: {}", f.label, words(&f.failure))),
        }
    }

    fn stopped(&self, all: &[Stopped]) {
        let cleaned = all.iter().filter(|s| s.cleaned).count();
        let mut line = format!(
            "agents stopped; private directories removed on {cleaned} of {} nodes",
            all.len()
        );
        let odd: Vec<String> = all
            .iter()
            .filter(|s| !s.cleaned || s.forced)
            .map(|s| {
                let how = if s.forced {
                    "did not stop in time"
                } else {
                    "removal not confirmed"
                };
                format!("{} ({how}: its agent's lifetime ends it)", s.label)
            })
            .collect();
        if !odd.is_empty() {
            line = format!("{line}; {}", odd.join(", "));
        }
        self.say(&line);
    }
}

fn config(
    a: &SshArgs,
    plan: Plan,
    lifetime: Duration,
    max_sessions: u32,
) -> Result<SshConfig, Failure> {
    Ok(SshConfig {
        command: a.command()?,
        copy: a.copy_policy(),
        timeout: a.ssh_timeout,
        lifetime: a.ssh_lifetime.unwrap_or(lifetime),
        exe: "/proc/self/exe".into(),
        version: version(),
        plan,
        max_sessions,
    })
}

fn parse(node: &str) -> Result<SshNode, Failure> {
    SshNode::parse(node).map_err(|why| {
        Failure::bad_value(
            "NODE",
            node,
            "[NAME=][USER@]HOST[:PORT] (HOST as your ssh reaches it, PORT the SSH port)",
            &why,
        )
    })
}

fn interrupted() -> Failure {
    Failure::new(
        exit::INTERRUPTED,
        anyhow::anyhow!("interrupted while starting the agents over SSH (stopped them)"),
    )
}

/// The started agents of a run; stopped (one line on stderr) when dropped.
pub struct Agents {
    pub fleet: Fleet,
}

impl Drop for Agents {
    fn drop(&mut self) {
        self.fleet.stop(&Lines::here());
    }
}

/// The mesh's nodes into `cfg`: without `--ssh` the keyed agents already running at
/// NODE (HOST[:PORT] or NAME=HOST[:PORT]; a key file is required), with it agents
/// started here over SSH ([`mesh_ssh`]).
pub fn mesh_agents(
    a: &SshArgs,
    nodes: &[String],
    cfg: &mut MeshConfig,
) -> Result<Option<Agents>, Failure> {
    if a.ssh {
        return mesh_ssh(a, nodes, cfg).map(Some);
    }
    if cfg.connect.key.is_none() {
        return Err(Failure::needs(
            "mesh",
            "--key-file",
            "it asks agents to test each other, which only keyed agents do",
            "give the key file every node's agent runs with (or MTUPERF_KEY_FILE); `mtuperf keygen` writes one; or start one-time agents with --ssh",
        ));
    }
    cfg.nodes = nodes
        .iter()
        .map(|s| match s.split_once('=') {
            Some((name, host)) if !name.is_empty() => (Some(name.to_string()), host.to_string()),
            _ => (None, s.clone()),
        })
        .collect();
    Ok(None)
}

/// `mesh --ssh`: starts an agent on every node and fills `cfg`'s nodes and key. At
/// least two nodes must be ready; the others become findings ([`ssh::mesh::add_failed`]).
fn mesh_ssh(a: &SshArgs, nodes: &[String], cfg: &mut MeshConfig) -> Result<Agents, Failure> {
    let parsed = nodes
        .iter()
        .map(|n| parse(n))
        .collect::<Result<Vec<_>, _>>()?;
    let lifetime = ssh::mesh::lifetime(cfg, parsed.len(), cfg.nets.len(), a.ssh_timeout);
    let max_sessions = cfg.per_node.max(4) as u32;
    let c = config(
        a,
        Plan::Mesh {
            nets: cfg.nets.clone(),
            oifcfg: cfg.oifcfg.clone(),
        },
        lifetime,
        max_sessions,
    )?;
    let stop = interrupt::flag();
    let agents = Agents {
        fleet: ssh::start(&parsed, &c, &Lines::here(), &stop),
    };
    if stop.load(Ordering::Relaxed) {
        return Err(interrupted());
    }
    cfg.nodes = ssh::mesh::nodes(&agents.fleet);
    cfg.connect.key = Some(agents.fleet.key.clone());
    if cfg.nodes.len() < 2 {
        let why: Vec<String> = agents
            .fleet
            .failed()
            .map(|f| format!("{}: {}", f.label, words(&f.failure)))
            .collect();
        return Err(Failure::new(
            exit::UNREACHABLE,
            anyhow::anyhow!(
                "only {} of {} nodes started over SSH, a mesh needs 2 ({})",
                cfg.nodes.len(),
                parsed.len(),
                why.join("; ")
            ),
        ));
    }
    Ok(agents)
}

/// Where a one-peer command connects, with which options; with `--ssh`, the agent
/// started for it (kept until the command ends).
pub struct Peer {
    pub target: String,
    pub opts: ConnectOptions,
    /// Kept until the command ends: dropping it stops the agent.
    _agents: Option<Agents>,
}

/// `path`/`rr`/`stream`/`doctor --peer`: without `--ssh`, `target` and the key file as
/// always; with it, `target` is the SSH node, an agent is started there on its address
/// on the network shared with this host (the one holding `bind`, when given), and the
/// command connects to it with the one-time key. `lifetime`: the command's longest run.
pub fn peer(
    g: &crate::global::Global,
    a: &SshArgs,
    target: &str,
    bind: Option<IpAddr>,
    lifetime: Duration,
) -> Result<Peer, Failure> {
    peer_as(g, a, target, bind, false, lifetime)
}

/// [`peer`] for an agent that is only asked for its facts (`doctor --peer`): with
/// several networks shared, the address SSH arrived on.
pub fn asked_peer(
    g: &crate::global::Global,
    a: &SshArgs,
    target: &str,
    lifetime: Duration,
) -> Result<Peer, Failure> {
    peer_as(g, a, target, None, true, lifetime)
}

fn peer_as(
    g: &crate::global::Global,
    a: &SshArgs,
    target: &str,
    bind: Option<IpAddr>,
    asked_only: bool,
    lifetime: Duration,
) -> Result<Peer, Failure> {
    let mut opts = connect::connect_options(g, bind)?;
    if !a.ssh {
        return Ok(Peer {
            target: target.to_string(),
            opts,
            _agents: None,
        });
    }
    let node = parse(target)?;
    let lifetime = lifetime + a.ssh_timeout + ssh::mesh::LIFETIME_MARGIN;
    let plan = Plan::Peer {
        local: bind,
        asked_only,
    };
    let c = config(a, plan, lifetime, 4)?;
    let stop = interrupt::flag();
    let agents = Agents {
        fleet: ssh::start(std::slice::from_ref(&node), &c, &Lines::here(), &stop),
    };
    if stop.load(Ordering::Relaxed) {
        return Err(interrupted());
    }
    if let Some(f) = agents.fleet.failed().next() {
        let code = match f.failure.step {
            ssh::Step::Connect => exit::UNREACHABLE,
            _ => exit::FAILED,
        };
        return Err(Failure::new(
            code,
            anyhow::anyhow!("{}: {}", f.label, words(&f.failure)),
        ));
    }
    let control = agents
        .fleet
        .ready()
        .next()
        .map(|r| r.control.to_string())
        .unwrap_or_default();
    opts.key = Some(agents.fleet.key.clone());
    Ok(Peer {
        target: control,
        opts,
        _agents: Some(agents),
    })
}

/// `serve --ssh-stdio`: hello on stdout, the key and addresses from stdin, bound on one
/// port, ready on stdout; `shutdown` is set at the coordinator's stop, at the end of
/// its channel or when its pings stop.
pub fn node_agent(
    mut config: AgentConfig,
    lifetime: Duration,
    shutdown: &Shutdown,
) -> Result<Agent, Failure> {
    let lines = remote::Lines::spawn(std::io::BufReader::new(std::io::stdin()));
    let mut out = std::io::stdout();
    let setup = remote::handshake(&version(), &lines, &mut out, lifetime)
        .map_err(connect::engine_failure)?;
    config.key = Some(setup.key);
    config.allow = setup.allow;
    config.limits.max_sessions = setup.max_sessions;
    let agent = match remote::bind_one_port(config.clone(), &setup.binds) {
        Ok(a) => a,
        Err(e) => {
            remote::failed(&mut out, &e.to_string());
            return Err(connect::engine_failure(e));
        }
    };
    let port = agent
        .local_addrs()
        .first()
        .map_or(0, std::net::SocketAddr::port);
    remote::ready(&mut out, port).map_err(connect::engine_failure)?;
    let log = config.clone();
    remote::watch(lines, ssh::wire::LEASE, shutdown.clone(), move |why| {
        log.log(
            LogLevel::Info,
            None,
            "ssh",
            format!("stopping: {}", why.describe()),
        );
    });
    Ok(agent)
}

/// `serve --lifetime`: triggers `shutdown` once `lifetime` has passed, then ends the
/// process if the agent has not stopped within a few seconds (a hard limit). Sleeps
/// on the stop until then: a stop that comes first (a signal, the coordinator) ends
/// the thread.
pub fn lifetime(lifetime: Duration, shutdown: Shutdown, config: &AgentConfig) {
    let log = config.clone();
    std::thread::spawn(move || {
        if shutdown.wait_until(std::time::Instant::now() + lifetime) {
            return;
        }
        log.log(
            LogLevel::Info,
            None,
            "lifetime",
            format!(
                "lifetime of {} reached: stopping",
                humantime::format_duration(lifetime)
            ),
        );
        shutdown.trigger();
        std::thread::sleep(Duration::from_secs(5));
        std::process::exit(0);
    });
}
