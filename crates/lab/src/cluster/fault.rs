//! Faults of a cluster lab, as `--fault KIND=NODE:NET[:VALUE]` (repeatable):
//!
//! | spec                     | effect                                                        |
//! |--------------------------|---------------------------------------------------------------|
//! | `nic-mtu=n3:1:1500`      | node n3's NIC on net 1 at MTU 1500 (switch and others 9000)   |
//! | `port-mtu=n3:2:1500`     | switch sw2's port toward n3 at 1500: both NICs say 9000, big  |
//! |                          | frames vanish both ways at the switch, no ICMP                |
//! | `routed=n3:1[:1500]`     | n3 reached on net 1 through a router over a 1500 segment; the |
//! |                          | router answers frag-needed / packet too big                   |
//! | `blackhole=n3:1[:1500]`  | as routed, but the router drops its ICMP errors (nft)         |
//! | `inbound=n3:1[:1500]`    | n3 drops inbound packets above 1500 on net 1 (nft, before     |
//! |                          | reassembly) while its NIC says 9000: what a switch port's     |
//! |                          | egress at 1500 does; frames out of n3 carry 9000, no ICMP     |
//! | `outbound=n3:1[:1500]`   | frames out of n3 above 1500 dropped on net 1 at its switch    |
//! |                          | port's ingress (nft netdev ingress in the switch) while its   |
//! |                          | NIC says 9000: frames into n3 carry 9000, no ICMP, and n3's   |
//! |                          | own sends succeed (a filter on n3 would fail them, EPERM)     |
//! | `loss=n3:1:5`            | 5% of UDP datagrams and ICMP echoes to and from n3 on net 1   |
//! |                          | dropped (nft numgen; TCP never)                               |
//! | `reasm=n3[:BYTES]`       | n3's IP reassembly memory (net.ipv4.ipfrag_high_thresh) at    |
//! |                          | BYTES (default 0): every fragmented datagram into n3 fails    |
//! |                          | reassembly, on every network (the sysctl is the node's)       |
//!
//! NODE is `nI` or `I`, NET is `netK` or `K`.
use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Cluster, CLUSTER_MTU};
use crate::error::LabError;

/// One injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Fault {
    NicMtu {
        node: u8,
        net: u8,
        mtu: u32,
    },
    PortMtu {
        node: u8,
        net: u8,
        mtu: u32,
    },
    Routed {
        node: u8,
        net: u8,
        mtu: u32,
    },
    Blackhole {
        node: u8,
        net: u8,
        mtu: u32,
    },
    Inbound {
        node: u8,
        net: u8,
        mtu: u32,
    },
    Outbound {
        node: u8,
        net: u8,
        mtu: u32,
    },
    Loss {
        node: u8,
        net: u8,
        pct: f64,
    },
    /// The node's reassembly limit (`ipfrag_high_thresh`) at `bytes`: for the whole
    /// node, so it has no network (`net()` is 0).
    Reasm {
        node: u8,
        bytes: u32,
    },
}

/// What a fault does, by the name `--fault` gives it (`nic-mtu`, `reasm`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    NicMtu,
    PortMtu,
    Routed,
    Blackhole,
    Inbound,
    Outbound,
    Loss,
    Reasm,
}

