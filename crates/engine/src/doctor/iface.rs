//! Interface rules: MTU (and equal MTU on bond members and a VLAN's parent), link
//! speed and duplex, offloads, pause, and reverse-path filtering.

use super::finding::{shell_fix, skip, sysctl_fix, FindingBuilder};
use super::{Finding, HostFacts, IfaceFacts, Options, Profile, Status};

/// The interconnect MTU the Oracle install guides describe (jumbo frames).
pub const RAC_MTU: u32 = 9000;
const SRC_GI: &str = "Oracle Grid Infrastructure Installation Guide for Linux, network requirements (jumbo frames); MOS 1054902.1";
const SRC_BOND: &str = "Oracle cluvfy PRVE-00468 (bond members with different MTU)";
const SRC_RP: &str = "MOS 1286796.1 (rp_filter with multiple private interconnects)";

pub fn check(facts: &HostFacts, opts: &Options) -> Vec<Finding> {
    let mut out = Vec::new();
    for (key, why) in &facts.unreadable {
        if let Some(name) = key.strip_prefix("iface.") {
            out.push(skip(
                "iface.read",
                name,
                format!("cannot read the interface: {why}"),
            ));
        }
    }
    for f in &facts.ifaces {
        out.push(mtu(f, opts.profile));
        out.extend(lower_mtu(f));
        out.push(link(f));
        out.push(offloads(f));
        out.push(pause(f));
    }
    out.extend(rp_filter(facts));
    out
}

fn mtu(f: &IfaceFacts, profile: Profile) -> Finding {
    let name = &f.info.name;
    let b = FindingBuilder::new("iface.mtu", name)
        .measured(f.info.mtu.to_string())
        .source(SRC_GI);
    match profile {
        Profile::Rac => b
            .status(if f.info.mtu < RAC_MTU { Status::Fail } else { Status::Pass })
            .expected(format!(">= {RAC_MTU} (jumbo frames)"))
            .why("An 8 KiB database block in one unfragmented frame needs MTU 9000; at 1500 every block is reassembled from 6 fragments and one lost fragment loses the block.")
            .fix(shell_fix(&["ip", "link", "set", "dev", name, "mtu", &RAC_MTU.to_string()], "and every switch port and the peer")),
        Profile::Generic => b
            .status(Status::Pass)
            .expected("the same on every node and switch (compared with --peer)")
            .why("Reported so the ends can be compared; a mismatch drops large frames silently."),
    }
    .build()
}

/// Bond members and a VLAN's parent must carry the interface's MTU.
fn lower_mtu(f: &IfaceFacts) -> Vec<Finding> {
    let name = &f.info.name;
    let mut out = Vec::new();
    for (member, m) in &f.info.members {
        out.push(
            FindingBuilder::new("iface.bond_member_mtu", &format!("{name}/{member}"))
                .status(if *m == f.info.mtu { Status::Pass } else { Status::Fail })
                .measured(m.to_string())
                .expected(f.info.mtu.to_string())
                .why("A bond member with a different MTU drops or fragments frames whenever traffic fails over to it.")
                .source(SRC_BOND)
                .fix(shell_fix(&["ip", "link", "set", "dev", member, "mtu", &f.info.mtu.to_string()], ""))
                .build(),
        );
    }
    if let (Some((parent, m)), "vlan") = (&f.info.parent, f.info.kind.as_str()) {
        out.push(
            FindingBuilder::new("iface.vlan_parent_mtu", &format!("{name}/{parent}"))
                .status(if *m >= f.info.mtu {
                    Status::Pass
                } else {
                    Status::Fail
                })
                .measured(m.to_string())
                .expected(format!(">= {}", f.info.mtu))
                .why("A VLAN cannot send frames larger than its parent carries.")
                .source(SRC_BOND)
                .fix(shell_fix(
                    &[
                        "ip",
                        "link",
                        "set",
                        "dev",
                        parent,
                        "mtu",
                        &f.info.mtu.to_string(),
                    ],
                    "",
                ))
                .build(),
        );
    }
    out
}

