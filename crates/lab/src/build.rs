//! `Lab::up`: turns a [`Topology`] into namespaces, links, addresses, routes and
//! offload settings (netlink and ioctls from mtuperf itself), plus tc and nftables
//! commands for the options that need them. On any failure, everything created so far
//! is removed and the failing step is reported as the command that does it by hand.
use std::net::IpAddr;
use std::os::fd::AsFd;

use mtuperf_sys::rtnl::{self, LinkChange, RouteSpec};
use mtuperf_sys::{ethtool, netns};

use crate::cmd::{in_ns, shell_line, Runner};
use crate::down::{namespace_exists, remove_namespaces};
use crate::env::check_environment;
use crate::env::{check_tools, tools_needed};
use crate::error::LabError;
use crate::options::LabOptions;
use crate::rules::{blackhole_rules, loss_rules, loss_threshold, sysctl};
use crate::scenario::Scenario;
use crate::scenario::{Iface, Role, Topology, BRIDGE};
use crate::state::{netns_name, state_dir, validate_name, Host, Lab};

impl Lab {
    /// Builds the lab described by `opts` and saves its state.
    pub fn up(opts: &LabOptions) -> Result<Lab, LabError> {
        validate_name(&opts.name)?;
        validate_options(opts)?;
        check_environment()?;
        check_tools(&tools_needed(opts))?;
        let (scenarios, topo) = if let Some(c) = &opts.cluster {
            (Vec::new(), Topology::cluster(c))
        } else {
            let mut scenarios: Vec<Scenario> = if opts.scenarios.is_empty() {
                Scenario::ALL.to_vec()
            } else {
                opts.scenarios.clone()
            };
            scenarios.sort();
            scenarios.dedup();
            let topo = Topology::of(&scenarios);
            (scenarios, topo)
        };
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
            cluster: opts.cluster.clone(),
        };
        let exists =
            Lab::load(&lab.name)?.is_some() || lab.hosts.iter().any(|h| namespace_exists(&h.netns));
        if exists {
            return Err(LabError::Exists { name: lab.name });
        }
        let run = Runner::new(opts.verbose);
        let mut created = Vec::new();
        let built = build(run, &lab, &mut created)
            .and_then(|()| match &lab.cluster {
                Some(c) => crate::build_cluster::build(run, &lab, c),
                None => Ok(()),
            })
            .and_then(|()| lab.save())
            .and_then(|()| write_oifcfg(&lab));
        if let Err(e) = built {
            remove_namespaces(run, &created);
            let _ = std::fs::remove_dir_all(state_dir(&lab.name));
            return Err(e);
        }
        Ok(lab)
    }
}

/// A cluster lab's `oifcfg getif` file, beside its state.
fn write_oifcfg(lab: &Lab) -> Result<(), LabError> {
    let (Some(c), Some(path)) = (&lab.cluster, lab.oifcfg_path()) else {
        return Ok(());
    };
    std::fs::write(&path, crate::build_cluster::oifcfg_getif(c)).map_err(|source| {
        LabError::Kernel {
            line: format!("write {}", path.display()),
            source,
        }
    })
}

fn validate_options(opts: &LabOptions) -> Result<(), LabError> {
    let cluster_named = opts.scenarios.contains(&Scenario::Cluster);
    if cluster_named != opts.cluster.is_some() || (cluster_named && opts.scenarios.len() > 1) {
        // LabOptions::cluster sets both; the CLI refuses a mix before this.
        return Err(LabError::BadFlag {
            flag: "--scenario",
            value: opts
                .scenarios
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
            allowed: "cluster alone (with its --nodes, --nets, --fault), or other scenarios".into(),
            hint: "a cluster lab is built by itself: mtuperf lab up --scenario cluster --nodes 5 --nets 2"
                .into(),
        });
    }
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

/// "198.18.13.0/24" → (address, prefix length).
pub(crate) fn parse_prefix(dest: &str) -> Result<(IpAddr, u8), LabError> {
    let bad = || LabError::Invalid {
        what: "route destination".into(),
        value: dest.into(),
        allowed: "ADDRESS/PREFIX".into(),
    };
    let (addr, len) = dest.split_once('/').ok_or_else(bad)?;
    Ok((
        addr.parse().map_err(|_| bad())?,
        len.parse().map_err(|_| bad())?,
    ))
}

fn up() -> LinkChange<'static> {
    LinkChange {
        up: Some(true),
        ..LinkChange::default()
    }
}

