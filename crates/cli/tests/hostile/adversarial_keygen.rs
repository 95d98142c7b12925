//! `mtuperf keygen`: a fresh key each time, mode 0600, never silently overwritten,
//! and accepted by the agent and the client.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use mtuperf_proto::auth::Key;

const BIN: &str = env!("CARGO_BIN_EXE_mtuperf");

#[test]
fn keygen_writes_a_private_fresh_key_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k");
    let run = |extra: &[&str]| {
        Command::new(BIN)
            .arg("keygen")
            .arg("-o")
            .arg(&path)
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("--key-file"));
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let first = Key::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();

    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(
        Key::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap(),
        first
    );

    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = run(&["--force"]);
    assert!(out.status.success());
    let second = Key::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_ne!(first, second, "a new key each time");
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(
        mode, 0o600,
        "--force must not keep the old file's looser mode"
    );
}