fn link(f: &IfaceFacts) -> Finding {
    let name = &f.info.name;
    let speed = f
        .info
        .speed_mbps
        .map_or("unknown".into(), |s| format!("{s} Mb/s"));
    let duplex = f.info.duplex.clone().unwrap_or_else(|| "unknown".into());
    let b = FindingBuilder::new("iface.link", name)
        .measured(format!(
            "{speed}, {duplex} duplex, {}",
            if f.up { "up" } else { "down" }
        ))
        .expected("up, full duplex")
        .source("IEEE 802.3 (half duplex means collisions and late retransmits)");
    if !f.up {
        return b
            .status(Status::Fail)
            .why("The interconnect interface is administratively down.")
            .fix(shell_fix(&["ip", "link", "set", "dev", name, "up"], ""))
            .build();
    }
    match f.info.duplex.as_deref() {
        Some("half") => b
            .status(Status::Fail)
            .why("Half duplex on a switched link is a negotiation failure: collisions cost throughput and latency.")
            .fix(shell_fix(&["ethtool", "-s", name, "autoneg", "on"], "then check the switch port"))
            .build(),
        // Virtual links (veth, bond without members up) report no speed: not a fault.
        _ => b
            .why("Speed and duplex bound what the interconnect can carry; unknown on virtual links.")
            .build(),
    }
}

fn offloads(f: &IfaceFacts) -> Finding {
    let o = &f.info.offloads;
    let show = |n: &str, v: Option<bool>| {
        format!("{n} {}", v.map_or("?", |b| if b { "on" } else { "off" }))
    };
    let measured = [
        show("tso", o.tso),
        show("gso", o.gso),
        show("gro", o.gro),
        show("lro", o.lro),
        show("rx-csum", o.rx_csum),
        show("tx-csum", o.tx_csum),
    ]
    .join(", ");
    let name = &f.info.name;
    let b = FindingBuilder::new("iface.offloads", name)
        .measured(measured)
        .expected("lro off")
        .source("Linux kernel documentation, segmentation offloads (LRO must be off when forwarding or bridging)");
    if o.lro == Some(true) {
        b.status(Status::Warn)
            .why("LRO merges received frames irreversibly; on a bridged or forwarded interconnect the merged packets exceed the MTU and are dropped.")
            .fix(shell_fix(&["ethtool", "-K", name, "lro", "off"], ""))
            .build()
    } else {
        b.why("Reported because with TSO/GSO/GRO on, interface counters count super-packets, not frames.")
            .build()
    }
}

fn pause(f: &IfaceFacts) -> Finding {
    let name = &f.info.name;
    match f.pause {
        None => skip(
            "iface.pause",
            name,
            "the driver reports no pause parameters (ETHTOOL_GPAUSEPARAM unsupported, usual on virtual links)",
        ),
        Some(p) => FindingBuilder::new("iface.pause", name)
            .measured(format!(
                "autoneg {}, rx {}, tx {}",
                on(p.autoneg),
                on(p.rx),
                on(p.tx)
            ))
            .expected("reported; match the switch port")
            .why("Flow control trades drops for head-of-line stalls; it must agree with the switch port.")
            .source("IEEE 802.3x")
            .build(),
    }
}

fn on(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// Effective rp_filter = max(all, interface). Strict (1) with several private NICs
/// drops replies arriving on the "other" NIC: FAIL. With one NIC it is harmless
/// until a second is added: WARN.
fn rp_filter(facts: &HostFacts) -> Vec<Finding> {
    let Some(all) = facts
        .sysctls
        .get("net.ipv4.conf.all.rp_filter")
        .and_then(|v| v.parse::<u32>().ok())
    else {
        let why = facts
            .unreadable
            .get("net.ipv4.conf.all.rp_filter")
            .cloned()
            .unwrap_or_else(|| "unreadable".into());
        return vec![skip("iface.rp_filter", "net.ipv4.conf.all.rp_filter", why)];
    };
    let n = facts.ifaces.len();
    facts
        .ifaces
        .iter()
        .map(|f| {
            let name = &f.info.name;
            let own = f.rp_filter.unwrap_or(0);
            let eff = all.max(own);
            let status = match (eff, n) {
                (1, 1) => Status::Warn,
                (1, _) => Status::Fail,
                _ => Status::Pass,
            };
            let mut fix = sysctl_fix(&format!("net.ipv4.conf.{name}.rp_filter"), "2");
            if all == 1 && !fix.is_empty() {
                fix = format!("{} && {fix}", sysctl_fix("net.ipv4.conf.all.rp_filter", "2"));
            }
            FindingBuilder::new("iface.rp_filter", name)
                .status(status)
                .measured(format!("{eff} (max of all={all}, {name}={own}) with {n} interconnect interface(s)"))
                .expected("0 or 2")
                .why("Strict reverse-path filtering drops packets that arrive on a private NIC other than the one the route back uses, which splits a multi-NIC interconnect.")
                .source(SRC_RP)
                .fix(fix)
                .build()
        })
        .collect()
}
