//! The words of an interface's check (MTU, link, offloads, pause, reverse-path filter).

use mtuperf_engine::doctor::{Check, Profile};

use super::{skipped, source, Words};

/// The words of an interface's check, or of a skipped one (None: a host check).
pub(super) fn iface(c: &Check, subject: &str) -> Option<Words> {
    let w = |measured: String, expected: &str, why: &str, source: &str| Words {
        measured,
        expected: expected.into(),
        why: why.into(),
        source: source.into(),
        fix: String::new(),
    };
    Some(match c {
        Check::Skipped { read, why } => Words {
            measured: read.clone().unwrap_or_else(|| "unknown".into()),
            why: skipped(why),
            ..Words::default()
        },
        Check::Mtu { mtu, profile } => match profile {
            Profile::Rac => w(
                mtu.to_string(),
                &format!(">= {} (jumbo frames)", mtuperf_engine::doctor::iface::RAC_MTU),
                "An 8 KiB database block in one unfragmented frame needs MTU 9000; at 1500 every block is reassembled from 6 fragments and one lost fragment loses the block.",
                source::GI_NETWORK,
            ),
            Profile::Generic => w(
                mtu.to_string(),
                "the same on every node and switch (compared with --peer)",
                "Reported so the ends can be compared; a mismatch drops large frames silently.",
                source::GI_NETWORK,
            ),
        },
        Check::BondMemberMtu { member_mtu, bond_mtu } => w(
            member_mtu.to_string(),
            &bond_mtu.to_string(),
            "A bond member with a different MTU drops or fragments frames whenever traffic fails over to it.",
            source::CLUVFY_BOND,
        ),
        Check::VlanParentMtu { parent_mtu, vlan_mtu } => w(
            parent_mtu.to_string(),
            &format!(">= {vlan_mtu}"),
            "A VLAN cannot send frames larger than its parent carries.",
            source::CLUVFY_BOND,
        ),
        Check::Link { speed_mbps, duplex, up } => link(*speed_mbps, duplex.as_deref(), *up),
        Check::Offloads { offloads: o } => {
            let show = |n: &str, v: Option<bool>| format!("{n} {}", v.map_or("?", on));
            let measured = [
                show("tso", o.tso),
                show("gso", o.gso),
                show("gro", o.gro),
                show("lro", o.lro),
                show("rx-csum", o.rx_csum),
                show("tx-csum", o.tx_csum),
            ]
            .join(", ");
            let why = if o.lro == Some(true) {
                "LRO merges received frames irreversibly; on a bridged or forwarded interconnect the merged packets exceed the MTU and are dropped."
            } else {
                "Reported because with TSO/GSO/GRO on, interface counters count super-packets, not frames."
            };
            w(measured, "lro off", why, source::KERNEL_OFFLOADS)
        }
        Check::Pause { pause: p } => w(
            format!("autoneg {}, rx {}, tx {}", on(p.autoneg), on(p.rx), on(p.tx)),
            "reported; match the switch port",
            "Flow control trades drops for head-of-line stalls; it must agree with the switch port.",
            source::IEEE_8023X,
        ),
        Check::RpFilter { effective, all, own, interfaces } => w(
            format!("{effective} (max of all={all}, {subject}={own}) with {interfaces} interconnect interface(s)"),
            "0 or 2",
            "Strict reverse-path filtering drops packets that arrive on a private NIC other than the one the route back uses, which splits a multi-NIC interconnect.",
            source::MOS_RP_FILTER,
        ),
        _ => return None,
    })
}

fn on(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

fn link(speed_mbps: Option<u32>, duplex: Option<&str>, up: bool) -> Words {
    let speed = speed_mbps.map_or("unknown".into(), |s| format!("{s} Mb/s"));
    let why = if !up {
        "The interconnect interface is administratively down."
    } else if duplex == Some("half") {
        "Half duplex on a switched link is a negotiation failure: collisions cost throughput and latency."
    } else {
        "Speed and duplex bound what the interconnect can carry; unknown on virtual links."
    };
    Words {
        measured: format!(
            "{speed}, {} duplex, {}",
            duplex.unwrap_or("unknown"),
            if up { "up" } else { "down" }
        ),
        expected: "up, full duplex".into(),
        why: why.into(),
        source: source::IEEE_8023.into(),
        fix: String::new(),
    }
}