/// Builds the lab in the kernel: namespaces, switches, links and their interfaces,
/// forwarding on routers, routes, then the scenarios' filters. `created` collects the
/// namespaces made, so a failure can remove them.
fn build(run: Runner, lab: &Lab, created: &mut Vec<String>) -> Result<(), LabError> {
    add_namespaces(run, lab, created)?;
    add_switches(run, lab)?;
    add_links(run, lab)?;
    for i in lab.links.iter().flat_map(|l| [&l.a, &l.b]) {
        set_up_iface(run, lab, i)?;
    }
    for h in lab.hosts.iter().filter(|h| h.role == Role::Router) {
        for key in ["net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding"] {
            sysctl(run, &h.netns, key, "1")?;
        }
    }
    add_routes(run, lab)?;
    add_filters(run, lab)
}

/// The namespace of one of the lab's hosts (links and routes join only its hosts).
fn ns(lab: &Lab, host: &str) -> String {
    lab.netns(host).expect("links join lab hosts")
}

/// One namespace per host, loopback up, no duplicate address detection.
fn add_namespaces(run: Runner, lab: &Lab, created: &mut Vec<String>) -> Result<(), LabError> {
    for h in &lab.hosts {
        let ns = h.netns.as_str();
        run.echo(&format!("ip netns add {ns}"));
        netns::create(ns).map_err(|source| LabError::Kernel {
            line: format!("ip netns add {ns}"),
            source,
        })?;
        created.push(h.netns.clone());
        run.kernel(ns, &format!("ip -n {ns} link set lo up"), || {
            rtnl::set_link("lo", up())
        })?;
        // No duplicate address detection in the lab: every address is ours, and DAD
        // keeps link-local addresses tentative for ~2 s after `up`, during which IPv6
        // neighbour discovery (and so every IPv6 test right after `lab up`) fails.
        for key in [
            "net.ipv6.conf.all.accept_dad",
            "net.ipv6.conf.default.accept_dad",
        ] {
            sysctl(run, ns, key, "0")?;
        }
    }
    Ok(())
}

/// A bridge in every switch host.
fn add_switches(run: Runner, lab: &Lab) -> Result<(), LabError> {
    for h in lab.hosts.iter().filter(|h| h.role == Role::Switch) {
        // STP off (the default): ports forward at once, no listening/learning delay.
        let n = &h.netns;
        let line = format!("ip -n {n} link add {BRIDGE} type bridge stp_state 0");
        run.kernel(n, &line, || rtnl::add_bridge(BRIDGE))?;
        let line = format!("ip -n {n} link set {BRIDGE} up");
        run.kernel(n, &line, || rtnl::set_link(BRIDGE, up()))?;
    }
    Ok(())
}

/// One veth pair per link, each end in its host's namespace.
fn add_links(run: Runner, lab: &Lab) -> Result<(), LabError> {
    for l in &lab.links {
        let (na, nb) = (ns(lab, &l.a.host), ns(lab, &l.b.host));
        let line = format!(
            "ip -n {na} link add {} type veth peer name {} netns {nb}",
            l.a.name, l.b.name
        );
        // The peer is created directly in its namespace, through an open handle on it.
        let peer = std::fs::File::open(netns::path(&nb)).map_err(|source| LabError::Kernel {
            line: line.clone(),
            source,
        })?;
        run.kernel(&na, &line, || {
            rtnl::add_veth(&l.a.name, &l.b.name, Some(peer.as_fd()))
        })?;
    }
    Ok(())
}