impl FaultKind {
    pub const ALL: [FaultKind; 8] = [
        FaultKind::NicMtu,
        FaultKind::PortMtu,
        FaultKind::Routed,
        FaultKind::Blackhole,
        FaultKind::Inbound,
        FaultKind::Outbound,
        FaultKind::Loss,
        FaultKind::Reasm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::NicMtu => "nic-mtu",
            FaultKind::PortMtu => "port-mtu",
            FaultKind::Routed => "routed",
            FaultKind::Blackhole => "blackhole",
            FaultKind::Inbound => "inbound",
            FaultKind::Outbound => "outbound",
            FaultKind::Loss => "loss",
            FaultKind::Reasm => "reasm",
        }
    }

    /// A fault of NODE:NET:VALUE, its value required (an MTU, a loss percentage).
    fn valued(self) -> bool {
        matches!(
            self,
            FaultKind::NicMtu | FaultKind::PortMtu | FaultKind::Loss
        )
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FaultKind {
    type Err = String;

    /// A kind by name, in any case.
    fn from_str(s: &str) -> Result<FaultKind, String> {
        let s = s.trim().to_ascii_lowercase();
        FaultKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown fault kind {s:?}; one of {KINDS}"))
    }
}

const KINDS: &str = "nic-mtu, port-mtu, routed, blackhole, inbound, outbound, loss, reasm";
const SYNTAX: &str = "KIND=NODE:NET[:VALUE], e.g. nic-mtu=n3:1:1500, port-mtu=n2:2:1500, \
                      routed=n4:1, blackhole=n4:2:1500, inbound=n3:1:1500, outbound=n3:1, \
                      loss=n5:1:5; or reasm=NODE[:BYTES], e.g. reasm=n3";
/// MTUs a fault may set: IPv6 needs 1280, the lab runs at 9000.
const MTU_MIN: u32 = 1280;

fn bad(value: &str, allowed: &str, hint: &str) -> LabError {
    LabError::BadFlag {
        flag: "--fault",
        value: value.into(),
        allowed: allowed.into(),
        hint: hint.into(),
    }
}

fn number(text: &str, prefix: &str) -> Option<u8> {
    let t = text.trim();
    t.strip_prefix(prefix).unwrap_or(t).parse().ok()
}

impl FromStr for Fault {
    type Err = LabError;

    fn from_str(spec: &str) -> Result<Fault, LabError> {
        let (kind, rest) = spec
            .split_once('=')
            .ok_or_else(|| bad(spec, SYNTAX, "a fault is KIND=NODE:NET[:VALUE]"))?;
        let parts: Vec<&str> = rest.split(':').collect();
        let kind: FaultKind = kind
            .parse()
            .map_err(|_| bad(spec, KINDS, &format!("the fault syntax is {SYNTAX}")))?;
        let at = || with_mtu(spec, kind, &parts);
        match kind {
            FaultKind::Reasm => reasm(spec, &parts),
            FaultKind::Loss => loss(spec, &parts),
            FaultKind::NicMtu => at().map(|(node, net, mtu)| Fault::NicMtu { node, net, mtu }),
            FaultKind::PortMtu => at().map(|(node, net, mtu)| Fault::PortMtu { node, net, mtu }),
            FaultKind::Routed => at().map(|(node, net, mtu)| Fault::Routed { node, net, mtu }),
            FaultKind::Blackhole => {
                at().map(|(node, net, mtu)| Fault::Blackhole { node, net, mtu })
            }
            FaultKind::Inbound => at().map(|(node, net, mtu)| Fault::Inbound { node, net, mtu }),
            FaultKind::Outbound => at().map(|(node, net, mtu)| Fault::Outbound { node, net, mtu }),
        }
    }
}

/// NODE:NET and the rest of `parts` (a value required when the kind has one, else at
/// most one), or what is missing.
fn node_net<'a>(
    spec: &str,
    kind: FaultKind,
    parts: &[&'a str],
) -> Result<(u8, u8, Option<&'a str>), LabError> {
    let arity_ok = if kind.valued() {
        parts.len() == 3
    } else {
        (2..=3).contains(&parts.len())
    };
    if !arity_ok {
        let want = if kind.valued() {
            format!("{kind}=NODE:NET:VALUE")
        } else {
            format!("{kind}=NODE:NET[:MTU]")
        };
        return Err(bad(spec, &want, &format!("the fault syntax is {SYNTAX}")));
    }
    let node = number(parts[0], "n")
        .ok_or_else(|| bad(spec, "NODE as nI or I (n1, n2, ...)", "e.g. n3 or 3"))?;
    let net = number(parts[1], "net")
        .ok_or_else(|| bad(spec, "NET as netK or K (1 to 4)", "e.g. 2 or net2"))?;
    Ok((node, net, parts.get(2).copied()))
}

/// NODE:NET[:MTU] of a fault that sets an MTU (1500 when not given).
fn with_mtu(spec: &str, kind: FaultKind, parts: &[&str]) -> Result<(u8, u8, u32), LabError> {
    let (node, net, value) = node_net(spec, kind, parts)?;
    let mtu = value.map_or(1500, |t| t.trim().parse::<u32>().unwrap_or(0));
    if !(MTU_MIN..CLUSTER_MTU).contains(&mtu) {
        return Err(bad(
            spec,
            "an MTU from 1280 to 8999",
            "the lab runs at 9000; IPv6 needs at least 1280",
        ));
    }
    Ok((node, net, mtu))
}

/// `loss=NODE:NET:PCT`.
fn loss(spec: &str, parts: &[&str]) -> Result<Fault, LabError> {
    let (node, net, value) = node_net(spec, FaultKind::Loss, parts)?;
    let pct: f64 = value.unwrap_or_default().trim().parse().unwrap_or(f64::NAN);
    if !(pct > 0.0 && pct <= 100.0) {
        return Err(bad(
            spec,
            "a loss percentage more than 0 and at most 100",
            "e.g. loss=n5:1:5 drops 5% of UDP and ICMP echo to and from n5 on net 1",
        ));
    }
    Ok(Fault::Loss { node, net, pct })
}

/// `reasm=NODE[:BYTES]`.
fn reasm(spec: &str, parts: &[&str]) -> Result<Fault, LabError> {
    let node = parts
        .first()
        .and_then(|p| number(p, "n"))
        .filter(|_| parts.len() <= 2)
        .ok_or_else(|| bad(spec, "reasm=NODE[:BYTES]", "e.g. reasm=n3 or reasm=n3:1024"))?;
    let bytes = match parts.get(1) {
        None => 0,
        Some(b) => b.trim().parse::<u32>().map_err(|_| {
            bad(
                spec,
                "BYTES from 0 to 4294967295",
                "the reassembly memory limit in bytes, e.g. reasm=n3:1024",
            )
        })?,
    };
    Ok(Fault::Reasm { node, bytes })
}

impl Fault {
    pub fn kind(&self) -> FaultKind {
        match self {
            Fault::NicMtu { .. } => FaultKind::NicMtu,
            Fault::PortMtu { .. } => FaultKind::PortMtu,
            Fault::Routed { .. } => FaultKind::Routed,
            Fault::Blackhole { .. } => FaultKind::Blackhole,
            Fault::Inbound { .. } => FaultKind::Inbound,
            Fault::Outbound { .. } => FaultKind::Outbound,
            Fault::Loss { .. } => FaultKind::Loss,
            Fault::Reasm { .. } => FaultKind::Reasm,
        }
    }

    pub fn node(&self) -> u8 {
        match *self {
            Fault::NicMtu { node, .. }
            | Fault::PortMtu { node, .. }
            | Fault::Routed { node, .. }
            | Fault::Blackhole { node, .. }
            | Fault::Inbound { node, .. }
            | Fault::Outbound { node, .. }
            | Fault::Loss { node, .. }
            | Fault::Reasm { node, .. } => node,
        }
    }

    pub fn net(&self) -> u8 {
        match *self {
            Fault::NicMtu { net, .. }
            | Fault::PortMtu { net, .. }
            | Fault::Routed { net, .. }
            | Fault::Blackhole { net, .. }
            | Fault::Inbound { net, .. }
            | Fault::Outbound { net, .. }
            | Fault::Loss { net, .. } => net,
            Fault::Reasm { .. } => 0,
        }
    }

    /// The MTU the fault sets, if it sets one.
    pub fn mtu(&self) -> Option<u32> {
        match *self {
            Fault::NicMtu { mtu, .. }
            | Fault::PortMtu { mtu, .. }
            | Fault::Routed { mtu, .. }
            | Fault::Blackhole { mtu, .. }
            | Fault::Inbound { mtu, .. }
            | Fault::Outbound { mtu, .. } => Some(mtu),
            Fault::Loss { .. } | Fault::Reasm { .. } => None,
        }
    }

    /// A router stands in front of the node.
    pub fn is_routed(&self) -> bool {
        matches!(self, Fault::Routed { .. } | Fault::Blackhole { .. })
    }

    /// What the fault does, in one line.
    pub fn effect(&self) -> String {
        let (n, k) = (Cluster::node(self.node()), self.net());
        match *self {
            Fault::NicMtu { mtu, .. } => {
                format!("{n}'s NIC net{k} at MTU {mtu} (its switch port and the other nodes at {CLUSTER_MTU})")
            }
            Fault::PortMtu { mtu, .. } => format!(
                "switch sw{k}'s port toward {n} at MTU {mtu}: the NICs say {CLUSTER_MTU}, larger frames are dropped both ways without ICMP"
            ),
            Fault::Routed { mtu, .. } => format!(
                "{n} on net{k} behind router {} over an MTU {mtu} segment; the router sends ICMP frag-needed / packet too big",
                Cluster::router(self.node(), k)
            ),
            Fault::Blackhole { mtu, .. } => format!(
                "{n} on net{k} behind router {} over an MTU {mtu} segment; the router drops its ICMP errors (black hole)",
                Cluster::router(self.node(), k)
            ),
            Fault::Inbound { mtu, .. } => format!(
                "{n} drops inbound packets above {mtu} on net{k} (a filter before reassembly, as a switch port's egress at {mtu} would); its NIC says {CLUSTER_MTU}, its outbound frames carry {CLUSTER_MTU}, no ICMP"
            ),
            Fault::Outbound { mtu, .. } => format!(
                "frames out of {n} above {mtu} dropped on net{k} at switch sw{k}'s port toward it (its ingress at {mtu}); its NIC says {CLUSTER_MTU}, frames into it carry {CLUSTER_MTU}, no ICMP"
            ),
            Fault::Loss { pct, .. } => format!(
                "{pct}% of UDP datagrams and ICMP echoes to and from {n} on net{k} dropped (TCP never)"
            ),
            Fault::Reasm { bytes, .. } => format!(
                "{n}'s IP reassembly memory (net.ipv4.ipfrag_high_thresh) at {bytes} B: every fragmented datagram into {n} fails reassembly (Ip ReasmFails), so 8 KiB UDP blocks crossing a 1500 path into it never arrive"
            ),
        }
    }

    /// Checks the fault against the cluster's size and the faults before it.
    pub(crate) fn check(&self, c: &Cluster, before: &[&Fault]) -> Result<(), LabError> {
        let spec = self.to_string();
        if !(1..=c.nodes).contains(&self.node()) {
            return Err(bad(
                &spec,
                &format!("a node from n1 to n{}", c.nodes),
                "the lab has --nodes nodes, numbered from 1",
            ));
        }
        if !matches!(self, Fault::Reasm { .. }) && !(1..=c.nets).contains(&self.net()) {
            return Err(bad(
                &spec,
                &format!("a network from 1 to {}", c.nets),
                "the lab has --nets networks, numbered from 1",
            ));
        }
        // A routed segment sets the node's NIC MTU itself, and puts a router, not
        // the node, behind its switch port.
        let excludes_routed =
            |f: &Fault| matches!(f.kind(), FaultKind::NicMtu | FaultKind::Outbound);
        let clash = |f: &&&Fault| {
            f.node() == self.node()
                && f.net() == self.net()
                && (f.kind() == self.kind()
                    || (f.is_routed() && (self.is_routed() || excludes_routed(self)))
                    || (self.is_routed() && excludes_routed(f)))
        };
        if let Some(other) = before.iter().find(clash) {
            return Err(bad(
                &spec,
                "one fault of a kind per node and network; routed and blackhole exclude each other, nic-mtu and outbound",
                &format!("it clashes with --fault {other}"),
            ));
        }
        Ok(())
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (node, net) = (self.node(), self.net());
        match *self {
            Fault::Loss { pct, .. } => write!(f, "loss=n{node}:{net}:{pct}"),
            Fault::Reasm { bytes, .. } => write!(f, "reasm=n{node}:{bytes}"),
            _ => write!(
                f,
                "{}=n{node}:{net}:{}",
                self.kind(),
                self.mtu().unwrap_or(0)
            ),
        }
    }
}
