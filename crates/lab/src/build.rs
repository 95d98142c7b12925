//! `Lab::up`: turns a [`Topology`] into iproute2/nftables/ethtool/tc commands. On any
//! failure, everything created so far is removed and the failing command is reported.
use std::fmt::Write as _;

use crate::cmd::{in_ns, Runner};
use crate::down::{namespace_exists, remove_namespaces};
use crate::scenario::{Role, Topology, BRIDGE};
use crate::state::{netns_name, state_dir, validate_name, Host, Lab};
use crate::{check_environment, LabError, LabOptions, Scenario};

/// nftables table names used inside the namespaces.
pub(crate) const BLACKHOLE_TABLE: &str = "mtlab_blackhole";
pub(crate) const LOSS_TABLE: &str = "mtlab_loss";

impl Lab {
    /// Builds the lab described by `opts` and saves its state.
    pub fn up(opts: &LabOptions) -> Result<Lab, LabError> {
        validate_name(&opts.name)?;
        validate_options(opts)?;
        check_environment()?;
        let mut scenarios: Vec<Scenario> = if opts.scenarios.is_empty() {
            Scenario::ALL.to_vec()
        } else {
            opts.scenarios.clone()
        };
        scenarios.sort();
        scenarios.dedup();
        let topo = Topology::of(&scenarios);
        let lab = Lab {
            schema: Lab::new_schema(),
            name: opts.name.clone(),
            scenarios,
            offload: opts.offload,
            rate: opts.rate,
            loss_pct: opts.loss_pct,
            hosts: topo
                .hosts
                .iter()
                .map(|(name, role)| Host {
                    name: name.clone(),
                    role: *role,
                    netns: netns_name(&opts.name, name),
                })
                .collect(),
            links: topo.links,
            routes: topo.routes,
            agents: Vec::new(),
        };
        let exists =
            Lab::load(&lab.name)?.is_some() || lab.hosts.iter().any(|h| namespace_exists(&h.netns));
        if exists {
            return Err(LabError::Exists { name: lab.name });
        }
        let run = Runner::new(opts.verbose);
        let mut created = Vec::new();
        let built = build(run, &lab, &mut created).and_then(|()| lab.save());
        if let Err(e) = built {
            remove_namespaces(run, &created);
            let _ = std::fs::remove_dir_all(state_dir(&lab.name));
            return Err(e);
        }
        Ok(lab)
    }
}

fn validate_options(opts: &LabOptions) -> Result<(), LabError> {
    if let Some(p) = opts.loss_pct {
        if !(p > 0.0 && p <= 100.0) {
            return Err(LabError::Invalid {
                what: "loss percentage (--loss)".into(),
                value: p.to_string(),
                allowed: "more than 0 and at most 100".into(),
            });
        }
    }
    if let Some(r) = opts.rate {
        if r < 8_000 {
            return Err(LabError::Invalid {
                what: "rate (--rate)".into(),
                value: format!("{r} bit/s"),
                allowed: "at least 8kbit".into(),
            });
        }
    }
    Ok(())
}

/// tbf burst in bytes: 1 ms at the rate, at least 32 KiB (several jumbo frames), at
/// most 16 MiB (tc refuses larger values).
pub(crate) fn tbf_burst(rate: u64) -> u64 {
    (rate / 8 / 1000).clamp(32 * 1024, 16 * 1024 * 1024)
}

/// The threshold out of 10000 for `numgen random mod 10000 < T` (0.01% steps).
pub(crate) fn loss_threshold(pct: f64) -> u32 {
    (pct * 100.0).round().clamp(1.0, 10_000.0) as u32
}

