//! `mtuperf demo --cluster`'s orchestration: a 6-node, 2-network cluster lab with two
//! injected faults (n3's NIC on net1 at 1500; switch sw2's port toward n5 at 1500),
//! keyed agents on every node, a `mtuperf mesh` run from inside node n1 (lab
//! addresses are only reachable from inside the lab) with path tests and the RAC
//! answer (Cache Fusion's 8 KiB UDP blocks on every pair, the nodes' kernel counters,
//! the cluvfy-style checks), and the lab removed however the demo ends. What the
//! user sees comes through [`DemoObserver`].
use std::io::Read;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use mtuperf_engine::diagnosis::FaultClass;
use mtuperf_engine::mesh::diagnose::MeshFinding;
use mtuperf_lab::{cluster, Lab, LabOptions};
use mtuperf_report::mesh::Document;

use super::orchestrate::{mtuperf_argv, DemoLab, DemoObserver};
use crate::exit::{self, Failure};
use crate::global::Global;

/// Nodes and networks of the demo cluster.
const NODES: u32 = 6;
const NETS: u32 = 2;
/// The injected faults, as `lab up --fault` takes them, with what the mesh should
/// find for each: (fault, class, node, network number).
const FAULTS: [(&str, FaultClass, &str, u8); 2] = [
    ("nic-mtu=n3:1:1500", FaultClass::NicMtu, "n3", 1),
    ("port-mtu=n5:2:1500", FaultClass::SwitchPort, "n5", 2),
];
/// The mesh's own deadline per pair, and the demo's for the whole mesh: a stall
/// guard above the mesh's own planned deadline (every pair at its whole deadline:
/// 6 waves of 30 s plus discovery), which it never passes; it takes well under a
/// minute.
const PAIR_TIMEOUT: &str = "30s";
/// Each pair's block test (Cache Fusion's 8 KiB UDP blocks), and the block p99
/// limit of its check: the lab's nodes share this machine's CPUs (and other work on
/// it), where 1 ms, a real private network's limit, says more of the machine than
/// of the faults.
const RR_TIME: &str = "200ms";
pub const MAX_BLOCK_P99: &str = "50ms";
const MESH_DEADLINE: Duration = Duration::from_mins(5);
/// After Ctrl-C, how long the mesh (which got the terminal's SIGINT too) has to stop
/// on its own before the demo forwards one.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// What the cluster demo measured.
pub struct ClusterDemo {
    pub doc: Document,
    /// The mesh's path faults are exactly the two injected faults (kind, node,
    /// network), and its other findings only what they cause: the block checks
    /// (lost blocks, p99) and kernel counters.
    pub found_injected: bool,
    /// The block test's lost blocks: (lost, pairs), and whether every pair that lost
    /// blocks goes through an injected fault's node on its network.
    pub lost: (u64, usize),
    pub lost_explained: bool,
}

/// Builds the cluster lab, runs the mesh in it and removes the lab. `stop` is the
/// demo's Ctrl-C flag, set up before the lab is built so the lab's guard runs.
pub fn cluster(
    g: &Global,
    stop: &AtomicBool,
    obs: &mut dyn DemoObserver,
) -> Result<ClusterDemo, Failure> {
    let lab = build_lab(obs)?;
    let argv = mesh_argv(g, &lab.0)?;
    obs.say(&format!(
        "demo: running `mtuperf mesh --tests path,rr` (the path both ways, then Cache Fusion's 8 KiB UDP blocks for 128 B requests; every ordered pair, both networks) from inside n1 against all {NODES} nodes with the lab key",
    ));
    if stop.load(Ordering::Relaxed) {
        return Err(Failure::new(
            exit::INTERRUPTED,
            anyhow!("interrupted before the mesh ran"),
        ));
    }
    let (status, out) = run_mesh(&lab.0, &argv, stop)?;
    let doc = mesh_document(&out, status, stop)?;
    let found_injected = found_exactly_the_faults(&doc);
    let (lost, lost_explained) = lost_through_the_faults(&doc);
    Ok(ClusterDemo {
        doc,
        found_injected,
        lost,
        lost_explained,
    })
}

/// The cluster lab with its faults and a keyed agent on every node; removed when the
/// returned guard drops.
fn build_lab(obs: &mut dyn DemoObserver) -> Result<DemoLab, Failure> {
    let faults: Vec<String> = FAULTS.iter().map(|f| f.0.to_string()).collect();
    let c = cluster::parse(NODES, NETS, &faults).map_err(|e| Failure::new(exit::FAILED, e))?;
    let opts = LabOptions::cluster(&format!("democ{}", std::process::id()), c);
    obs.say(&format!(
        "demo: building cluster lab {:?}: {NODES} nodes (n1..n{NODES}), {NETS} networks (one bridge each), MTU 9000; faults: {}",
        opts.name,
        faults.join(", ")
    ));
    let mut lab = DemoLab(Lab::up(&opts).map_err(|e| Failure::new(exit::ENVIRONMENT, e))?);
    obs.say("demo: starting a keyed agent on every node (lab serve)");
    lab.0
        .serve(&[])
        .map_err(|e| Failure::new(exit::FAILED, e))?;
    Ok(lab)
}

