//! `--ssh` in words: why a node's agent could not be started, from the engine's typed
//! failure (the step and its cause), with the flags to change. One function,
//! [`failure`], words every failure, for the CLI's `ssh: n3 failed: ...` line, its
//! errors and the mesh's `unreachable` finding alike.
//!
//! The node's own words (ssh's stderr, the script's, the agent's) were escaped by the
//! engine when it kept them; a sentence that still holds a control character (a
//! document written by hand) is escaped whole here.

use std::borrow::Cow;

use mtuperf_engine::ssh::script::ScriptExit;
use mtuperf_engine::ssh::{Cause, Failure, Step};
use mtuperf_proto::text::escape_control;

/// The step's name, as the failure's line starts: "ssh", "copy", "agent", ...
pub fn step_name(s: Step) -> &'static str {
    match s {
        Step::Connect => "ssh",
        Step::Copy => "copy",
        Step::Start => "agent",
        Step::Plan => "addresses",
        Step::Interrupted => "interrupted",
    }
}

/// "ssh: connect to host 198.19.1.3 port 22: Connection refused", "copy: ...": the
/// step, then its cause (ssh's own words, which start with "ssh: " already, once).
pub fn failure(f: &Failure) -> String {
    let prefix = format!("{}: ", step_name(f.step));
    let detail = cause(f.step, &f.cause);
    let line = if detail.starts_with(&prefix) {
        detail
    } else {
        format!("{prefix}{detail}")
    };
    safe(line)
}

/// `s`, escaped whole when it holds a control character (the engine's own escaped
/// evidence is left as it is: escaping it again would double its backslashes).
fn safe(s: String) -> String {
    if s.chars().any(char::is_control) {
        escape_control(&s).into_owned()
    } else {
        s
    }
}

/// What the script's exit status means.
fn script_exit(e: ScriptExit) -> &'static str {
    match e {
        ScriptExit::NoDir => "no private temporary directory",
        ScriptExit::NoOrder => "the coordinator's order did not arrive",
        ScriptExit::CopyFailed => "the copy of mtuperf failed",
        ScriptExit::Checksum => "the copied mtuperf's SHA-256 did not match",
        ScriptExit::NotRunnable => "mtuperf could not be run on the node",
    }
}

/// The cause in words, with the flag that changes it.
fn cause(step: Step, c: &Cause) -> String {
    match c {
        Cause::Said { text } => text.clone(),
        Cause::NoSsh { program, error } => format!("cannot run {program:?}: {error}"),
        Cause::Write { error } => format!("writing to ssh: {error}"),
        Cause::Stopped => "stopped before the node was ready".into(),
        Cause::Deadline { secs, said } => match said {
            Some(said) => format!("no answer within {secs} s (last said: {said})"),
            None => format!("no answer within {secs} s"),
        },
        Cause::Script { exit, said } => match said {
            Some(said) => format!("{}: {said}", script_exit(*exit)),
            None => script_exit(*exit).into(),
        },
        Cause::Ended { status: Some(s) } => format!("the connection ended (exit status {s})"),
        Cause::Ended { status: None } => "the connection ended".into(),
        Cause::NotOnPath { version, found } => {
            let found: Cow<str> = found
                .as_deref()
                .map_or(Cow::Borrowed("none"), |v| format!("\"{v}\"").into());
            format!("no {version} on the node's PATH (found: {found}) and --ssh-copy never")
        }
        Cause::Platform {
            os,
            arch,
            ours,
            version,
        } => format!(
            "the node is {os} {arch} and this mtuperf is built for Linux {ours}: install mtuperf ({version}) on it, or run from a node of its kind"
        ),
        Cause::Unreadable { path, error } => format!("reading {path}: {error}"),
        Cause::Changed { path, sent, size } => {
            format!("{path} changed while it was copied ({sent} of {size} bytes)")
        }
        Cause::Panicked if step == Step::Connect => "bootstrap thread panicked".into(),
        Cause::Panicked => "start thread panicked".into(),
        Cause::NoOifcfgInterconnect => "no address in a cluster_interconnect subnet of --oifcfg (on the interface it names) shared with another node".into(),
        Cause::NoSharedNetwork { nets } if nets.is_empty() => {
            "no address on a network shared with another node".into()
        }
        Cause::NoSharedNetwork { nets } => format!(
            "no address on a network inside --net {} shared with another node",
            list(nets.iter().map(ToString::to_string))
        ),
        Cause::NotOnBindNetwork { node, bind } => {
            format!("{node} has no address on the network of --bind {bind}")
        }
        Cause::NoPeerNetwork { node } => format!(
            "{node} shares no network with this host and SSH_CONNECTION is unset there"
        ),
        Cause::ManyNetworks { node, networks } => format!(
            "{node} shares {} networks with this host ({}): choose one with --bind (this host's address on it)",
            networks.len(),
            list(networks.iter().map(|n| format!("{} ({})", n.cidr, n.addr)))
        ),
        Cause::NotGreeted => "not reached".into(),
    }
}

