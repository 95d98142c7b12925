//! rr in lab namespaces (root, iproute2, nft, tc): block accounting over real veth
//! links at MTU 1500 and 9000, IP fragments per block as the agent's counters see
//! them, and UDP loss against the loss the lab injects.

use crate::lab_support;

use lab_support::{text, TestLab, BIN};

const STD: &str = "198.18.1.2";
const JUMBO: &str = "198.18.2.2";

fn rr_json(lab: &TestLab, args: &[&str]) -> serde_json::Value {
    let out = lab.exec(
        "client",
        &[&[BIN, "--no-store", "rr"][..], args, &["--json"]].concat(),
    );
    assert!(out.status.success(), "rr {args:?}: {}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// IP fragments of one UDP datagram carrying `block` bytes after the 40-byte header,
/// at `mtu`: fragment payloads are multiples of 8 bytes of at most mtu - 20.
fn fragments(block: u64, mtu: u64) -> u64 {
    let udp = block + 40 + 8;
    let per = (mtu - 20) / 8 * 8;
    udp.div_ceil(per)
}

#[test]
fn fragment_arithmetic() {
    assert_eq!(fragments(8192, 1500), 6);
    assert_eq!(fragments(8192, 9000), 1);
    assert_eq!(fragments(1400, 1500), 1);
}

#[test]
fn lab_accounting_closes_and_fragments_show_in_counters() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "std",
        "--scenario",
        "jumbo",
        "--offload",
        "off",
    ]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    for (target, mtu) in [(STD, 1500u64), (JUMBO, 9000)] {
        for proto in ["udp", "tcp"] {
            let doc = rr_json(
                &lab,
                &[target, "--proto", proto, "--time", "1s", "--clients", "4"],
            );
            let s = &doc["steps"][0];
            let c = &s["result"]["client"]["counts"];
            let a = &s["result"]["agent"];
            let n = |v: &serde_json::Value| v.as_u64().unwrap();
            assert!(n(&c["blocks"]) > 100, "{target} {proto}: {c}");
            // The agent answers every request it receives.
            assert_eq!(a["requests"], a["responses"], "{target} {proto}");
            // Every request sent is answered in time (a block), counted lost (its
            // answer came late or never), or still unanswered at the end: exact,
            // whatever the network dropped.
            let unanswered = n(&s["result"]["client"]["unanswered"]);
            assert_eq!(
                n(&c["requests_sent"]),
                n(&c["blocks"]) + n(&c["lost"]) + unanswered,
                "{target} {proto}: {c}"
            );
            assert_eq!(c["duplicate"], 0);
            // Loss only where the kernel dropped something: at MTU 1500 an 8K block
            // is 6 fragments, and a lost one fails the whole reassembly (IpReasmFails,
            // e.g. past ipfrag_max_dist when answers interleave under load).
            // A request is missing when no answer to it ever came. Over UDP a request
            // counted lost is re-sent, and a block that comes for it later is `late`
            // (not a block): the lost ones not answered late are missing. Over TCP
            // nothing is re-sent and a block slower than the timeout is `late` and
            // still a block: every request counted lost is missing.
            let late = n(&c["late"]);
            let (missing, answered_late) = if proto == "udp" {
                (n(&c["lost"]).saturating_sub(late), late)
            } else {
                (n(&c["lost"]), 0)
            };
            let missing = missing + unanswered;
            let reasm_fails = n(&s["metrics"]["client"]["snmp"]["ip_reasm_fails"]);
            if proto == "tcp" || missing == 0 {
                assert_eq!(missing, 0, "{target} {proto}: {c}");
                // Nothing missing: the agent got every request sent, and every answer
                // it sent came back, in time (a block) or, over UDP, late. Under load
                // (a stall past the timeout) blocks alone are fewer than its answers.
                assert_eq!(c["requests_sent"], a["requests"], "{target} {proto}");
                assert_eq!(
                    n(&c["blocks"]) + answered_late,
                    n(&a["responses"]),
                    "{target} {proto}: {c} {a}"
                );
            } else {
                assert!(
                    reasm_fails > 0 && mtu == 1500,
                    "{target} {proto}: {missing} answers missing but the kernel counted {reasm_fails} reassembly failures"
                );
                assert!(
                    missing * 1000 < n(&c["requests_sent"]),
                    "{target}: loss above 0.1%: {c}"
                );
            }
            let agent = &s["metrics"]["agent"];
            assert_eq!(agent["mtu"].as_u64(), Some(mtu));
            if proto == "udp" {
                // The agent's host creates the fragments of every block it sends (the
                // requests fit one frame); other traffic in the namespace is nil.
                let want = fragments(8192, mtu) as f64;
                let got = agent["frag_creates_per_block"].as_f64().unwrap();
                let want = if want > 1.0 { want } else { 0.0 };
                assert!(
                    (got - want).abs() < 0.05,
                    "{target}: {got} fragments per block, want {want}"
                );
                let frames = s["metrics"]["client"]["frames_per_block"].as_f64().unwrap();
                let want_frames = 1.0 + fragments(8192, mtu) as f64;
                assert!(
                    (frames - want_frames).abs() < 0.05,
                    "{target}: {frames} frames per block"
                );
            }
        }
    }
}

/// The lab drops 5% of UDP datagrams at the input hook of each host, once per one-way
/// crossing. That hook sees datagrams after IP reassembly (measured: 8K blocks at MTU
/// 1500, 6 fragments each, lose the same share as at 9000), so a fragmented block is
/// dropped as one datagram. A transaction needs its request and its block to survive:
/// it is lost with probability 1 - 0.95^2 = 9.75% at both MTUs. rr counts loss per
/// request sent, so that is what it must report; the per-datagram loss derived back
/// from it must be the lab's 5% (± 2).
#[test]
fn udp_loss_matches_the_injected_loss() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "std",
        "--scenario",
        "jumbo",
        "--offload",
        "off",
        "--loss",
        "5",
    ]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    for target in [STD, JUMBO] {
        let doc = rr_json(
            &lab,
            &[
                target,
                "--time",
                "3s",
                "--clients",
                "16",
                "--timeout",
                "20ms",
            ],
        );
        let s = &doc["steps"][0];
        let c = &s["result"]["client"]["counts"];
        let sent = c["requests_sent"].as_u64().unwrap() as f64;
        let lost = c["lost"].as_u64().unwrap() as f64;
        assert!(sent > 2000.0, "{target}: too few requests {c}");
        assert!(
            c["blocks"].as_u64().unwrap() > 1000,
            "{target}: the test carried on"
        );
        let k = 2.0;
        let expect = 1.0 - 0.95f64.powf(k);
        let got = lost / sent;
        let reported = s["metrics"]["lost_pct"].as_f64().unwrap() / 100.0;
        assert!((reported - got).abs() < 1e-9);
        assert!(
            (got - expect).abs() < 0.03,
            "{target}: lost {got:.4} of requests, expected {expect:.4}"
        );
        let per_datagram = 1.0 - (1.0 - got).powf(1.0 / k);
        assert!(
            (per_datagram - 0.05).abs() < 0.02,
            "{target}: per-datagram loss {per_datagram:.4}"
        );
        // Nothing else goes wrong: no corrupt or foreign blocks.
        assert_eq!(c["invalid"], 0);
        assert_eq!(c["corrupt"], 0);
    }
}
