//! compare in lab namespaces (root, iproute2, nft): a black-holed path is refused with
//! exit 1 and the reason; with --force it is measured and flagged.

use crate::lab_support;

use lab_support::{text, TestLab, BIN};

const STD: &str = "198.18.1.2";
const BLACKHOLE: &str = "198.18.14.2";

#[test]
fn blackhole_is_refused_then_flagged_with_force() {
    require_lab!(false);
    let lab = TestLab::up(&[
        "--scenario",
        "std",
        "--scenario",
        "blackhole",
        "--offload",
        "off",
    ]);
    let out = lab_support::mtuperf(&["lab", "serve", "--name", &lab.name]);
    assert!(out.status.success(), "lab serve: {}", text(&out));
    let std_path = format!("std={STD}");
    let bh_path = format!("bh={BLACKHOLE}");
    let args = [
        BIN,
        "--no-store",
        "compare",
        "--path",
        &std_path,
        "--path",
        &bh_path,
    ];
    let args = [&args[..], &["--time", "200ms", "--repeat", "2"]].concat();

    let out = lab.exec("client", &args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("compare refused: path bh"), "{err}");
    assert!(err.contains("black hole"), "{err}");
    assert!(
        !err.contains("path std"),
        "the healthy path is not blamed: {err}"
    );

    let out = lab.exec("client", &[&args[..], &["--force", "--json"]].concat());
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["flagged"], serde_json::json!(["bh"]));
    assert_eq!(doc["runs"].as_array().unwrap().len(), 4);
    assert!(doc["verdicts"][0].as_str().unwrap().contains("FLAGGED"));
}
