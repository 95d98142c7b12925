//! `stream --udp --udp-io plain|batch|gso` in lab namespaces, offloads on and off.
//! Whatever the I/O mode, the counts are exact (sent = received + lost, no copies)
//! and agree with each namespace's own kernel counters: Udp OutDatagrams is the
//! sender's sends (a GSO send counts once), Udp InDatagrams the receiver's receives
//! (a GRO receive counts once), Udp RcvbufErrors the receiving socket's own drop
//! count, and the frames the interfaces carried are the sends (less the control
//! connection's TCP segments). Datagrams above the path MTU leave unsegmented, as IP
//! fragments, whatever the mode.

use mtuperf_lab::{check_environment, LabGuard, LabOptions, Scenario};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

fn lab(offload: bool, scenarios: Vec<Scenario>) -> Option<LabGuard> {
    if let Err(e) = check_environment() {
        eprintln!("skipped: {e}");
        return None;
    }
    std::env::set_var("MTUPERF_BIN", BIN);
    let mut lab = LabGuard::up(LabOptions {
        offload,
        scenarios,
        ..LabOptions::default()
    })
    .unwrap();
    lab.serve(&[]).unwrap();
    Some(lab)
}

fn run(lab: &LabGuard, args: &[&str]) -> Value {
    let argv: Vec<String> = [&[BIN, "--no-store", "stream"][..], args, &["--json"]]
        .concat()
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    let out = lab.exec_command("client", &argv).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// An end's kernel counter over the run, from its before/after snapshots.
fn delta(end: &Value, group: &str, name: &str) -> u64 {
    u(&end["after"][group][name]) - u(&end["before"][group][name])
}

/// The modes each end is expected to use for datagrams that fit the path MTU.
fn modes(io: &str) -> (&'static str, &'static str) {
    match io {
        "plain" => ("plain", "plain"),
        "batch" => ("batch", "batch"),
        _ => ("gso", "gro"),
    }
}

/// The checks every run passes, whatever its mode: exact counts, and the kernel's
/// counters of both namespaces say the same.
fn agrees_with_the_kernel(what: &str, r: &Value) -> Value {
    let d = r["metrics"]["directions"][0].clone();
    let (client, agent) = (&r["result"]["client"], &r["result"]["agent"]);
    let (sent, recv, lost) = (u(&d["sent"]), u(&d["received"]), u(&d["lost"]));
    eprintln!("{what}: {d}");
    assert!(sent > 100, "{what}: {d}");
    assert_eq!(d["exact"], true, "{what}");
    assert_eq!(sent, recv + lost, "{what}");
    assert_eq!(d["duplicated"], 0, "{what}");
    let io = &d["io"];
    // Udp OutDatagrams counts sends (a GSO message once), InDatagrams receives (a
    // GRO bundle once): the only UDP in these namespaces is ours.
    assert_eq!(
        delta(client, "snmp", "udp_out_datagrams"),
        u(&io["sender"]["messages"]),
        "{what}"
    );
    assert_eq!(
        delta(agent, "snmp", "udp_in_datagrams"),
        u(&io["receiver"]["messages"]),
        "{what}"
    );
    // The receiving socket's own drop count is the namespace's RcvbufErrors.
    assert_eq!(
        delta(agent, "snmp", "udp_rcvbuf_errors"),
        u(&d["socket_drops"]),
        "{what}"
    );
    let causes = &d["loss_causes"];
    if causes["datagrams_per_drop"].is_null() {
        // Each drop was one datagram: on a clean path every lost datagram is one
        // the socket dropped.
        assert_eq!(u(&causes["socket_buffer"]), lost, "{what}: {d}");
        assert_eq!(u(&d["socket_drops"]), lost, "{what}: {d}");
        assert_eq!(causes["never_arrived"], 0, "{what}: {d}");
    } else {
        let drops = u(&d["socket_drops"]);
        let sb = u(&causes["socket_buffer"]);
        assert!(sb >= drops.min(lost) && sb <= lost, "{what}: {d}");
    }
    // What the client's interface sent arrived at the agent's; less the control
    // connection's TCP segments (and a stray ARP), those frames are the datagrams'.
    let tx = delta(client, "iface", "tx_packets") - delta(client, "snmp", "tcp_out_segs");
    let rx = delta(agent, "iface", "rx_packets") - delta(agent, "snmp", "tcp_in_segs");
    assert!(tx.abs_diff(rx) <= 4, "{what}: tx {tx} rx {rx}");
    d
}

fn every_io_mode_counts_exactly(offload: bool) {
    let Some(lab) = lab(offload, vec![Scenario::Std, Scenario::Jumbo]) else {
        return;
    };
    for (sc, block) in [
        (Scenario::Std, "1472"),
        (Scenario::Jumbo, "8K"),
        (Scenario::Jumbo, "1472"),
    ] {
        let target = lab.target(sc).unwrap().to_string();
        for io in ["plain", "batch", "gso"] {
            let what = format!("{sc:?} {block} B --udp-io {io} offload {offload}");
            let doc = run(
                &lab,
                &[
                    &target, "--udp", "--block", block, "--rate", "300M", "--time", "1s",
                    "--udp-io", io,
                ],
            );
            let r = &doc["runs"][0];
            let d = agrees_with_the_kernel(&what, r);
            let (snd, rcv) = modes(io);
            assert_eq!(d["io"]["sender"]["mode"], snd, "{what}");
            assert_eq!(d["io"]["receiver"]["mode"], rcv, "{what}");
            assert_eq!(d["io"]["sender"]["fallback"], Value::Null, "{what}");
            assert_eq!(d["fragments_per_datagram"].as_f64(), Some(0.0), "{what}");
            let sends = u(&d["io"]["sender"]["messages"]);
            let sent = u(&d["sent"]);
            // The datagrams' frames on the client's interface: one per datagram
            // where the interface cuts GSO sends (offloads off), one per send where
            // it carries them whole (veth with offloads on).
            let client = &r["result"]["client"];
            let frames =
                delta(client, "iface", "tx_packets") - delta(client, "snmp", "tcp_out_segs");
            let want = if offload { sends } else { sent };
            assert!(
                frames.abs_diff(want) <= 4,
                "{what}: {frames} frames, want {want}"
            );
            if io == "gso" {
                // 300 Mbit/s of 1472 B is a slot every 39 µs, 6 in a 250 µs batch;
                // 8 KiB every 218 µs, one a batch.
                if block == "1472" {
                    assert!(sends * 3 < sent, "{what}: {sends} sends for {sent}");
                }
                if offload && block == "1472" {
                    // veth carries the GSO sends whole and the receiver takes each
                    // as one GRO receive: split back into its datagrams.
                    let got = u(&d["io"]["receiver"]["messages"]);
                    assert!(got * 3 < u(&d["received"]), "{what}: {got} receives");
                    assert_eq!(
                        got + u(&d["socket_drops"]),
                        sends,
                        "{what}: a receive or a drop a send"
                    );
                    assert!(u(&d["io"]["receiver"]["segments"]) > 1, "{what}");
                }
            } else {
                assert_eq!(sends, sent, "{what}: one datagram a send");
            }
        }
    }
}

#[test]
fn every_io_mode_counts_exactly_and_agrees_with_the_kernel_offloads_off() {
    every_io_mode_counts_exactly(false);
}

#[test]
fn every_io_mode_counts_exactly_and_agrees_with_the_kernel_offloads_on() {
    every_io_mode_counts_exactly(true);
}

#[test]
fn datagrams_above_the_mtu_leave_unsegmented_as_fragments_in_every_mode() {
    let Some(lab) = lab(false, vec![Scenario::Std]) else {
        return;
    };
    let target = lab.target(Scenario::Std).unwrap().to_string();
    for io in ["plain", "batch", "gso"] {
        let what = format!("8K over 1500 --udp-io {io}");
        let doc = run(
            &lab,
            &[
                &target, "--udp", "--block", "8K", "--rate", "200M", "--time", "1s", "--udp-io", io,
            ],
        );
        let r = &doc["runs"][0];
        let d = agrees_with_the_kernel(&what, r);
        let sent = u(&d["sent"]);
        let sender = &d["io"]["sender"];
        // No GSO for datagrams the kernel must fragment: one send per datagram.
        assert_eq!(u(&sender["messages"]), sent, "{what}");
        if io == "gso" {
            assert_eq!(sender["mode"], "batch", "{what}");
            assert_eq!(
                sender["fallback"],
                serde_json::json!({"reason": "above_mtu", "block": 8192, "mtu": 1500}),
                "{what}"
            );
        } else {
            assert_eq!(sender["mode"], io, "{what}");
        }
        // Six fragments each, by the client's kernel, all reassembled by the agent's.
        assert_eq!(d["fragments_per_datagram"].as_f64(), Some(6.0), "{what}");
        let client = &r["result"]["client"];
        assert_eq!(delta(client, "snmp", "ip_frag_creates"), 6 * sent, "{what}");
        assert!(u(&d["reasm_oks"]) >= u(&d["received"]), "{what}");
        assert_eq!(d["reasm_fails"], 0, "{what}");
        let fpd = d["tx_frames_per_datagram"].as_f64().unwrap();
        assert!((6.0..6.1).contains(&fpd), "{what}: {fpd}");
        // A reassembled datagram is never coalesced: one datagram a receive.
        assert!(u(&d["io"]["receiver"]["segments"]) <= 1, "{what}");
    }
    let text = lab
        .exec_command(
            "client",
            &[
                BIN,
                "--no-store",
                "stream",
                target.as_str(),
                "--udp",
                "--rate",
                "50M",
                "--time",
                "300ms",
            ]
            .map(String::from),
        )
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("I/O fallback client: 8192 B datagrams with their IP and UDP headers exceed the path MTU 1500"),
        "{text}"
    );
}

#[test]
fn a_full_receive_buffer_is_its_own_loss_cause_with_and_without_batches() {
    let Some(lab) = lab(true, vec![Scenario::Jumbo]) else {
        return;
    };
    let target = lab.target(Scenario::Jumbo).unwrap().to_string();
    for io in ["plain", "batch", "gso"] {
        let what = format!("--window 4K --udp-io {io}");
        // A 4 KiB buffer holds about one 8 KiB datagram: at 2 Gbit/s (a datagram
        // every 33 µs) the receiving socket drops some whatever the host's speed.
        let doc = run(
            &lab,
            &[
                &target, "--udp", "--block", "8K", "--rate", "2G", "--time", "1s", "--window",
                "4K", "--udp-io", io,
            ],
        );
        let r = &doc["runs"][0];
        let d = agrees_with_the_kernel(&what, r);
        let drops = u(&d["socket_drops"]);
        assert!(drops > 0, "{what}: a 4 KiB buffer dropped nothing: {d}");
        let granted = u(&d["buffers"]["rcvbuf"]);
        assert!(granted < 64 * 1024, "{what}: granted {granted}");
        assert_eq!(u(&d["buffers"]["asked"]), 4096, "{what}");
    }
}
