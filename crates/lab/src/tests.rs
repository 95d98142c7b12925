//! Unit tests of the topology data and of the generated rules (no privilege needed).
use std::collections::HashSet;

use crate::build::tbf_burst;
use crate::guard::unique_name;
use crate::rules::{blackhole_rules, loss_rules, loss_threshold};
use crate::scenario::Scenario;
use crate::scenario::{Role, Topology, CLIENT};
use crate::state::{netns_name, validate_name};

#[test]
fn scenario_names_round_trip() {
    for s in Scenario::ALL {
        assert_eq!(s.to_string().parse::<Scenario>().unwrap(), s);
    }
    assert_eq!("JUMBO".parse::<Scenario>().unwrap(), Scenario::Jumbo);
    let err = "huge".parse::<Scenario>().unwrap_err().to_string();
    assert!(
        err.contains("std, jumbo, routed, blackhole, mismatch, switchport, asym"),
        "{err}"
    );
}

#[test]
fn host_names_match_the_documented_ones() {
    let t = Topology::of(&Scenario::ALL);
    let names: Vec<&str> = t.hosts.iter().map(|(h, _)| h.as_str()).collect();
    assert_eq!(
        names,
        [
            "client",
            "std",
            "jumbo",
            "routed-router",
            "routed",
            "blackhole-router",
            "blackhole",
            "mismatch",
            "switchport-switch",
            "switchport",
            "asym-router",
            "asym"
        ]
    );
    let count = |role| t.hosts.iter().filter(|(_, r)| *r == role).count();
    assert_eq!((count(Role::Router), count(Role::Switch)), (3, 1));
}

#[test]
fn interfaces_are_valid_and_addresses_unique() {
    let t = Topology::of(&Scenario::ALL);
    let mut per_host = HashSet::new();
    let mut addrs = HashSet::new();
    for i in t.ifaces() {
        assert!(i.name.len() <= 15, "{}", i.name);
        assert!(per_host.insert((i.host.clone(), i.name.clone())), "{i:?}");
        assert!(
            addrs.insert(i.v4.to_string()) && addrs.insert(i.v6.to_string()),
            "{i:?}"
        );
        assert_eq!(i.v4.octets()[..2], [198, 18]);
        assert_eq!(i.v6.segments()[..2], [0xfd6d, 0x7475]);
    }
}

#[test]
fn mtus_and_addresses_per_scenario() {
    let t = Topology::of(&Scenario::ALL);
    let link = |s: Scenario| t.links.iter().filter(move |l| l.scenario == s);
    let mtus = |s: Scenario| link(s).map(|l| (l.a.mtu, l.b.mtu)).collect::<Vec<_>>();
    assert_eq!(mtus(Scenario::Std), [(1500, 1500)]);
    assert_eq!(mtus(Scenario::Jumbo), [(9000, 9000)]);
    assert_eq!(mtus(Scenario::Routed), [(9000, 9000), (1500, 1500)]);
    assert_eq!(mtus(Scenario::Blackhole), [(9000, 9000), (1500, 1500)]);
    assert_eq!(mtus(Scenario::Mismatch), [(9000, 1500)]);
    // Both NICs at 9000; the switch's port toward the server at 1500.
    assert_eq!(mtus(Scenario::Switchport), [(9000, 9000), (1500, 9000)]);
    assert_eq!(mtus(Scenario::Asym), [(9000, 9000), (9000, 9000)]);
    let sw = link(Scenario::Switchport).nth(1).unwrap();
    assert_eq!(
        (sw.a.host.as_str(), sw.b.v4.to_string().as_str()),
        ("switchport-switch", "198.18.6.2")
    );
    let std = link(Scenario::Std).next().unwrap();
    assert_eq!((std.a.host.as_str(), std.a.name.as_str()), (CLIENT, "std0"));
    assert_eq!(std.b.v4.to_string(), "198.18.1.2");
    assert_eq!(std.b.v6.to_string(), "fd6d:7475:0:1::2");
    let far = link(Scenario::Routed).nth(1).unwrap();
    assert_eq!(far.a.v4.to_string(), "198.18.13.254");
    assert_eq!(far.b.v6.to_string(), "fd6d:7475:0:13::2");
}

#[test]
fn routed_scenarios_route_both_ways_through_the_router() {
    let t = Topology::of(&[Scenario::Routed]);
    let routes: Vec<String> = t
        .routes
        .iter()
        .map(|r| format!("{} {} via {}", r.host, r.dest, r.via))
        .collect();
    assert_eq!(
        routes,
        [
            "client 198.18.13.0/24 via 198.18.3.254",
            "client fd6d:7475:0:13::/64 via fd6d:7475:0:3::254",
            "routed 198.18.3.0/24 via 198.18.13.254",
            "routed fd6d:7475:0:3::/64 via fd6d:7475:0:13::254",
        ]
    );
    assert!(
        Topology::of(&[Scenario::Std, Scenario::Mismatch, Scenario::Switchport])
            .routes
            .is_empty()
    );
    // The asym router's way back to the client is the one with MTU 1500.
    assert_eq!(
        Scenario::Asym.mtu_routes(),
        [
            ("asym-router", "198.18.7.0/24".to_string(), "eth0", 0, 1500),
            (
                "asym-router",
                "fd6d:7475:0:7::/64".to_string(),
                "eth0",
                256,
                1500
            ),
        ]
    );
    assert!(Scenario::Routed.mtu_routes().is_empty());
}

#[test]
fn names_are_checked_and_namespaced() {
    assert_eq!(
        netns_name("default", "routed-router"),
        "mtlab-default-routed-router"
    );
    for ok in ["default", "t123-4", "a_b"] {
        assert!(validate_name(ok).is_ok(), "{ok}");
    }
    for bad in ["", "a/b", "../x", "a b", &"x".repeat(33)] {
        assert!(validate_name(bad).is_err(), "{bad}");
    }
    let (a, b) = (unique_name(), unique_name());
    assert_ne!(a, b);
    assert!(validate_name(&a).is_ok());
}

#[test]
fn generated_rules_and_shaping() {
    let bh = blackhole_rules();
    assert!(
        bh.contains("hook output") && bh.contains("hook forward"),
        "{bh}"
    );
    assert!(bh.contains("icmp code frag-needed drop") && bh.contains("packet-too-big drop"));
    assert_eq!(loss_threshold(5.0), 500);
    assert_eq!(loss_threshold(0.01), 1);
    assert_eq!(loss_threshold(100.0), 10_000);
    let loss = loss_rules(500);
    assert!(
        loss.contains("meta l4proto udp numgen random mod 10000 < 500 counter drop"),
        "{loss}"
    );
    assert!(!loss.contains("tcp"), "{loss}");
    assert_eq!(tbf_burst(1_000_000_000), 125_000);
    assert_eq!(tbf_burst(10_000_000), 32 * 1024);
    assert_eq!(tbf_burst(900_000_000_000_000), 16 * 1024 * 1024);
}
