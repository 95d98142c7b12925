//! The reader against a fixture tree (tests/fixtures/doctor/host1) and the rules on
//! facts built from it and by hand.

use std::path::PathBuf;
use std::time::Duration;

use super::facts::{snapshot_at, up_interfaces_at, Roots};
use super::*;

fn roots() -> Roots {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor/host1");
    Roots {
        proc_sys: base.join("proc_sys"),
        sys_class_net: base.join("sys_class_net"),
        proc_net: base.join("proc_net"),
    }
}

fn host(ifaces: &[&str]) -> HostFacts {
    let names: Vec<String> = ifaces.iter().map(|s| (*s).to_string()).collect();
    snapshot_at(&roots(), &names)
}

fn find<'a>(fs: &'a [Finding], id: &str, subject: &str) -> &'a Finding {
    fs.iter()
        .find(|f| f.id == id && f.subject == subject)
        .unwrap_or_else(|| panic!("no finding {id} for {subject} in {fs:#?}"))
}

fn rac() -> Options {
    Options {
        profile: Profile::Rac,
        bdp: None,
        evidence: None,
    }
}

#[test]
fn lists_up_non_loopback_interfaces() {
    // eth3 is down (flags 0x1002), lo is loopback.
    assert_eq!(
        up_interfaces_at(&roots().sys_class_net),
        ["bond0", "eth0", "eth1", "eth2", "eth2.100"]
    );
}

#[test]
fn reads_sysctls_counters_and_interface_facts() {
    let f = host(&["bond0", "eth2.100"]);
    assert_eq!(f.sysctls["net.core.wmem_default"], "131072");
    assert_eq!(f.sysctls["net.ipv4.tcp_rmem"], "4096 87380 6291456");
    let snmp = f.snmp.expect("snmp");
    // v4 + v6 summed: ReasmFails 12 + 2, Udp InErrors 21 + 5, RcvbufErrors 20 + 4.
    assert_eq!(snmp.ip_reasm_fails, 14);
    assert_eq!(snmp.ip_reasm_timeout, 5);
    assert_eq!(snmp.udp_in_errors, 26);
    assert_eq!(snmp.udp_rcvbuf_errors, 24);
    assert_eq!(snmp.tcp_retrans_segs, 33);
    let bond = &f.ifaces[0];
    assert_eq!(
        bond.info.members,
        [("eth0".into(), 9000), ("eth1".into(), 1500)]
    );
    assert_eq!(bond.rp_filter, Some(1));
    assert_eq!(bond.counters.map(|c| c.rx_dropped), Some(7));
    let vlan = &f.ifaces[1];
    assert_eq!(vlan.info.kind, "vlan");
    assert_eq!(vlan.info.parent, Some(("eth2".into(), 1500)));
    assert_eq!(vlan.rp_filter, Some(2));
}

#[test]
fn missing_files_become_skips_with_the_reason() {
    let mut r = roots();
    r.proc_sys = r.proc_sys.join("nonexistent");
    let f = snapshot_at(&r, &["eth0".into(), "eth9".into()]);
    // The facts say which file was missing, typed.
    let rmem = r.proc_sys.join("net/core/rmem_max").display().to_string();
    assert_eq!(
        f.unreadable.get("net.core.rmem_max"),
        Some(&ReadError::NotFound { path: rmem })
    );
    let Some(ReadError::NotFound { path }) = f.unreadable.get("iface.eth9") else {
        panic!("{:?}", f.unreadable)
    };
    assert!(path.contains("eth9"), "{path}");
    let out = check_host(&f, &rac());
    let s = find(&out, "sysctl.net.core.rmem_max", "net.core.rmem_max");
    assert_eq!(s.status, Status::Skip);
    let Check::Skipped {
        why: SkipReason::SysctlUnreadable { error },
        ..
    } = &s.check
    else {
        panic!("{s:?}")
    };
    assert!(matches!(error, ReadError::NotFound { .. }), "{error:?}");
    let s = find(&out, "iface.read", "eth9");
    assert!(
        matches!(
            &s.check,
            Check::Skipped {
                why: SkipReason::IfaceUnreadable {
                    error: ReadError::NotFound { .. }
                },
                ..
            }
        ),
        "{s:?}"
    );
    assert_eq!(
        find(&out, "iface.rp_filter", "net.ipv4.conf.all.rp_filter").status,
        Status::Skip
    );
}

