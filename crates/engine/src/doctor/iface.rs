//! Interface rules: MTU (and equal MTU on bond members and a VLAN's parent), link
//! speed and duplex, offloads, pause, and reverse-path filtering.

use super::finding::{finding, skip};
use super::{
    Check, Finding, Fix, HostFacts, IfaceFacts, MtuScope, Options, Profile, SkipReason, Status,
    SysctlSet,
};

/// The interconnect MTU the Oracle install guides describe (jumbo frames).
pub const RAC_MTU: u32 = 9000;

pub fn check(facts: &HostFacts, opts: &Options) -> Vec<Finding> {
    let mut out = Vec::new();
    for (key, error) in &facts.unreadable {
        if let Some(name) = key.strip_prefix("iface.") {
            out.push(skip(
                "iface.read",
                name,
                None,
                SkipReason::IfaceUnreadable {
                    error: error.clone(),
                },
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
    let mtu = f.info.mtu;
    let status = match profile {
        Profile::Rac if mtu < RAC_MTU => Status::Fail,
        _ => Status::Pass,
    };
    let fix = (profile == Profile::Rac).then(|| Fix::SetMtu {
        iface: name.clone(),
        mtu: RAC_MTU,
        scope: MtuScope::Interconnect,
    });
    finding("iface.mtu", name, status, Check::Mtu { mtu, profile }, fix)
}

/// Bond members and a VLAN's parent must carry the interface's MTU.
fn lower_mtu(f: &IfaceFacts) -> Vec<Finding> {
    let name = &f.info.name;
    let mtu = f.info.mtu;
    let raise = |iface: &str| {
        Some(Fix::SetMtu {
            iface: iface.into(),
            mtu,
            scope: MtuScope::Iface,
        })
    };
    let mut out = Vec::new();
    for (member, m) in &f.info.members {
        out.push(finding(
            "iface.bond_member_mtu",
            &format!("{name}/{member}"),
            if *m == mtu {
                Status::Pass
            } else {
                Status::Fail
            },
            Check::BondMemberMtu {
                member_mtu: *m,
                bond_mtu: mtu,
            },
            raise(member),
        ));
    }
    if let (Some((parent, m)), "vlan") = (&f.info.parent, f.info.kind.as_str()) {
        out.push(finding(
            "iface.vlan_parent_mtu",
            &format!("{name}/{parent}"),
            if *m >= mtu {
                Status::Pass
            } else {
                Status::Fail
            },
            Check::VlanParentMtu {
                parent_mtu: *m,
                vlan_mtu: mtu,
            },
            raise(parent),
        ));
    }
    out
}

fn link(f: &IfaceFacts) -> Finding {
    let name = &f.info.name;
    let check = Check::Link {
        speed_mbps: f.info.speed_mbps,
        duplex: f.info.duplex.clone(),
        up: f.up,
    };
    let iface = name.clone();
    let (status, fix) = if !f.up {
        (Status::Fail, Some(Fix::LinkUp { iface }))
    } else if f.info.duplex.as_deref() == Some("half") {
        (Status::Fail, Some(Fix::Autoneg { iface }))
    } else {
        // Virtual links (veth, bond without members up) report no speed: not a fault.
        (Status::Pass, None)
    };
    finding("iface.link", name, status, check, fix)
}

fn offloads(f: &IfaceFacts) -> Finding {
    let name = &f.info.name;
    let lro = f.info.offloads.lro == Some(true);
    finding(
        "iface.offloads",
        name,
        if lro { Status::Warn } else { Status::Pass },
        Check::Offloads {
            offloads: f.info.offloads,
        },
        Some(Fix::LroOff {
            iface: name.clone(),
        }),
    )
}

fn pause(f: &IfaceFacts) -> Finding {
    let name = &f.info.name;
    match f.pause {
        None => skip("iface.pause", name, None, SkipReason::NoPauseParameters),
        Some(pause) => finding(
            "iface.pause",
            name,
            Status::Pass,
            Check::Pause { pause },
            None,
        ),
    }
}

/// Effective rp_filter = max(all, interface). Strict (1) with several private NICs
/// drops replies arriving on the "other" NIC: FAIL. With one NIC it is harmless
/// until a second is added: WARN.
fn rp_filter(facts: &HostFacts) -> Vec<Finding> {
    const ALL: &str = "net.ipv4.conf.all.rp_filter";
    let read = facts.sysctls.get(ALL);
    let Some(all) = read.and_then(|v| v.parse::<u32>().ok()) else {
        let why = match (facts.unreadable.get(ALL), read) {
            (Some(error), _) => SkipReason::SysctlUnreadable {
                error: error.clone(),
            },
            (None, Some(v)) => SkipReason::Unparsable { value: v.clone() },
            (None, None) => SkipReason::SysctlNotRead,
        };
        return vec![skip("iface.rp_filter", ALL, None, why)];
    };
    let n = facts.ifaces.len();
    facts
        .ifaces
        .iter()
        .map(|f| {
            let name = &f.info.name;
            let own = f.rp_filter.unwrap_or(0);
            let effective = all.max(own);
            let status = match (effective, n) {
                (1, 1) => Status::Warn,
                (1, _) => Status::Fail,
                _ => Status::Pass,
            };
            let loose = |name: String| SysctlSet {
                name,
                value: "2".into(),
            };
            let mut set = Vec::new();
            if all == 1 {
                set.push(loose(ALL.into()));
            }
            set.push(loose(format!("net.ipv4.conf.{name}.rp_filter")));
            finding(
                "iface.rp_filter",
                name,
                status,
                Check::RpFilter {
                    effective,
                    all,
                    own,
                    interfaces: n,
                },
                Some(Fix::Sysctl { set }),
            )
        })
        .collect()
}
