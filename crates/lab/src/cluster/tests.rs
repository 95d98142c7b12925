//! Unit tests of the cluster's faults, topology and generated rules.
use std::collections::HashSet;

use super::{parse, Cluster, Fault};
use crate::build_cluster::{
    fault_inbound_rules, fault_loss_rules, fault_outbound_rules, proxy_ndp_entries,
};
use crate::error::LabError;
use crate::scenario::{Role, Topology};

fn specs(v: &[&str]) -> Vec<String> {
    v.iter().map(ToString::to_string).collect()
}

#[test]
fn faults_parse_in_every_documented_form() {
    let cases = [
        (
            "nic-mtu=n3:1:1500",
            Fault::NicMtu {
                node: 3,
                net: 1,
                mtu: 1500,
            },
        ),
        (
            "port-mtu=2:net2:1500",
            Fault::PortMtu {
                node: 2,
                net: 2,
                mtu: 1500,
            },
        ),
        (
            "routed=n4:1",
            Fault::Routed {
                node: 4,
                net: 1,
                mtu: 1500,
            },
        ),
        (
            "blackhole=n4:2:4000",
            Fault::Blackhole {
                node: 4,
                net: 2,
                mtu: 4000,
            },
        ),
        (
            "inbound=n3:1",
            Fault::Inbound {
                node: 3,
                net: 1,
                mtu: 1500,
            },
        ),
        (
            "outbound=n3:net2:4000",
            Fault::Outbound {
                node: 3,
                net: 2,
                mtu: 4000,
            },
        ),
        (
            "LOSS=n5:1:2.5",
            Fault::Loss {
                node: 5,
                net: 1,
                pct: 2.5,
            },
        ),
    ];
    for (text, want) in cases {
        let got: Fault = text.parse().unwrap();
        assert_eq!(got, want, "{text}");
        // The displayed spec parses back to the same fault.
        assert_eq!(got.to_string().parse::<Fault>().unwrap(), want, "{text}");
    }
}

#[test]
fn bad_faults_name_flag_value_allowed_and_hint() {
    let cases = [
        ("nic-mtu", "KIND=NODE:NET"),
        (
            "frob=n1:1",
            "nic-mtu, port-mtu, routed, blackhole, inbound, outbound, loss",
        ),
        ("nic-mtu=n1:1", "nic-mtu=NODE:NET:VALUE"),
        ("routed=n1:1:1500:9", "routed=NODE:NET[:MTU]"),
        ("nic-mtu=x:1:1500", "NODE as nI or I"),
        ("nic-mtu=n1:y:1500", "NET as netK or K"),
        ("nic-mtu=n1:1:9000", "an MTU from 1280 to 8999"),
        ("port-mtu=n1:1:576", "IPv6 needs at least 1280"),
        ("loss=n1:1:0", "more than 0 and at most 100"),
        ("loss=n1:1:101", "more than 0 and at most 100"),
    ];
    for (text, want) in cases {
        let err = text.parse::<Fault>().unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(
                err,
                LabError::BadFlag {
                    flag: "--fault",
                    ..
                }
            ),
            "{msg}"
        );
        assert!(err.is_usage(), "{msg}");
        assert!(msg.contains(want) && msg.contains(text), "{text}: {msg}");
    }
}