#[test]
fn rac_profile_flags_exactly_the_planted_problems() {
    let out = check_host(&host(&["bond0", "eth2.100"]), &rac());
    let fails: Vec<(&str, &str)> = out
        .iter()
        .filter(|f| f.status == Status::Fail)
        .map(|f| (f.id.as_str(), f.subject.as_str()))
        .collect();
    assert_eq!(
        fails,
        [
            ("iface.bond_member_mtu", "bond0/eth1"),
            ("iface.vlan_parent_mtu", "eth2.100/eth2"),
            ("iface.rp_filter", "bond0"),
            ("sysctl.net.core.wmem_default", "net.core.wmem_default"),
        ]
    );
    let w = find(
        &out,
        "sysctl.net.core.wmem_default",
        "net.core.wmem_default",
    );
    assert_eq!(
        w.check,
        Check::Minimum {
            of: MinimumOf::WmemDefault,
            value: 131_072,
            min: 262_144
        }
    );
    assert_eq!(
        w.remedy,
        Some(Fix::sysctl("net.core.wmem_default", "262144"))
    );
    assert_eq!(
        find(&out, "iface.bond_member_mtu", "bond0/eth1").remedy,
        Some(Fix::SetMtu {
            iface: "eth1".into(),
            mtu: 9000,
            scope: MtuScope::Iface
        })
    );
    // Passing and skipped findings carry no fix.
    assert!(out
        .iter()
        .filter(|f| matches!(f.status, Status::Pass | Status::Skip))
        .all(|f| f.remedy.is_none()));
}

#[test]
fn generic_profile_turns_minimums_into_warnings() {
    let opts = Options {
        profile: Profile::Generic,
        bdp: None,
        evidence: None,
    };
    let out = check_host(&host(&["eth0"]), &opts);
    assert_eq!(
        find(
            &out,
            "sysctl.net.core.wmem_default",
            "net.core.wmem_default"
        )
        .status,
        Status::Warn
    );
    assert_eq!(find(&out, "iface.mtu", "eth0").status, Status::Pass);
}

#[test]
fn rp_filter_strict_is_warn_with_one_nic_and_fail_with_two() {
    let mut one = host(&["eth0"]);
    one.sysctls
        .insert("net.ipv4.conf.all.rp_filter".into(), "1".into());
    assert_eq!(
        find(&check_host(&one, &rac()), "iface.rp_filter", "eth0").status,
        Status::Warn
    );
    let mut two = host(&["eth0", "eth1"]);
    two.sysctls
        .insert("net.ipv4.conf.all.rp_filter".into(), "1".into());
    let out = check_host(&two, &rac());
    let f = find(&out, "iface.rp_filter", "eth1");
    assert_eq!(f.status, Status::Fail);
    assert_eq!(
        f.check,
        Check::RpFilter {
            effective: 1,
            all: 1,
            own: 0,
            interfaces: 2
        }
    );
    // Loose mode on `all` first (it wins over the interface's), then the interface.
    let Some(Fix::Sysctl { set }) = &f.remedy else {
        panic!("{f:?}")
    };
    let names: Vec<&str> = set.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "net.ipv4.conf.all.rp_filter",
            "net.ipv4.conf.eth1.rp_filter"
        ]
    );
    // Loose mode (2) is what MOS 1286796.1 asks for.
    two.sysctls
        .insert("net.ipv4.conf.all.rp_filter".into(), "2".into());
    assert_eq!(
        find(&check_host(&two, &rac()), "iface.rp_filter", "eth1").status,
        Status::Pass
    );
}