fn list(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use mtuperf_engine::ssh::failure::SharedNet;

    use super::*;

    fn f(step: Step, cause: Cause) -> Failure {
        Failure::new(step, cause)
    }

    /// Every cause worded: (failure, the whole line).
    fn table() -> Vec<(Failure, &'static str)> {
        let net = |cidr: &str, addr: &str| SharedNet {
            cidr: cidr.parse().unwrap(),
            addr: addr.parse().unwrap(),
        };
        vec![
            (
                f(Step::Connect, Cause::said("ssh: connect to host 198.19.1.3 port 22: Connection refused")),
                "ssh: connect to host 198.19.1.3 port 22: Connection refused",
            ),
            (
                f(Step::Connect, Cause::said("root@198.19.1.3: Permission denied (publickey).")),
                "ssh: root@198.19.1.3: Permission denied (publickey).",
            ),
            (
                f(Step::Start, Cause::said("binding 192.168.1.2:0: Address not available")),
                "agent: binding 192.168.1.2:0: Address not available",
            ),
            (
                f(Step::Connect, Cause::NoSsh { program: "ssh".into(), error: "No such file or directory (os error 2)".into() }),
                "ssh: cannot run \"ssh\": No such file or directory (os error 2)",
            ),
            (
                f(Step::Start, Cause::Write { error: "Broken pipe (os error 32)".into() }),
                "agent: writing to ssh: Broken pipe (os error 32)",
            ),
            (
                Failure::stopped(),
                "interrupted: stopped before the node was ready",
            ),
            (
                f(Step::Connect, Cause::Deadline { secs: 30, said: None }),
                "ssh: no answer within 30 s",
            ),
            (
                f(Step::Copy, Cause::Deadline { secs: 30, said: Some("still copying".into()) }),
                "copy: no answer within 30 s (last said: still copying)",
            ),
            (
                f(Step::Copy, Cause::Script { exit: ScriptExit::Checksum, said: Some("checksum mismatch: x".into()) }),
                "copy: the copied mtuperf's SHA-256 did not match: checksum mismatch: x",
            ),
            (
                f(Step::Connect, Cause::Script { exit: ScriptExit::NoDir, said: None }),
                "ssh: no private temporary directory",
            ),
            (
                f(Step::Connect, Cause::Script { exit: ScriptExit::NoOrder, said: None }),
                "ssh: the coordinator's order did not arrive",
            ),
            (
                f(Step::Copy, Cause::Script { exit: ScriptExit::CopyFailed, said: Some("copy failed".into()) }),
                "copy: the copy of mtuperf failed: copy failed",
            ),
            (
                f(Step::Start, Cause::Script { exit: ScriptExit::NotRunnable, said: None }),
                "agent: mtuperf could not be run on the node",
            ),
            (
                f(Step::Start, Cause::Ended { status: Some(1) }),
                "agent: the connection ended (exit status 1)",
            ),
            (
                f(Step::Start, Cause::Ended { status: None }),
                "agent: the connection ended",
            ),
            (
                f(Step::Copy, Cause::NotOnPath { version: "mtuperf 0.9.0".into(), found: Some("mtuperf 0.8.0".into()) }),
                "copy: no mtuperf 0.9.0 on the node's PATH (found: \"mtuperf 0.8.0\") and --ssh-copy never",
            ),
            (
                f(Step::Copy, Cause::NotOnPath { version: "mtuperf 0.9.0".into(), found: None }),
                "copy: no mtuperf 0.9.0 on the node's PATH (found: none) and --ssh-copy never",
            ),
            (
                f(Step::Copy, Cause::Platform { os: "Linux".into(), arch: "aarch64".into(), ours: "x86_64".into(), version: "mtuperf 0.9.0".into() }),
                "copy: the node is Linux aarch64 and this mtuperf is built for Linux x86_64: install mtuperf (mtuperf 0.9.0) on it, or run from a node of its kind",
            ),
            (
                f(Step::Copy, Cause::Unreadable { path: "/proc/self/exe".into(), error: "Permission denied (os error 13)".into() }),
                "copy: reading /proc/self/exe: Permission denied (os error 13)",
            ),
            (
                f(Step::Copy, Cause::Changed { path: "/proc/self/exe".into(), sent: 10, size: 20 }),
                "copy: /proc/self/exe changed while it was copied (10 of 20 bytes)",
            ),
            (
                f(Step::Connect, Cause::Panicked),
                "ssh: bootstrap thread panicked",
            ),
            (
                f(Step::Start, Cause::Panicked),
                "agent: start thread panicked",
            ),
            (
                f(Step::Plan, Cause::NoOifcfgInterconnect),
                "addresses: no address in a cluster_interconnect subnet of --oifcfg (on the interface it names) shared with another node",
            ),
            (
                f(Step::Plan, Cause::NoSharedNetwork { nets: Vec::new() }),
                "addresses: no address on a network shared with another node",
            ),
            (
                f(Step::Plan, Cause::NoSharedNetwork { nets: vec!["192.168.0.0/16".parse().unwrap(), "10.1.0.0/24".parse().unwrap()] }),
                "addresses: no address on a network inside --net 192.168.0.0/16, 10.1.0.0/24 shared with another node",
            ),
            (
                f(Step::Plan, Cause::NotOnBindNetwork { node: "n2".into(), bind: "172.16.0.1".parse().unwrap() }),
                "addresses: n2 has no address on the network of --bind 172.16.0.1",
            ),
            (
                f(Step::Plan, Cause::NoPeerNetwork { node: "n2".into() }),
                "addresses: n2 shares no network with this host and SSH_CONNECTION is unset there",
            ),
            (
                f(Step::Plan, Cause::ManyNetworks { node: "n2".into(), networks: vec![net("192.168.1.0/24", "192.168.1.2"), net("192.168.2.0/24", "192.168.2.2")] }),
                "addresses: n2 shares 2 networks with this host (192.168.1.0/24 (192.168.1.2), 192.168.2.0/24 (192.168.2.2)): choose one with --bind (this host's address on it)",
            ),
            (
                f(Step::Plan, Cause::NotGreeted),
                "addresses: not reached",
            ),
        ]
    }

    #[test]
    fn every_cause_is_worded_with_its_step_and_flag() {
        for (failure, want) in table() {
            assert_eq!(super::failure(&failure), want, "{failure:?}");
        }
    }

    #[test]
    fn the_table_covers_every_cause_kind() {
        let mut kinds: Vec<String> = table()
            .iter()
            .map(|(f, _)| {
                serde_json::to_value(&f.cause).unwrap()["kind"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        kinds.sort();
        kinds.dedup();
        // One per variant of `Cause` (a new variant fails here until worded above).
        let schema = schemars::schema_for!(Cause);
        let all = serde_json::to_value(&schema).unwrap()["oneOf"]
            .as_array()
            .unwrap()
            .len();
        assert_eq!(kinds.len(), all, "{kinds:?}");
    }

    #[test]
    fn the_flags_are_named_here_for_the_causes_they_change() {
        let named = |cause: Cause, flag: &str| {
            let line = super::failure(&f(Step::Plan, cause));
            assert!(line.contains(flag), "{line}");
        };
        named(Cause::NoOifcfgInterconnect, "--oifcfg");
        named(
            Cause::NoSharedNetwork {
                nets: vec!["10.0.0.0/8".parse().unwrap()],
            },
            "--net 10.0.0.0/8",
        );
        named(
            Cause::NotOnBindNetwork {
                node: "n".into(),
                bind: "10.0.0.1".parse().unwrap(),
            },
            "--bind 10.0.0.1",
        );
        named(
            Cause::ManyNetworks {
                node: "n".into(),
                networks: Vec::new(),
            },
            "--bind",
        );
        named(
            Cause::NotOnPath {
                version: "v".into(),
                found: None,
            },
            "--ssh-copy never",
        );
    }

    #[test]
    fn the_nodes_words_are_escaped_once() {
        // Kept escaped by the engine: shown as kept, not escaped again.
        let kept = f(Step::Connect, Cause::said("bad\x1b[31m"));
        assert_eq!(failure(&kept), "ssh: bad\\x1b[31m");
        // A raw control character (a document written by hand): escaped here.
        let raw = f(
            Step::Connect,
            Cause::Said {
                text: "bad\x1b[31m\nline".into(),
            },
        );
        assert_eq!(failure(&raw), "ssh: bad\\x1b[31m\\nline");
    }
}
