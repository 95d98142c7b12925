//! A fresh machine: `mtuperf demo` and the lab with a PATH holding none of ip, tc,
//! nft, ethtool, ss, setsid (nor anything else): mtuperf builds namespaces, links,
//! addresses, routes, MTUs and offloads itself, enters namespaces and starts agents
//! itself. Options that do need tc/nft say so, naming every missing tool at once.
use crate::lab_support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use lab_support::{mtuperf, output_within, text, TestLab, BIN};
use mtuperf_lab::{unique_name, STATE_ROOT};

/// A command for the built binary (by absolute path) with nothing in PATH.
fn bare(dir: &Path, args: &[&str]) -> Command {
    let empty = dir.join("empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let mut c = Command::new(BIN);
    c.env_clear()
        .env("PATH", &empty)
        .env("HOME", dir)
        .current_dir(dir)
        .args(args);
    c
}

/// The mean of a path's row after the heading `metric` in compare's text.
fn row_mean(text: &str, metric: &str, path: &str) -> f64 {
    let mut lines = text.lines().skip_while(|l| !l.contains(metric)).skip(1);
    let row = lines
        .find(|l| l.split_whitespace().next() == Some(path))
        .unwrap_or_else(|| panic!("no {path} row under {metric:?}:\n{text}"));
    row.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn demo_runs_the_lab_with_no_network_tools_in_path() {
    require_lab!(false);
    let dir = tempfile::tempdir().unwrap();
    let cmd = bare(
        dir.path(),
        &[
            "--no-store",
            "demo",
            "--time",
            "300ms",
            "--repeat",
            "2",
            "-o",
            "report.html",
        ],
    );
    let out = output_within(cmd, Duration::from_mins(4));
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(!all.contains("loopback"), "fell back to loopback:\n{all}");
    // The plain answer first (progress went to stderr); two repetitions a path give
    // no interval, and the answer says so.
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(
        first.starts_with("Jumbo frames: unclear on this path — ")
            && first.ends_with("; the path carries 9000 both ways"),
        "{first}"
    );
    assert!(
        all.contains("compare std (198.18.1.2) vs jumbo (198.18.2.2)"),
        "{all}"
    );
    assert!(all.contains("carries MTU 1500 end to end"), "{all}");
    assert!(all.contains("carries MTU 9000 end to end"), "{all}");
    assert!(all.contains("jumbo vs std:"), "{all}");
    // Offloads off and the MTUs applied: an 8K block takes several 1500-byte frames
    // and about one 9000-byte frame.
    let metric = "stream 8K frames per block";
    let (std, jumbo) = (
        row_mean(&all, metric, "std"),
        row_mean(&all, metric, "jumbo"),
    );
    assert!(std > 2.0 * jumbo, "std {std} vs jumbo {jumbo} frames/block");
    assert!(dir.path().join("report.html").is_file());
    // The lab is gone: namespaces and state.
    let name = all
        .split("building lab \"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("lab name in the output")
        .to_string();
    assert!(all.contains("lab removed"), "{all}");
    let left: Vec<String> = std::fs::read_dir("/run/netns")
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(&format!("mtlab-{name}-")))
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    assert!(!Path::new(STATE_ROOT).join(&name).exists());
}

#[test]
fn options_needing_tc_and_nft_name_both_and_build_nothing() {
    require_lab!(false);
    let dir = tempfile::tempdir().unwrap();
    let name = unique_name();
    let cmd = bare(
        dir.path(),
        &[
            "lab",
            "up",
            "--name",
            &name,
            "--scenario",
            "blackhole",
            "--rate",
            "1gbit",
        ],
    );
    let out = output_within(cmd, Duration::from_mins(1));
    let all = text(&out);
    assert_eq!(out.status.code(), Some(6), "{all}");
    assert!(all.contains("`tc`, `nft` not found in PATH"), "{all}");
    assert!(all.contains("apt-get install iproute2 nftables"), "{all}");
    assert!(!Path::new("/run/netns")
        .join(format!("mtlab-{name}-client"))
        .exists());
    assert!(!Path::new(STATE_ROOT).join(&name).exists());
}

#[test]
fn exec_of_a_missing_program_exits_127_and_status_json_errors_are_json() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "std"]);
    let missing = lab.exec("std", &["mtuperf-no-such-program", "-x"]);
    assert_eq!(missing.status.code(), Some(127), "{}", text(&missing));
    assert!(
        text(&missing).contains("mtuperf-no-such-program: command not found"),
        "{}",
        text(&missing)
    );
    // A program that runs is run inside the host, with the host's interfaces.
    let inside = lab.exec("std", &["cat", "/sys/class/net/eth0/mtu"]);
    assert_eq!(text(&inside).trim(), "1500");

    let out = mtuperf(&["lab", "status", "--name", &unique_name(), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON error");
    let schema: serde_json::Value = serde_json::from_str(include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/error.schema.json"
    )))
    .unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?} in {doc}");
    assert_eq!(doc["exit"], 1);
    assert!(
        doc["error"].as_str().unwrap().contains("no lab named"),
        "{doc}"
    );
    // A bad name is a usage error (2), as JSON too.
    let bad = mtuperf(&["lab", "status", "--name", "../x", "--json"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let doc: serde_json::Value = serde_json::from_slice(&bad.stdout).expect("JSON error");
    assert!(v.iter_errors(&doc).next().is_none(), "{doc}");
    assert_eq!(doc["exit"], 2);
    assert!(doc["error"].as_str().unwrap().contains("lab name"), "{doc}");
}