#[test]
fn tcp_buffer_maximum_is_compared_with_the_bdp() {
    let f = host(&["eth0"]);
    let with = |bps: f64, ms: u64| Options {
        profile: Profile::Rac,
        bdp: Some(Bdp {
            bits_per_sec: bps,
            rtt: Duration::from_millis(ms),
            rate_from: RateFrom::Given,
            rtt_from: RttFrom::Given,
        }),
        evidence: None,
    };
    // 10 Gbit/s x 1 ms = 1.25 MB: both maxima (6 MiB, 4 MiB) hold it.
    let out = check_host(&f, &with(10e9, 1));
    assert_eq!(
        find(&out, "sysctl.net.ipv4.tcp_rmem", "net.ipv4.tcp_rmem").status,
        Status::Pass
    );
    // 10 Gbit/s x 4 ms = 5 MB: tcp_rmem (6291456) holds it, tcp_wmem (4194304) not.
    let out = check_host(&f, &with(10e9, 4));
    assert_eq!(
        find(&out, "sysctl.net.ipv4.tcp_rmem", "net.ipv4.tcp_rmem").status,
        Status::Pass
    );
    let w = find(&out, "sysctl.net.ipv4.tcp_wmem", "net.ipv4.tcp_wmem");
    assert_eq!(w.status, Status::Fail);
    assert_eq!(
        w.remedy,
        Some(Fix::sysctl("net.ipv4.tcp_wmem", "4096 16384 5000000"))
    );
    let Check::TcpMax { values, need, .. } = &w.check else {
        panic!("{w:?}")
    };
    assert_eq!(
        (*values, *need),
        ([4096, 16384, 4_194_304], Some(5_000_000))
    );
    // Without figures the check says what it needs.
    let out = check_host(&f, &rac());
    let s = find(&out, "sysctl.net.ipv4.tcp_rmem", "net.ipv4.tcp_rmem");
    assert_eq!(s.status, Status::Skip);
    assert_eq!(
        s.check,
        Check::Skipped {
            read: Some("4096 87380 6291456".into()),
            why: SkipReason::NoBdp { max: 6_291_456 }
        }
    );
}

#[test]
fn counters_warn_only_when_they_grow_during_the_sample() {
    let mut f = host(&["eth0"]);
    let out = check_host(&f, &rac());
    let r = find(&out, "counter.ip.reasmfails", "Ip ReasmFails");
    assert_eq!(r.status, Status::Pass);
    assert!(matches!(r.check, Check::Counter { total: 14, .. }), "{r:?}");
    f.snmp_delta = Some(mtuperf_proto::host::SnmpCounters {
        udp_rcvbuf_errors: 5,
        ..Default::default()
    });
    f.sample_ms = 500;
    let out = check_host(&f, &rac());
    let r = find(&out, "counter.udp.rcvbuferrors", "Udp RcvbufErrors");
    assert_eq!(r.status, Status::Warn);
    assert_eq!(
        r.check,
        Check::Counter {
            counter: Counter::UdpRcvbufErrors,
            total: 24,
            delta: Some(5),
            sample_ms: 500
        }
    );
    assert_eq!(r.remedy, Some(Fix::Investigate));
    assert_eq!(
        find(&out, "counter.ip.reasmfails", "Ip ReasmFails").status,
        Status::Pass
    );
}

#[test]
fn cross_check_flags_mtu_mismatch_and_differing_buffers() {
    let a = host(&["eth0"]);
    let mut b = host(&["eth1"]);
    b.hostname = "node2".into();
    b.sysctls
        .insert("net.core.rmem_max".into(), "8388608".into());
    let out = cross::compare(&a, &b, Profile::Rac);
    let m = find(&out, "cross.mtu", "eth0 <-> node2:eth1");
    assert_eq!(m.status, Status::Fail);
    assert_eq!(
        m.check,
        Check::CrossMtu {
            local: 9000,
            peer: 1500
        }
    );
    // Toward the expected 9000, as the peer's own iface.mtu finding says: raise the
    // peer, never lower this host (issue 29: doctor said both).
    assert_eq!(
        m.remedy,
        Some(Fix::SetMtu {
            iface: "eth1".into(),
            mtu: 9000,
            scope: MtuScope::Peer {
                peer: "node2".into()
            }
        })
    );
    assert_eq!(
        find(&out, "cross.net.core.rmem_max", "net.core.rmem_max").status,
        Status::Warn
    );
    assert_eq!(
        find(&out, "cross.net.core.wmem_max", "net.core.wmem_max").status,
        Status::Pass
    );
    assert_eq!(worst(&out), Status::Fail);
}