#[test]
fn sizes_and_fault_placement_are_checked() {
    let cases: &[(u32, u32, &[&str], &str)] = &[
        (1, 2, &[], "--nodes: allowed 2 to 64"),
        (65, 2, &[], "--nodes: allowed 2 to 64"),
        (300, 2, &[], "--nodes: allowed 2 to 64"),
        (4, 0, &[], "--nets: allowed 1 to 4"),
        (4, 5, &[], "--nets: allowed 1 to 4"),
        (4, 2, &["nic-mtu=n5:1:1500"], "a node from n1 to n4"),
        (4, 2, &["nic-mtu=n0:1:1500"], "a node from n1 to n4"),
        (4, 2, &["port-mtu=n1:3:1500"], "a network from 1 to 2"),
        (
            4,
            2,
            &["loss=n1:1:5", "loss=1:net1:6"],
            "clashes with --fault loss=n1:1:5",
        ),
        (
            4,
            2,
            &["routed=n1:1", "nic-mtu=n1:1:1500"],
            "clashes with --fault routed",
        ),
        (
            4,
            2,
            &["nic-mtu=n1:1:1500", "blackhole=n1:1"],
            "clashes with --fault nic-mtu",
        ),
        (
            4,
            2,
            &["outbound=n1:1", "routed=n1:1"],
            "clashes with --fault outbound",
        ),
    ];
    for (nodes, nets, faults, want) in cases {
        let msg = parse(*nodes, *nets, &specs(faults))
            .unwrap_err()
            .to_string();
        assert!(msg.contains(want), "{nodes} {nets} {faults:?}: {msg}");
    }
    // Different kinds on one spot, and one kind on different spots, are fine.
    let ok = [
        "nic-mtu=n1:1:1500",
        "port-mtu=n1:1:1500",
        "loss=n1:1:5",
        "routed=n2:1",
        "inbound=n1:1",
        "outbound=n1:1",
    ];
    assert_eq!(parse(4, 2, &specs(&ok)).unwrap().faults.len(), 6);
}

#[test]
fn topology_of_the_largest_cluster_has_valid_names_and_unique_addresses() {
    let faults = specs(&["routed=n64:4", "blackhole=n1:1"]);
    let c = parse(64, 4, &faults).unwrap();
    let t = Topology::cluster(&c);
    let count = |role| t.hosts.iter().filter(|(_, r)| *r == role).count();
    assert_eq!(
        (count(Role::Node), count(Role::Switch), count(Role::Router)),
        (64, 4, 2)
    );
    let mut per_host = HashSet::new();
    let mut addrs = HashSet::new();
    for i in t.ifaces() {
        assert!(i.name.len() <= 15, "{}", i.name);
        assert!(per_host.insert((i.host.clone(), i.name.clone())), "{i:?}");
        if t.hosts
            .iter()
            .any(|(h, r)| *h == i.host && *r == Role::Node)
        {
            assert!(
                addrs.insert(std::net::IpAddr::from(i.v4)) && addrs.insert(i.v6.into()),
                "{i:?}"
            );
            assert_eq!(i.v4.octets()[..2], [198, 19]);
            assert_eq!(i.v4_prefix, 24);
        }
    }
    assert_eq!(addrs.len(), 64 * 4 * 2);
    // Every possible host name is one `lab down` looks for.
    let all = Cluster::all_host_names();
    assert!(t.hosts.iter().all(|(h, _)| all.contains(h)));
}

#[test]
fn faults_set_the_mtus_they_name_and_nothing_else() {
    let faults = specs(&[
        "nic-mtu=n3:1:1500",
        "port-mtu=n4:2:2000",
        "routed=n2:2:4000",
    ]);
    let c = parse(5, 2, &faults).unwrap();
    let t = Topology::cluster(&c);
    let mtu = |host: &str, name: &str| {
        t.ifaces()
            .find(|i| i.host == host && i.name == name)
            .map(|i| i.mtu)
    };
    assert_eq!(mtu("n3", "net1"), Some(1500));
    assert_eq!(mtu("sw1", "n3"), Some(9000));
    assert_eq!(mtu("n4", "net2"), Some(9000));
    assert_eq!(mtu("sw2", "n4"), Some(2000));
    assert_eq!(mtu("n2", "net2"), Some(4000));
    assert_eq!(mtu("n2-net2-rt", "eth1"), Some(4000));
    assert_eq!(mtu("n2-net2-rt", "eth0"), Some(9000));
    assert_eq!(mtu("sw2", "n2"), Some(9000));
    let odd: Vec<String> = t
        .ifaces()
        .filter(|i| i.mtu != 9000)
        .map(|i| format!("{}:{}", i.host, i.name))
        .collect();
    assert_eq!(odd, ["n3:net1", "n2:net2", "n2-net2-rt:eth1", "sw2:n4"]);
}

