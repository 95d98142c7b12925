//! `Lab::sshd`: an OpenSSH server (Debian's openssh-server, `/usr/sbin/sshd`) in every
//! node of a cluster lab, with host and user keys made for this lab, so that
//! `mtuperf mesh --ssh` runs against it as against a real cluster:
//!
//! ```text
//! mtuperf lab exec n1 -- mtuperf mesh --ssh --ssh-command "ssh -F <state>/ssh/config" n1 n2 ...
//! ```
//!
//! Everything lives in `<state dir>/ssh/` (removed by `lab down` with the rest):
//! `host_ed25519` (one host key for every node), `id_ed25519` (root's client key, in
//! `authorized_keys`), `known_hosts`, `config` (for `ssh -F`: `Host nI` at its net1
//! address, that key, strict host key checking) and per node `sshd-nI.conf`,
//! `sshd-nI.log` and `tmp-nI`: the node's `$TMPDIR` (sshd's `SetEnv`), so a test sees
//! exactly what a run left in it. The lab's nodes share one filesystem: each node's
//! sessions get a temporary directory of their own this way.
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mtuperf_sys::netns;

use crate::cluster::{topo::v4, Cluster};
use crate::cmd::{in_ns, shell_line, Runner};
use crate::down::process_running;
use crate::env::check_privilege;
use crate::error::LabError;
use crate::serve::listening;
use crate::state::Lab;

/// Where Debian's openssh-server installs the server.
pub const SSHD: &str = "/usr/sbin/sshd";
/// How long one sshd may take to listen.
const LISTEN_WAIT: Duration = Duration::from_secs(5);

/// What `lab sshd` started: the config to pass to `ssh -F`, each node's sshd.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SshdReport {
    pub config: PathBuf,
    pub nodes: Vec<SshdNode>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SshdNode {
    pub node: String,
    pub addr: std::net::IpAddr,
    pub pid: u32,
    /// The node's `$TMPDIR` for SSH sessions.
    pub tmp: PathBuf,
}

impl SshdReport {
    /// One line per node, then the config and the mesh command that uses it.
    pub fn render_text(&self, lab: &str) -> String {
        let mut s = String::new();
        for n in &self.nodes {
            let _ = writeln!(
                s,
                "{:<6} sshd pid {:<8} listening on {}:22 (sessions' TMPDIR {})",
                n.node,
                n.pid,
                n.addr,
                n.tmp.display()
            );
        }
        let nodes: Vec<&str> = self.nodes.iter().map(|n| n.node.as_str()).collect();
        let cfg = self.config.display();
        let _ = writeln!(s, "ssh config {cfg}");
        let _ = writeln!(
            s,
            "check the cluster from one node: mtuperf lab exec --name {lab} {} -- mtuperf mesh --ssh --ssh-command \"ssh -F {cfg}\" {}",
            nodes.first().copied().unwrap_or("n1"),
            nodes.join(" ")
        );
        s
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> LabError + '_ {
    move |source| LabError::State {
        path: path.to_path_buf(),
        source,
    }
}

fn keygen(run: Runner, path: &Path, comment: &str) -> Result<(), LabError> {
    if path.is_file() {
        return Ok(());
    }
    let p = path.to_string_lossy().into_owned();
    run.run(&[
        "ssh-keygen",
        "-q",
        "-t",
        "ed25519",
        "-N",
        "",
        "-C",
        comment,
        "-f",
        &p,
    ])
    .map(|_| ())
    .map_err(|e| match e {
        LabError::Spawn { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            LabError::MissingTool {
                tool: "ssh-keygen",
                package: "openssh-client",
            }
        }
        e => e,
    })
}

fn sshd_config(dir: &Path, node: &str) -> String {
    let d = dir.display();
    format!(
        "# mtuperf lab: sshd of node {node}\n\
         ListenAddress 0.0.0.0\nPort 22\nHostKey {d}/host_ed25519\nPidFile {d}/sshd-{node}.pid\n\
         AuthorizedKeysFile {d}/authorized_keys\nPermitRootLogin prohibit-password\n\
         PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n\
         UseDNS no\nPrintMotd no\nSetEnv TMPDIR={d}/tmp-{node}\nMaxStartups 64:30:128\n"
    )
}

fn client_config(dir: &Path, c: &Cluster) -> String {
    let d = dir.display();
    let mut s = format!("# mtuperf lab: ssh -F {d}/config NODE reaches a cluster node over net1\n");
    for i in 1..=c.nodes {
        let _ = write!(s, "Host {}\n  HostName {}\n", Cluster::node(i), v4(1, i));
    }
    s + &format!(
        "Host *\n  User root\n  IdentityFile {d}/id_ed25519\n  IdentitiesOnly yes\n  \
         UserKnownHostsFile {d}/known_hosts\n  GlobalKnownHostsFile /dev/null\n  \
         StrictHostKeyChecking yes\n  LogLevel ERROR\n"
    )
}

impl Lab {
    /// The directory of the lab's SSH files.
    pub fn ssh_dir(&self) -> PathBuf {
        self.state_dir().join("ssh")
    }