/// Every MTU fix doctor gives points the same way: toward the network's expected MTU.
#[test]
fn mtu_fixes_all_point_toward_the_expected_mtu() {
    use super::cross::target_mtu;
    // (local, peer, profile, target)
    let cases = [
        (9000, 1500, Profile::Rac, 9000),
        (1500, 9000, Profile::Rac, 9000),
        (1500, 1500, Profile::Rac, 9000),
        (1500, 4470, Profile::Generic, 4470),
        (9216, 9000, Profile::Rac, 9216),
    ];
    for (l, p, profile, want) in cases {
        assert_eq!(target_mtu(l, p, profile), want, "{l} {p} {profile:?}");
    }
    // The peer's own MTU finding and the cross-node finding name the same change.
    let a = host(&["eth0"]);
    let mut b = host(&["eth1"]);
    b.hostname = "node2".into();
    let own = check_host(&b, &rac());
    let own = find(&own, "iface.mtu", "eth1");
    let cross = super::cross::compare(&a, &b, Profile::Rac);
    let cross = find(&cross, "cross.mtu", "eth0 <-> node2:eth1");
    let sets = |f: &Finding| match &f.remedy {
        Some(Fix::SetMtu { iface, mtu, .. }) => Some((iface.clone(), *mtu)),
        _ => None,
    };
    assert_eq!(sets(own), Some(("eth1".into(), 9000)), "{own:?}");
    assert_eq!(sets(cross), Some(("eth1".into(), 9000)), "{cross:?}");
    // Equal MTUs below 9000 pass here: each end's own iface.mtu finding raises it.
    let mut c = host(&["eth1"]);
    c.hostname = "node3".into();
    let both = super::cross::compare(&c, &b, Profile::Rac);
    assert_eq!(
        both.iter().find(|f| f.id == "cross.mtu").unwrap().status,
        Status::Pass
    );
    let generic = super::cross::compare(&a, &b, Profile::Generic);
    let g = find(&generic, "cross.mtu", "eth0 <-> node2:eth1");
    assert_eq!(sets(g), Some(("eth1".into(), 9000)), "{g:?}");
}

/// A stored run's verdict: the agent's receive window held the client back 71% of
/// the time, capped by its tcp_rmem.
pub(crate) fn window_verdict() -> crate::stream::verdict::LimitVerdict {
    use crate::stream::verdict::{LimitCause, LimitVerdict};
    use crate::stream::End;
    LimitVerdict {
        sender: End::Client,
        receiver: End::Agent,
        cause: LimitCause::ReceiveWindow,
        share: Some(0.71),
        cpu: None,
        cpu_because: None,
        shares: crate::stream::limits::LimitShares::default(),
        min_rtt_us: Some(100),
        receiver_buffer: Some(131_072),
        sender_buffer: Some(131_072),
        conns: 1,
        link_bps: None,
        link_bdp_bytes: None,
        needed: None,
        delivery_rate_bps: None,
        goodput_bps: None,
        sysctl: Some("net.ipv4.tcp_rmem".into()),
        sysctl_end: Some(End::Agent),
        evidence: None,
        window_allows_bps: None,
        nominal_link_bps: None,
        fixes: Vec::new(),
    }
}

#[test]
fn a_stream_run_held_back_by_the_window_is_evidence() {
    use crate::doctor::StreamEvidence;
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum LimitCause {
        ReceiveWindow,
        SendBuffer,
    }
    let f = host(&["eth0"]);
    let ev = |cause| StreamEvidence {
        run_id: 12,
        target: "198.18.1.2:7878".into(),
        sysctl: match cause {
            LimitCause::ReceiveWindow => "net.ipv4.tcp_rmem",
            LimitCause::SendBuffer => "net.ipv4.tcp_wmem",
        }
        .into(),
        verdict: window_verdict(),
    };
    // (bdp in ms at 10 Gbit/s, evidence, rmem status, wmem status)
    let cases = [
        (None, None, Status::Skip, Status::Skip),
        (
            None,
            Some(LimitCause::ReceiveWindow),
            Status::Warn,
            Status::Skip,
        ),
        (
            None,
            Some(LimitCause::SendBuffer),
            Status::Skip,
            Status::Warn,
        ),
        (
            Some(1),
            Some(LimitCause::ReceiveWindow),
            Status::Warn,
            Status::Pass,
        ),
        (Some(1), None, Status::Pass, Status::Pass),
        (
            Some(4),
            Some(LimitCause::ReceiveWindow),
            Status::Warn,
            Status::Fail,
        ),
    ];
    for (ms, cause, rmem, wmem) in cases {
        let opts = Options {
            profile: Profile::Rac,
            bdp: ms.map(|ms| Bdp {
                bits_per_sec: 10e9,
                rtt: Duration::from_millis(ms),
                rate_from: RateFrom::Given,
                rtt_from: RttFrom::Given,
            }),
            evidence: cause.map(ev),
        };
        let out = check_host(&f, &opts);
        let r = find(&out, "sysctl.net.ipv4.tcp_rmem", "net.ipv4.tcp_rmem");
        let w = find(&out, "sysctl.net.ipv4.tcp_wmem", "net.ipv4.tcp_wmem");
        assert_eq!((r.status, w.status), (rmem, wmem), "{ms:?} {cause:?}");
        let evidence = match &r.check {
            Check::TcpMax { evidence, .. } => evidence.as_ref(),
            _ => None,
        };
        assert_eq!(
            evidence.map(|e| e.run_id),
            (cause == Some(LimitCause::ReceiveWindow)).then_some(12),
            "{r:?}"
        );
    }
}

