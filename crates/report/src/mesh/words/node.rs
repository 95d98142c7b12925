//! Findings about one node in words: its agent unreachable (or not started over
//! SSH), silent during the run, a setting apart from the other nodes', or its
//! interconnect NIC absent.

use mtuperf_engine::mesh::{NicAbsence, NodeError, Offload, Setting, Silence, PROBE_WAIT};
use mtuperf_engine::ssh::Step;
use mtuperf_proto::text::escape_control;

use super::{esc, secs, Words};
use crate::ssh;

pub(super) fn unreachable(n: &str, agent: &str, error: &NodeError) -> Words {
    let agent = esc(agent);
    let failure = match error {
        NodeError::Ssh { failure } => failure,
        NodeError::Discovery { error } => {
            let worded = crate::refusal::failed(error);
            let error = esc(&worded);
            return Words {
            summary: format!("node {n}: its agent at {agent} could not be asked: {error}"),
            evidence: "discovery failed; no pair with this node was tested".into(),
                next: format!(
                    "start a keyed agent on {n} (mtuperf serve --key-file ...) and check the orchestrator can reach {agent}"
                ),
            };
        }
    };
    let ssh = agent.strip_prefix("ssh ").unwrap_or(&agent);
    let next = match failure.step {
        Step::Connect => format!(
            "check that `ssh -o BatchMode=yes {ssh} true` works from this host without a prompt (sshd running, your key in its authorized_keys, its host key in your known_hosts), with the same --ssh-command"
        ),
        Step::Copy => format!(
            "install this mtuperf version on {ssh} (on its PATH), or check that a private temporary directory there allows programs to run"
        ),
        Step::Start => format!("run `mtuperf serve` on {ssh} by hand to see why the agent does not start"),
        Step::Plan => "choose the interconnect with --net (every node needs an address on a network shared with another node)".into(),
        Step::Interrupted => "run again".into(),
    };
    let name = ssh::step_name(failure.step);
    Words {
        summary: format!("node {n}: {}", ssh::failure(failure)),
        evidence: format!(
            "its agent could not be started over SSH (step: {name}); no pair with this node was tested"
        ),
        next,
    }
}

pub(super) fn silent(
    n: &str,
    silence: Silence,
    at_ms: u64,
    waited_ms: u64,
    not_measured: usize,
) -> Words {
    let tests = if not_measured == 1 { "test" } else { "tests" };
    match silence {
        Silence::NoAnswer => Words {
            summary: format!(
                "node {n} went silent {} into the run: its agent stopped answering",
                secs(at_ms)
            ),
            evidence: format!(
                "no welcome to a new session within {} s, twice ({} waited); {not_measured} pair {tests} with it not measured",
                PROBE_WAIT.as_secs(),
                secs(waited_ms)
            ),
            next: format!(
                "check {n}'s agent (mtuperf serve: running, not stopped?) and its host, then run the mesh again"
            ),
        },
        Silence::NoResult => Words {
            summary: format!(
                "node {n}'s agent answered but returned no result for {} ({} into the run)",
                secs(waited_ms),
                secs(at_ms)
            ),
            evidence: format!(
                "its test ran past --pair-timeout; {not_measured} more pair {tests} asked of it not measured"
            ),
            next: format!(
                "check {n}'s agent log (mtuperf serve) and its host's load, then run the mesh again"
            ),
        },
    }
}

pub(super) fn setting_words(
    n: &str,
    on: &str,
    s: &Setting,
    value: &str,
    norm: &str,
    holders: usize,
    of: usize,
) -> Words {
    let (what, next) = match s {
        Setting::NicMtu { iface } => (
            format!("the NIC MTU on {on}"),
            format!("on {n}: ip link set dev {} mtu {norm}", esc(iface)),
        ),
        Setting::Offload { iface, offload } => {
            let name = match offload {
                Offload::Tso => "tso",
                Offload::Gso => "gso",
                Offload::Gro => "gro",
                Offload::Lro => "lro",
            };
            (
                format!("{name} offload on {on}"),
                format!("on {n}: ethtool -K {} {name} {norm}", esc(iface)),
            )
        }
        Setting::RpFilter { iface } => (
            format!("rp_filter on {on}"),
            format!(
                "on {n}: sysctl -w net.ipv4.conf.{}.rp_filter={norm}",
                esc(iface)
            ),
        ),
        Setting::Sysctl { key } => (
            format!("sysctl {}", esc(key)),
            format!(
                "on {n}: sysctl -w {}=\"{norm}\" (and in /etc/sysctl.d)",
                esc(key)
            ),
        ),
    };
    Words {
        summary: format!("node {n}: {what} is {value}, the others {norm}"),
        evidence: format!("{holders} of {of} nodes have {norm}"),
        next,
    }
}

/// `--oifcfg`: node `n` has no up `iface` in the interconnect subnet.
pub(super) fn absent(n: &str, iface: &str, subnet: &str, why: NicAbsence) -> Words {
    let iface = escape_control(iface);
    let (state, next) = match why {
        NicAbsence::Down => (
            format!("its NIC {iface} is down"),
            format!("ip link set dev {iface} up on {n} (and check its cable and switch port), or remove the subnet with oifcfg delif if it is retired"),
        ),
        NicAbsence::NoAddress => (
            format!("its NIC {iface} has no address in {subnet}"),
            format!("give {n}'s {iface} its address in {subnet}, as on the other nodes"),
        ),
        NicAbsence::Missing => (
            format!("it has no interface {iface}"),
            format!("oifcfg's global entries need the same interface name on every node: rename {n}'s interconnect NIC to {iface}, or set a per-node entry (oifcfg setif -node)"),
        ),
    };
    Words {
        summary: format!(
            "node {n}: {state}: the cluster_interconnect subnet {subnet} is unusable cluster-wide (Oracle drops a subnet missing on any node)"
        ),
        evidence: format!(
            "oifcfg getif lists {iface} {subnet} as cluster_interconnect; {n}'s discovery has no up {iface} with an address in it"
        ),
        next,
    }
}