#[test]
fn router_rules_and_loss_rules() {
    let c = parse(3, 1, &specs(&["blackhole=n2:1"])).unwrap();
    let entries: Vec<String> = proxy_ndp_entries(&c, 2, 1)
        .iter()
        .map(|(a, dev)| format!("{a} {dev}"))
        .collect();
    assert_eq!(
        entries,
        [
            "fd6d:7475:19:1::2 eth0",
            "fd6d:7475:19:1::1 eth1",
            "fd6d:7475:19:1::3 eth1"
        ]
    );
    let loss = fault_loss_rules("net2", 500);
    for want in [
        "iifname \"net2\" meta l4proto udp numgen random mod 10000 < 500 drop",
        "oifname \"net2\" icmp type { echo-request, echo-reply } numgen",
        "hook output",
    ] {
        assert!(loss.contains(want), "{want}: {loss}");
    }
    assert!(!loss.contains("tcp"), "{loss}");
    // Inbound drops: whole packets above the MTU on that NIC, before reassembly, in
    // prerouting only (outbound frames pass).
    let inbound = fault_inbound_rules("net1", 1500);
    for want in [
        "hook prerouting priority -500",
        "iifname \"net1\" meta length > 1500 counter drop",
    ] {
        assert!(inbound.contains(want), "{want}: {inbound}");
    }
    assert!(!inbound.contains("output"), "{inbound}");
    // Outbound drops: in the switch, at the ingress of the node's port (never in the
    // node's output or postrouting hook, whose drop fails the sender's sendmsg).
    let outbound = fault_outbound_rules("n3", 1500);
    for want in [
        "table netdev mtlab_fault_outbound",
        "chain n3 {",
        "type filter hook ingress device \"n3\" priority 0;",
        "meta length > 1500 counter drop",
    ] {
        assert!(outbound.contains(want), "{want}: {outbound}");
    }
    assert!(
        !outbound.contains("output") && !outbound.contains("postrouting"),
        "{outbound}"
    );
}

#[test]
fn a_full_mesh_needs_one_neighbour_entry_per_ordered_pair_and_network() {
    use crate::build_cluster::neighbours_needed;
    let c = |n, k| Cluster::new(n, k, Vec::new()).unwrap();
    assert_eq!(neighbours_needed(&c(2, 1)), 2);
    assert_eq!(neighbours_needed(&c(5, 2)), 40);
    // 64 nodes × 4 networks: far past the kernel's default gc_thresh3 of 1024.
    assert_eq!(neighbours_needed(&c(64, 4)), 16_128);
}

#[test]
fn fault_kinds_read_back_as_their_flag_names() {
    let names = [
        "nic-mtu",
        "port-mtu",
        "routed",
        "blackhole",
        "inbound",
        "outbound",
        "loss",
        "reasm",
    ];
    for (kind, name) in super::FaultKind::ALL.into_iter().zip(names) {
        assert_eq!(kind.to_string(), name);
        assert_eq!(name.parse::<super::FaultKind>(), Ok(kind));
        assert_eq!(name.to_uppercase().parse::<super::FaultKind>(), Ok(kind));
        let json = serde_json::to_string(&kind).unwrap();
        assert_eq!(json, format!("\"{name}\""));
        assert_eq!(
            serde_json::from_str::<super::FaultKind>(&json).unwrap(),
            kind
        );
    }
    let spec = "blackhole=n4:2:1500";
    let f = spec.parse::<Fault>().unwrap();
    assert_eq!(f.kind(), super::FaultKind::Blackhole);
    assert_eq!(f.to_string(), spec);
}

#[test]
fn an_unknown_fault_kind_is_refused_with_the_known_ones() {
    assert_eq!(
        "jitter".parse::<super::FaultKind>().unwrap_err(),
        "unknown fault kind \"jitter\"; one of nic-mtu, port-mtu, routed, blackhole, inbound, outbound, loss, reasm"
    );
    let msg = "jitter=n1:1:5".parse::<Fault>().unwrap_err().to_string();
    assert!(
        msg.contains("nic-mtu, port-mtu") && msg.contains("jitter"),
        "{msg}"
    );
}
