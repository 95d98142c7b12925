//! `doctor --fix-script` with hostile interface names (issue 12). Linux allows `;`,
//! `$`, `>`, `(` and quotes in interface names; links so named in a scratch lab
//! namespace (veth pairs) must yield a script that `sh -n` accepts and that, run in that namespace,
//! changes exactly those links and runs nothing else (no file created by an injected
//! redirection or command substitution: x, y or z). sysctl and ethtool are stubs that record their
//! arguments, and /etc/sysctl.d is a private tmpfs, so the host is not touched. Needs
//! root and the lab tools; otherwise prints why and passes.
use crate::lab_support;

use std::path::Path;

use lab_support::{text, TestLab, BIN};

/// Names (at most 15 bytes) that would run code if pasted unquoted into a command.
const HOSTILE: [&str; 3] = ["a;id>x", "$(id>y)", "b'c\"d`id>z`"];

fn mtu_of(lab: &TestLab, name: &str) -> String {
    let out = lab.exec("client", &["cat", &format!("/sys/class/net/{name}/mtu")]);
    assert!(out.status.success(), "{name}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn stub(dir: &Path, name: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    let log = dir.join("calls");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\nprintf '%s' '{name}' >> '{}'\nfor a in \"$@\"; do printf ' [%s]' \"$a\" >> '{}'; done\necho >> '{}'\n",
            log.display(),
            log.display(),
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn hostile_interface_names_never_reach_the_shell_unquoted() {
    require_lab!(false);
    let lab = TestLab::up(&["--scenario", "std"]);
    // veth pairs (the lab's own kind of link; the dummy module may be missing).
    for (i, name) in HOSTILE.iter().copied().enumerate() {
        let peer = format!("hpeer{i}");
        for argv in [
            &[
                "ip", "link", "add", "name", name, "type", "veth", "peer", "name", &peer,
            ][..],
            &["ip", "link", "set", "dev", &peer, "up"][..],
            &["ip", "link", "set", "dev", name, "mtu", "1500", "up"][..],
        ] {
            let out = lab.exec("client", argv);
            assert!(out.status.success(), "{argv:?}: {}", text(&out));
        }
    }
    let mut argv = vec![
        BIN,
        "--no-store",
        "doctor",
        "--fix-script",
        "--sample",
        "0s",
    ];
    for name in HOSTILE {
        argv.extend(["--iface", name]);
    }
    let out = lab.exec("client", &argv);
    let script = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "doctor failed: {}",
        text(&out)
    );
    let mtu_fixes = script
        .lines()
        .filter(|l| l.starts_with("ip link set dev ") && l.contains(" mtu 9000"))
        .count();
    assert_eq!(mtu_fixes, HOSTILE.len(), "one MTU fix per link: {script}");
    for name in HOSTILE {
        assert!(
            !script.contains(&format!("dev {name} ")),
            "{name} unquoted: {script}"
        );
    }

    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let path = work.join("fix.sh");
    std::fs::write(&path, &script).unwrap();
    let check = std::process::Command::new("sh")
        .arg("-n")
        .arg(&path)
        .output()
        .unwrap();
    assert!(check.status.success(), "sh -n: {}\n{script}", text(&check));

    // Run it in the scratch namespace: real `ip`, stub sysctl and ethtool, a private
    // /etc/sysctl.d, the working directory an empty one where an injected `>x` or
    // `id>y` would leave a file.
    let stubs = work.join("bin");
    std::fs::create_dir(&stubs).unwrap();
    stub(&stubs, "sysctl");
    stub(&stubs, "ethtool");
    let cwd = work.join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let runner = format!(
        "mount -t tmpfs none /etc/sysctl.d && cd '{}' && PATH='{}':\"$PATH\" sh '{}'",
        cwd.display(),
        stubs.display(),
        path.display()
    );
    let run = lab.exec("client", &["unshare", "-m", "sh", "-c", &runner]);
    assert!(run.status.success(), "script: {}\n{script}", text(&run));
    let left: Vec<_> = std::fs::read_dir(&cwd).unwrap().flatten().collect();
    assert!(left.is_empty(), "the script created {left:?}\n{script}");
    assert!(
        !String::from_utf8_lossy(&run.stdout).contains("uid="),
        "id ran: {}",
        text(&run)
    );
    // The intended commands ran, on the links of those exact names.
    for name in HOSTILE {
        assert_eq!(mtu_of(&lab, name), "9000", "{name}\n{script}");
    }
    let calls = std::fs::read_to_string(work.join("calls")).unwrap_or_default();
    for line in calls.lines() {
        assert!(
            line.starts_with("sysctl [-w] [") || line.starts_with("ethtool ["),
            "unexpected call {line:?}"
        );
    }
    assert!(
        calls.contains("[net.ipv4.conf.a;id>x.rp_filter=2]") || !script.contains("rp_filter"),
        "sysctl got the name as one argument: {calls}"
    );
}
