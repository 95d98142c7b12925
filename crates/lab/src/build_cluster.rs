//! The steps of a cluster lab that the generic build (namespaces, bridges, veths,
//! MTUs, addresses, offloads, shaping, forwarding) does not do: the routers of
//! `routed`/`blackhole` faults (proxy ARP/NDP, host routes, ICMP drops) and the nft
//! rules of `loss`, `inbound` (in the node) and `outbound` (in the switch) faults.
use std::fmt::Write as _;
use std::net::Ipv6Addr;

use mtuperf_sys::rtnl::{self, RouteSpec};

use crate::cluster::topo::{v4, v6};
use crate::cluster::{Cluster, Fault};
use crate::cmd::Runner;
use crate::error::LabError;
use crate::rules::{blackhole_rules, loss_threshold, sysctl};
use crate::state::Lab;

/// nftables table of `loss` faults inside a node.
pub(crate) const FAULT_LOSS_TABLE: &str = "mtlab_fault_loss";
/// nftables table of `inbound` faults inside a node.
pub(crate) const FAULT_INBOUND_TABLE: &str = "mtlab_fault_inbound";
/// nftables table of `outbound` faults inside a switch (one chain per port).
pub(crate) const FAULT_OUTBOUND_TABLE: &str = "mtlab_fault_outbound";

pub(crate) fn build(run: Runner, lab: &Lab, c: &Cluster) -> Result<(), LabError> {
    neighbour_room(run, c)?;
    let ns = |host: &str| lab.netns(host).expect("cluster hosts are lab hosts");
    for f in &c.faults {
        let (i, k) = (f.node(), f.net());
        if f.is_routed() {
            router(run, &ns(&Cluster::router(i, k)), c, i, k)?;
            if matches!(f, Fault::Blackhole { .. }) {
                let n = ns(&Cluster::router(i, k));
                run.run_stdin_in(&n, &["nft", "-f", "-"], &blackhole_rules())?;
            }
        }
        if let Fault::Loss { pct, .. } = *f {
            let rules = fault_loss_rules(&Cluster::nic(k), loss_threshold(pct));
            run.run_stdin_in(&ns(&Cluster::node(i)), &["nft", "-f", "-"], &rules)?;
        }
        if let Fault::Inbound { mtu, .. } = *f {
            let rules = fault_inbound_rules(&Cluster::nic(k), mtu);
            run.run_stdin_in(&ns(&Cluster::node(i)), &["nft", "-f", "-"], &rules)?;
        }
        if let Fault::Outbound { mtu, .. } = *f {
            let rules = fault_outbound_rules(&Cluster::port(i), mtu);
            run.run_stdin_in(&ns(&Cluster::switch(k)), &["nft", "-f", "-"], &rules)?;
        }
        if let Fault::Reasm { bytes, .. } = *f {
            // high_thresh may not go below low_thresh: lower that first.
            let n = ns(&Cluster::node(i));
            sysctl(run, &n, "net.ipv4.ipfrag_low_thresh", "0")?;
            sysctl(run, &n, "net.ipv4.ipfrag_high_thresh", &bytes.to_string())?;
        }
    }
    if c.haip {
        haip(run, lab, c)?;
    }
    Ok(())
}

/// HAIP's link-local address of node `i` on network `k`: each network its own
/// 169.254.0.0/18 quarter (as Clusterware splits 169.254.0.0/16 over up to four
/// private NICs), the node's number in the last octet.
pub fn haip_addr(k: u8, i: u8) -> (std::net::Ipv4Addr, u8) {
    (
        std::net::Ipv4Addr::new(169, 254, (k - 1).saturating_mul(64) + 1, i),
        18,
    )
}

/// HAIP-style link-local addresses on every node's private NICs.
fn haip(run: Runner, lab: &Lab, c: &Cluster) -> Result<(), LabError> {
    for i in 1..=c.nodes {
        let n = lab
            .netns(&Cluster::node(i))
            .expect("cluster hosts are lab hosts");
        for k in 1..=c.nets {
            let nic = Cluster::nic(k);
            let (addr, prefix) = haip_addr(k, i);
            let line = format!("ip -n {n} addr add {addr}/{prefix} dev {nic}");
            run.kernel(&n, &line, || {
                rtnl::add_address(&nic, addr.into(), prefix, false)
            })?;
        }
    }
    Ok(())
}

/// What `oifcfg getif` would print for the cluster: its private networks as
/// `cluster_interconnect`, its public network as `public`.
pub fn oifcfg_getif(c: &Cluster) -> String {
    let mut s = String::new();
    if c.public {
        let _ = writeln!(
            s,
            "{}  {}  global  public",
            Cluster::PUBLIC_NIC,
            v4(Cluster::PUBLIC_NET, 0)
        );
    }
    for k in 1..=c.nets {
        let _ = writeln!(
            s,
            "{}  {}  global  cluster_interconnect",
            Cluster::nic(k),
            v4(k, 0)
        );
    }
    s
}

/// Entries the host's neighbour tables keep free for everything else (other labs, the
/// host's own neighbours) on top of what a cluster needs.
const NEIGH_MARGIN: u64 = 1024;

/// The entries a full mesh of the cluster puts in each neighbour table (ARP, NDP):
/// every node learns every other node on every network.
pub(crate) fn neighbours_needed(c: &Cluster) -> u64 {
    let n = u64::from(c.nodes);
    n * (n - 1) * u64::from(c.nets)
}