    /// `ssh -F` config of the cluster's nodes, once `sshd` has run.
    pub fn ssh_config(&self) -> Option<PathBuf> {
        let p = self.ssh_dir().join("config");
        p.is_file().then_some(p)
    }

    /// Starts sshd in every node of a cluster lab that has none listening, and writes
    /// the keys and the client config (see the module).
    pub fn sshd(&self) -> Result<SshdReport, LabError> {
        check_privilege("mtuperf lab sshd")?;
        let Some(c) = &self.cluster else {
            return Err(LabError::Invalid {
                what: "lab".into(),
                value: self.name.clone(),
                allowed: "a cluster lab (lab up --scenario cluster)".into(),
            });
        };
        if !Path::new(SSHD).is_file() {
            return Err(LabError::MissingTool {
                tool: "sshd",
                package: "openssh-server",
            });
        }
        let run = Runner::new(false);
        let dir = self.ssh_dir();
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
        keygen(run, &dir.join("host_ed25519"), "mtuperf-lab-host")?;
        keygen(run, &dir.join("id_ed25519"), "mtuperf-lab-user")?;
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).map_err(io(&dir));
        let host_pub = read("host_ed25519.pub")?;
        std::fs::write(dir.join("authorized_keys"), read("id_ed25519.pub")?).map_err(io(&dir))?;
        let known: String = (1..=c.nodes)
            .map(|i| format!("{},{} {}", Cluster::node(i), v4(1, i), host_pub.trim()) + "\n")
            .collect();
        std::fs::write(dir.join("known_hosts"), known).map_err(io(&dir))?;
        std::fs::write(dir.join("config"), client_config(&dir, c)).map_err(io(&dir))?;
        // sshd's privilege separation directory (Debian's unit creates it at boot).
        std::fs::create_dir_all("/run/sshd").map_err(io(Path::new("/run/sshd")))?;
        let nodes = (1..=c.nodes)
            .map(|i| self.start_sshd(run, &dir, i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SshdReport {
            config: dir.join("config"),
            nodes,
        })
    }

    fn start_sshd(&self, run: Runner, dir: &Path, i: u8) -> Result<SshdNode, LabError> {
        let node = Cluster::node(i);
        let ns = self.netns(&node).ok_or_else(|| LabError::Invalid {
            what: "node".into(),
            value: node.clone(),
            allowed: self.host_names().join(", "),
        })?;
        let tmp = dir.join(format!("tmp-{node}"));
        std::fs::create_dir_all(&tmp).map_err(io(&tmp))?;
        let conf = dir.join(format!("sshd-{node}.conf"));
        std::fs::write(&conf, sshd_config(dir, &node)).map_err(io(&conf))?;
        let pidfile = dir.join(format!("sshd-{node}.pid"));
        let running = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
            .filter(|&p| process_running(p) && listening(&ns, 22));
        let addr = v4(1, i).into();
        if let Some(pid) = running {
            return Ok(SshdNode {
                node,
                addr,
                pid,
                tmp,
            });
        }
        let argv = [
            SSHD.to_string(),
            "-D".into(),
            "-e".into(),
            "-f".into(),
            conf.to_string_lossy().into_owned(),
        ];
        let log = dir.join(format!("sshd-{node}.log"));
        let shown = in_ns(&ns, &argv);
        run.echo(&format!("{} >{} 2>&1 &", shell_line(&shown), log.display()));
        let spawn_err = |source| LabError::Spawn {
            line: shell_line(&shown),
            source,
        };
        let out = File::create(&log).map_err(spawn_err)?;
        let err = out.try_clone().map_err(spawn_err)?;
        let mut cmd = Command::new(SSHD);
        netns::enter_on_spawn(&mut cmd, &ns, true);
        let child = cmd
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(spawn_err)?;
        let pid = child.id();
        let deadline = Instant::now() + LISTEN_WAIT;
        while !listening(&ns, 22) {
            if !process_running(pid) || Instant::now() >= deadline {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(LabError::Agent {
                    host: node,
                    detail: format!("sshd (pid {pid}) not listening on port 22: {}", text.trim()),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(SshdNode {
            node,
            addr,
            pid,
            tmp,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_name_every_node_and_the_lab_files() {
        let c = Cluster::new(3, 2, Vec::new()).unwrap();
        let dir = Path::new("/run/mtuperf/lab/x/ssh");
        let client = client_config(dir, &c);
        assert!(
            client.contains("Host n3\n  HostName 198.19.1.3\n"),
            "{client}"
        );
        assert!(client.contains("UserKnownHostsFile /run/mtuperf/lab/x/ssh/known_hosts"));
        assert!(client.contains("StrictHostKeyChecking yes"));
        let server = sshd_config(dir, "n2");
        assert!(
            server.contains("SetEnv TMPDIR=/run/mtuperf/lab/x/ssh/tmp-n2\n"),
            "{server}"
        );
        assert!(server.contains("PasswordAuthentication no"));
    }
}