/// The mesh's command line: every network, each node reached on net1, path and block
/// tests with the demo's deadlines and p99 limit, JSON out.
fn mesh_argv(g: &Global, lab: &Lab) -> Result<Vec<String>, Failure> {
    let status = lab
        .cluster_status()
        .ok_or_else(|| anyhow!("lab {:?} has no cluster", lab.name))?;
    let mut argv = mtuperf_argv(g)?;
    argv.extend(["mesh".into(), "--json".into()]);
    argv.extend(["--pair-timeout".into(), PAIR_TIMEOUT.into()]);
    argv.extend([
        "--tests".into(),
        "path,rr".into(),
        "--time".into(),
        RR_TIME.into(),
    ]);
    argv.extend(["--max-block-p99".into(), MAX_BLOCK_P99.into()]);
    for n in &status.networks {
        argv.extend(["--net".into(), n.v4_subnet.clone()]);
    }
    // Every agent is reached on net1 (no silent fault there, so the control
    // connections are never black-holed); the mesh discovers the other networks.
    for m in &status.members {
        let a = m.addresses.first().context("a node without addresses")?;
        argv.push(format!("{}={}", m.name, a.v4));
    }
    Ok(argv)
}

/// Runs the mesh inside node n1 until it exits (or [`MESH_DEADLINE`], when it is
/// killed): its exit status and standard output. After Ctrl-C the mesh has
/// [`STOP_GRACE`] to stop on its own before it is sent one SIGINT.
fn run_mesh(
    lab: &Lab,
    argv: &[String],
    stop: &AtomicBool,
) -> Result<(ExitStatus, Vec<u8>), Failure> {
    let mut child = lab
        .exec_command("n1", argv)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting mesh in the lab's node n1")?;
    let mut stdout = child.stdout.take().context("mesh stdout")?;
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let t0 = Instant::now();
    let mut stopped_at: Option<Instant> = None;
    let mut forwarded = false;
    let status = loop {
        if let Some(s) = child.try_wait().context("waiting for mesh")? {
            break s;
        }
        if t0.elapsed() > MESH_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Failure::new(
                exit::FAILED,
                anyhow!(
                    "mesh in the lab did not finish within {}",
                    humantime::format_duration(MESH_DEADLINE)
                ),
            ));
        }
        if stop.load(Ordering::Relaxed) {
            let at = *stopped_at.get_or_insert_with(Instant::now);
            // The mesh saw the terminal's SIGINT unless only the demo was signalled:
            // one SIGINT then (a second would end it before it prints).
            if !forwarded && at.elapsed() > STOP_GRACE {
                forwarded = true;
                if let Ok(pid) = i32::try_from(child.id()) {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGINT,
                    );
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok((status, reader.join().unwrap_or_default()))
}

/// The mesh's document from its output. A mesh that ran prints its document (exit 0
/// or 1, 130 when interrupted); an error prints an error document (mtuperf.error/1),
/// whose message is on stderr.
fn mesh_document(out: &[u8], status: ExitStatus, stop: &AtomicBool) -> Result<Document, Failure> {
    match serde_json::from_slice::<Document>(out) {
        Ok(d) => Ok(d),
        Err(_) if stop.load(Ordering::Relaxed) => Err(Failure::new(
            exit::INTERRUPTED,
            anyhow!("mesh interrupted before it printed a result"),
        )),
        Err(e) => Err(Failure::new(
            exit::FAILED,
            anyhow!("mesh in the lab failed ({status}): {e}"),
        )),
    }
}

/// Network `net`'s subnet in the lab: 198.19.K.0/24.
fn subnet(net: u8) -> String {
    format!("198.19.{net}.0/24")
}

/// The lost blocks over every pair, and whether each pair that lost some has an
/// injected fault's node at one end, on that fault's network.
fn lost_through_the_faults(doc: &Document) -> ((u64, usize), bool) {
    let r = &doc.result;
    let lossy: Vec<_> = r
        .pairs
        .iter()
        .filter(|p| p.rr.as_ref().is_some_and(|x| x.counts.lost > 0))
        .collect();
    let lost = lossy
        .iter()
        .filter_map(|p| p.rr.as_ref())
        .map(|x| x.counts.lost)
        .sum();
    let explained = lossy.iter().all(|p| {
        let cidr = r.networks.get(p.net).map(|n| n.cidr.to_string());
        FAULTS.iter().any(|&(_, _, node, net)| {
            cidr.as_deref() == Some(subnet(net).as_str())
                && (doc.node(p.from) == node || doc.node(p.to) == node)
        })
    });
    ((lost, lossy.len()), explained)
}

/// Whether the path faults found are exactly one per injected fault, of its kind,
/// naming its node and network (networks by their subnet, 198.19.K.0/24), and every
/// other finding is what they cause in the block test (a block check) or the kernel.
fn found_exactly_the_faults(doc: &Document) -> bool {
    use mtuperf_engine::mesh::FindingKind;
    let r = &doc.result;
    let (faults, others): (Vec<&MeshFinding>, Vec<&MeshFinding>) = r
        .findings
        .iter()
        .partition(|f| f.kind() == FindingKind::Fault);
    if !others
        .iter()
        .all(|f| matches!(f.kind(), FindingKind::CheckFailed | FindingKind::Kernel))
    {
        return false;
    }
    let names = |f: &MeshFinding, class: FaultClass, node: &str, net: u8| {
        f.diagnosis()
            .map(mtuperf_engine::diagnosis::Diagnosis::class)
            == Some(class)
            && f.node.map(|n| doc.node(n)) == Some(node)
            && f.net
                .and_then(|k| r.networks.get(k))
                .map(|n| n.cidr.to_string())
                == Some(subnet(net))
    };
    faults.len() == FAULTS.len()
        && FAULTS.iter().all(|&(_, kind, node, net)| {
            faults.iter().filter(|f| names(f, kind, node, net)).count() == 1
        })
}

/// "n3's NIC on net1, the switch port in front of n5 on net2".
pub fn faults_text() -> String {
    FAULTS
        .iter()
        .map(|&(_, kind, node, net)| match kind {
            FaultClass::NicMtu => format!("{node}'s NIC on net{net} at 1500"),
            _ => format!("the switch port in front of {node} on net{net} at 1500"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}