/// An interface of `kind` that says it runs at `mbps`.
fn link(name: &str, kind: &str, mbps: u32) -> IfaceFacts {
    IfaceFacts {
        info: mtuperf_proto::host::IfaceInfo {
            name: name.into(),
            mtu: 9000,
            kind: kind.into(),
            speed_mbps: Some(mbps),
            ..Default::default()
        },
        up: true,
        pause: None,
        counters: None,
        counters_delta: None,
        rp_filter: None,
        steering: None,
    }
}

/// (what, interfaces, --bandwidth, the BDP's rate and where it came from)
type BdpCase = (
    &'static str,
    Vec<IfaceFacts>,
    Option<f64>,
    Option<(f64, RateFrom)>,
);

/// Issue 29: a veth's "10000 Mb/s" is no rate to size buffers by (nor to take a
/// percentage of). The BDP comes from the slowest real link, never a virtual one;
/// with only virtual links and no --bandwidth there is none (no buffer advice from
/// an invented figure); --bandwidth always wins.
#[test]
fn the_bdp_is_sized_by_real_links_only() {
    let check = |bandwidth: Option<f64>| run::Check {
        profile: Profile::Rac,
        sample: Duration::ZERO,
        ifaces: Vec::new(),
        selection: String::new(),
        bandwidth,
        rtt: None,
    };
    let host = |ifaces: Vec<IfaceFacts>| HostFacts {
        ifaces,
        ..HostFacts::default()
    };
    let rtt = Some(Duration::from_millis(1));
    let link_speed = |iface: &str| RateFrom::LinkSpeed {
        iface: iface.into(),
    };
    let cases: Vec<BdpCase> = vec![
        (
            "a veth at 10000 beside a real 1000 NIC: the NIC",
            vec![link("veth0", "veth", 10_000), link("eth1", "ether", 1_000)],
            None,
            Some((1e9, link_speed("eth1"))),
        ),
        (
            "a veth alone: no BDP",
            vec![link("veth0", "veth", 10_000)],
            None,
            None,
        ),
        (
            "a bridge and loopback: no BDP",
            vec![
                link("br0", "bridge", 10_000),
                link("lo", "loopback", 100_000),
            ],
            None,
            None,
        ),
        (
            "--bandwidth on a veth: the flag's figure",
            vec![link("veth0", "veth", 10_000)],
            Some(25e9),
            Some((25e9, RateFrom::Given)),
        ),
        (
            "the slowest of two real links",
            vec![link("bond0", "bond", 20_000), link("eth1", "ether", 10_000)],
            None,
            Some((10e9, link_speed("eth1"))),
        ),
    ];
    for (what, ifaces, bw, want) in cases {
        let got = run::choose_bdp(&check(bw), &host(ifaces), rtt)
            .map(|b| (b.bits_per_sec, b.rate_from, b.rtt_from));
        let want = want.map(|(b, from)| (b, from, RttFrom::ControlRoundTrip));
        assert_eq!(got, want, "{what}");
    }
    // No round trip, no BDP, whatever the link.
    let real = host(vec![link("eth1", "ether", 1_000)]);
    assert_eq!(run::choose_bdp(&check(None), &real, None), None);
}