/// The kernel's ARP and NDP tables are shared by every network namespace and hold at
/// most `gc_thresh3` entries (1024 by default), so a mesh over a 64-node lab overflows
/// them ("neighbor table overflow") and every lab on the host then loses packets at
/// random. Raises the limits (never lowers them) when the cluster needs more; the
/// settings are the host's own, so they stay after `lab down` (they only make room).
fn neighbour_room(run: Runner, c: &Cluster) -> Result<(), LabError> {
    let want = neighbours_needed(c) + NEIGH_MARGIN;
    for family in ["ipv4", "ipv6"] {
        for (knob, value) in [("gc_thresh2", want), ("gc_thresh3", 2 * want)] {
            let file = format!("/proc/sys/net/{family}/neigh/default/{knob}");
            let now: u64 = std::fs::read_to_string(&file)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(u64::MAX);
            if now < value {
                let line = format!("sysctl -qw net.{family}.neigh.default.{knob}={value}");
                run.echo(&line);
                std::fs::write(&file, value.to_string()).map_err(|source| LabError::Kernel {
                    line: line.clone(),
                    source,
                })?;
            }
        }
    }
    Ok(())
}

/// The router in front of node `i` on `k`: answers ARP/NDP on each side for the
/// addresses on the other (at once: no proxy delay), with a host route to the node.
fn router(run: Runner, n: &str, c: &Cluster, i: u8, k: u8) -> Result<(), LabError> {
    for dev in ["eth0", "eth1"] {
        sysctl(run, n, &format!("net.ipv4.conf.{dev}.proxy_arp"), "1")?;
        sysctl(run, n, &format!("net.ipv6.conf.{dev}.proxy_ndp"), "1")?;
        sysctl(run, n, &format!("net.ipv4.neigh.{dev}.proxy_delay"), "0")?;
        sysctl(run, n, &format!("net.ipv6.neigh.{dev}.proxy_delay"), "0")?;
    }
    for (dest, prefix) in [(v4(k, i).into(), 32), (v6(k, i).into(), 128)] {
        let spec = RouteSpec {
            dest,
            prefix,
            via: None,
            dev: Some("eth1"),
            metric: None,
            mtu: None,
        };
        let line = format!("ip -n {n} route add {dest}/{prefix} dev eth1");
        run.kernel(n, &line, || rtnl::add_route(&spec, false))?;
    }
    for (addr, dev) in proxy_ndp_entries(c, i, k) {
        let line = format!("ip -n {n} neigh add proxy {addr} dev {dev}");
        run.kernel(n, &line, || rtnl::add_neigh_proxy(dev, addr.into()))?;
    }
    Ok(())
}

/// Proxy NDP entries (IPv6 has no proxy-ARP-for-any-route): node `i`'s address
/// answered toward the switch, every other node's toward node `i`.
pub(crate) fn proxy_ndp_entries(c: &Cluster, i: u8, k: u8) -> Vec<(Ipv6Addr, &'static str)> {
    let others = (1..=c.nodes)
        .filter(|&j| j != i)
        .map(|j| (v6(k, j), "eth1"));
    std::iter::once((v6(k, i), "eth0")).chain(others).collect()
}

/// Random loss of UDP datagrams and ICMP echoes crossing NIC `dev`, both ways (input
/// after reassembly, output before fragmentation: whole datagrams).
pub(crate) fn fault_loss_rules(dev: &str, threshold: u32) -> String {
    let drop = format!("numgen random mod 10000 < {threshold} drop");
    let mut s = format!("table inet {FAULT_LOSS_TABLE} {{\n");
    for (hook, dir) in [("input", "iifname"), ("output", "oifname")] {
        let _ = write!(
            s,
            "  chain {hook} {{\n    type filter hook {hook} priority 0; policy accept;\n    \
             {dir} \"{dev}\" meta l4proto udp {drop}\n    \
             {dir} \"{dev}\" icmp type {{ echo-request, echo-reply }} {drop}\n    \
             {dir} \"{dev}\" icmpv6 type {{ echo-request, echo-reply }} {drop}\n  }}\n"
        );
    }
    s + "}\n"
}

/// Inbound IPv4 and IPv6 packets above `mtu` bytes arriving on NIC `dev` dropped,
/// silently: at prerouting before reassembly (priority -500, ahead of conntrack's
/// defragmentation at -400), so each fragment of a larger datagram passes as it would
/// through a switch port's egress at `mtu`, and only whole packets above it vanish.
/// `counter`: a test can read how many it dropped.
pub(crate) fn fault_inbound_rules(dev: &str, mtu: u32) -> String {
    format!(
        "table inet {FAULT_INBOUND_TABLE} {{\n  chain prerouting {{\n    \
         type filter hook prerouting priority -500; policy accept;\n    \
         iifname \"{dev}\" meta length > {mtu} counter drop\n  }}\n}}\n"
    )
}

/// Frames above `mtu` bytes (IP length) entering the switch from its port `port`
/// dropped, silently: the netdev ingress hook of that port, as a switch port whose
/// ingress is at `mtu` does. The node behind it sends them without an error (a filter
/// in the node's own output or postrouting hook would fail its sendmsg with EPERM, which
/// no switch does), and frames toward the node pass. `counter`: a test can read how
/// many it dropped. One chain per port, so two nodes' faults share the table.
pub(crate) fn fault_outbound_rules(port: &str, mtu: u32) -> String {
    format!(
        "table netdev {FAULT_OUTBOUND_TABLE} {{\n  chain {port} {{\n    \
         type filter hook ingress device \"{port}\" priority 0; policy accept;\n    \
         meta length > {mtu} counter drop\n  }}\n}}\n"
    )
}