fn build(run: Runner, lab: &Lab, created: &mut Vec<String>) -> Result<(), LabError> {
    for h in &lab.hosts {
        run.run(&["ip", "netns", "add", &h.netns])?;
        created.push(h.netns.clone());
        run.run(&["ip", "-n", &h.netns, "link", "set", "lo", "up"])?;
        // No duplicate address detection in the lab: every address is ours, and DAD
        // keeps link-local addresses tentative for ~2 s after `up`, during which IPv6
        // neighbour discovery (and so every IPv6 test right after `lab up`) fails.
        for key in [
            "net.ipv6.conf.all.accept_dad=0",
            "net.ipv6.conf.default.accept_dad=0",
        ] {
            run.run(&in_ns(&h.netns, &["sysctl", "-qw", key]))?;
        }
    }
    let ns = |host: &str| lab.netns(host).expect("links join lab hosts");
    for h in lab.hosts.iter().filter(|h| h.role == Role::Switch) {
        // STP off (the default): ports forward at once, no listening/learning delay.
        run.run(&[
            "ip",
            "-n",
            &h.netns,
            "link",
            "add",
            BRIDGE,
            "type",
            "bridge",
            "stp_state",
            "0",
        ])?;
        run.run(&["ip", "-n", &h.netns, "link", "set", BRIDGE, "up"])?;
    }
    for l in &lab.links {
        let (na, nb) = (ns(&l.a.host), ns(&l.b.host));
        run.run(&[
            "ip", "link", "add", &l.a.name, "netns", &na, "type", "veth", "peer", "name",
            &l.b.name, "netns", &nb,
        ])?;
    }
    for i in lab.links.iter().flat_map(|l| [&l.a, &l.b]) {
        let n = ns(&i.host);
        let (v4, v6) = (
            format!("{}/{}", i.v4, i.v4_prefix),
            format!("{}/{}", i.v6, i.v6_prefix),
        );
        let mtu = i.mtu.to_string();
        run.run(&["ip", "-n", &n, "link", "set", &i.name, "mtu", &mtu])?;
        if lab.role(&i.host) == Some(Role::Switch) {
            // A bridge port has no address: the switch forwards frames, nothing more.
            run.run(&["ip", "-n", &n, "link", "set", &i.name, "master", BRIDGE])?;
        } else {
            run.run(&["ip", "-n", &n, "addr", "add", &v4, "dev", &i.name])?;
            run.run(&[
                "ip", "-n", &n, "-6", "addr", "add", &v6, "dev", &i.name, "nodad",
            ])?;
        }
        run.run(&["ip", "-n", &n, "link", "set", &i.name, "up"])?;
        if !lab.offload {
            let argv = [
                "ethtool", "-K", &i.name, "tso", "off", "gso", "off", "gro", "off",
            ];
            run.run(&in_ns(&n, &argv))?;
        }
        if let Some(rate) = lab.rate {
            let (rate, burst) = (format!("{rate}bit"), tbf_burst(rate).to_string());
            run.run(&[
                "tc", "-n", &n, "qdisc", "replace", "dev", &i.name, "root", "tbf", "rate", &rate,
                "burst", &burst, "latency", "50ms",
            ])?;
        }
    }
    for h in lab.hosts.iter().filter(|h| h.role == Role::Router) {
        for key in ["net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"] {
            run.run(&in_ns(&h.netns, &["sysctl", "-qw", key]))?;
        }
    }
    for r in &lab.routes {
        let via = r.via.to_string();
        run.run(&[
            "ip",
            "-n",
            &ns(&r.host),
            "route",
            "add",
            &r.dest,
            "via",
            &via,
        ])?;
    }
    for s in &lab.scenarios {
        for (host, dest, dev, metric, mtu) in s.mtu_routes() {
            let (metric, mtu) = (metric.to_string(), mtu.to_string());
            run.run(&[
                "ip",
                "-n",
                &ns(host),
                "route",
                "replace",
                &dest,
                "dev",
                dev,
                "metric",
                &metric,
                "mtu",
                &mtu,
            ])?;
        }
    }
    if lab.scenarios.contains(&Scenario::Blackhole) {
        if let Some(router) = Scenario::Blackhole.router_host() {
            run.run_stdin(&in_ns(&ns(router), &["nft", "-f", "-"]), &blackhole_rules())?;
        }
    }
    if let Some(pct) = lab.loss_pct {
        let rules = loss_rules(loss_threshold(pct));
        for h in lab
            .hosts
            .iter()
            .filter(|h| matches!(h.role, Role::Client | Role::Server))
        {
            run.run_stdin(&in_ns(&h.netns, &["nft", "-f", "-"]), &rules)?;
        }
    }
    Ok(())
}

/// The router's own frag-needed / packet-too-big errors leave through `output`;
/// `forward` catches ones passing through.
pub(crate) fn blackhole_rules() -> String {
    let drops = "    icmp type destination-unreachable icmp code frag-needed drop\n    \
                 icmpv6 type packet-too-big drop\n";
    let mut s = format!("table inet {BLACKHOLE_TABLE} {{\n");
    for hook in ["output", "forward"] {
        let _ = write!(
            s,
            "  chain {hook} {{\n    type filter hook {hook} priority 0; policy accept;\n{drops}  }}\n"
        );
    }
    s + "}\n"
}

/// Random loss of UDP datagrams and ICMP echoes at input (see the crate docs).
pub(crate) fn loss_rules(threshold: u32) -> String {
    let drop = format!("numgen random mod 10000 < {threshold} drop");
    format!(
        "table inet {LOSS_TABLE} {{\n  chain input {{\n    \
         type filter hook input priority 0; policy accept;\n    \
         meta l4proto udp {drop}\n    \
         icmp type {{ echo-request, echo-reply }} {drop}\n    \
         icmpv6 type {{ echo-request, echo-reply }} {drop}\n  }}\n}}\n"
    )
}