/// One link end: its MTU, its bridge (a switch port) or its addresses, up, then the
/// offloads off and the rate limit when the lab asks for them.
fn set_up_iface(run: Runner, lab: &Lab, i: &Iface) -> Result<(), LabError> {
    let n = ns(lab, &i.host);
    let name = i.name.as_str();
    let mtu = LinkChange {
        mtu: Some(i.mtu),
        ..LinkChange::default()
    };
    let line = format!("ip -n {n} link set {name} mtu {}", i.mtu);
    run.kernel(&n, &line, || rtnl::set_link(name, mtu))?;
    if lab.role(&i.host) == Some(Role::Switch) {
        // A bridge port has no address: the switch forwards frames, nothing more.
        let master = LinkChange {
            master: Some(BRIDGE),
            ..LinkChange::default()
        };
        let line = format!("ip -n {n} link set {name} master {BRIDGE}");
        run.kernel(&n, &line, || rtnl::set_link(name, master))?;
    } else {
        let line = format!("ip -n {n} addr add {}/{} dev {name}", i.v4, i.v4_prefix);
        run.kernel(&n, &line, || {
            rtnl::add_address(name, i.v4.into(), i.v4_prefix, false)
        })?;
        let line = format!(
            "ip -n {n} -6 addr add {}/{} dev {name} nodad",
            i.v6, i.v6_prefix
        );
        run.kernel(&n, &line, || {
            rtnl::add_address(name, i.v6.into(), i.v6_prefix, true)
        })?;
    }
    let line = format!("ip -n {n} link set {name} up");
    run.kernel(&n, &line, || rtnl::set_link(name, up()))?;
    if !lab.offload {
        let mut argv = vec![
            "ethtool", "-K", name, "tso", "off", "gso", "off", "gro", "off",
        ];
        argv.extend(["tx-udp-segmentation", "off"]);
        run.kernel(&n, &shell_line(&in_ns(&n, &argv)), || {
            ethtool::set_segmentation_offloads(name, false)?;
            ethtool::set_udp_segmentation_offload(name, false)
        })?;
    }
    if let Some(rate) = lab.rate {
        let (rate, burst) = (format!("{rate}bit"), tbf_burst(rate).to_string());
        run.run(&[
            "tc", "-n", &n, "qdisc", "replace", "dev", name, "root", "tbf", "rate", &rate, "burst",
            &burst, "latency", "50ms",
        ])?;
    }
    Ok(())
}

/// The lab's routes, then the scenarios' routes with an MTU.
fn add_routes(run: Runner, lab: &Lab) -> Result<(), LabError> {
    for r in &lab.routes {
        let n = ns(lab, &r.host);
        let (dest, prefix) = parse_prefix(&r.dest)?;
        let spec = RouteSpec {
            dest,
            prefix,
            via: Some(r.via),
            dev: None,
            metric: None,
            mtu: None,
        };
        let line = format!("ip -n {n} route add {} via {}", r.dest, r.via);
        run.kernel(&n, &line, || rtnl::add_route(&spec, false))?;
    }
    for s in &lab.scenarios {
        for (host, dest_text, dev, metric, mtu) in s.mtu_routes() {
            let n = ns(lab, host);
            let (dest, prefix) = parse_prefix(&dest_text)?;
            let spec = RouteSpec {
                dest,
                prefix,
                via: None,
                dev: Some(dev),
                metric: Some(metric),
                mtu: Some(mtu),
            };
            let line =
                format!("ip -n {n} route replace {dest_text} dev {dev} metric {metric} mtu {mtu}");
            run.kernel(&n, &line, || rtnl::add_route(&spec, true))?;
        }
    }
    Ok(())
}

/// The black hole's router dropping its ICMP errors, and `--loss` on the end hosts.
fn add_filters(run: Runner, lab: &Lab) -> Result<(), LabError> {
    if lab.scenarios.contains(&Scenario::Blackhole) {
        if let Some(router) = Scenario::Blackhole.router_host() {
            run.run_stdin_in(&ns(lab, router), &["nft", "-f", "-"], &blackhole_rules())?;
        }
    }
    if let Some(pct) = lab.loss_pct {
        let rules = loss_rules(loss_threshold(pct));
        for h in lab
            .hosts
            .iter()
            .filter(|h| matches!(h.role, Role::Client | Role::Server | Role::Node))
        {
            run.run_stdin_in(&h.netns, &["nft", "-f", "-"], &rules)?;
        }
    }
    Ok(())
}
