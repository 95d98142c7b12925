//! Named network namespaces kept the way iproute2 keeps them: a namespace is a bind
//! mount of a thread's `ns/net` on `/run/netns/NAME`, so `ip netns exec NAME` (and
//! `ip -n`, `tc -n`) work on the namespaces mtuperf makes, and the other way round.
//!
//! `setns(CLONE_NEWNET)` changes the namespace of the calling thread only, so
//! [`run_in`] runs a closure on a short-lived thread that entered the namespace:
//! netlink and ioctl sockets it opens, and `/proc/thread-self/net` and
//! `/proc/sys/net` it reads, are the namespace's. [`enter_on_spawn`] makes a child
//! process start inside a namespace, as `ip netns exec` does, without running `ip`.
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use nix::mount::{mount, umount2, MntFlags, MsFlags};
use nix::sched::{setns, unshare, CloneFlags};

/// Where iproute2 (and so mtuperf) mounts named namespaces.
pub const RUN_DIR: &str = "/run/netns";

/// The file of namespace `name`.
pub fn path(name: &str) -> PathBuf {
    Path::new(RUN_DIR).join(name)
}

/// Whether namespace `name` exists.
pub fn exists(name: &str) -> bool {
    path(name).exists()
}

fn check_name(name: &str) -> io::Result<()> {
    let bad = name.is_empty() || name.contains('/') || name == "." || name == "..";
    if bad {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("invalid namespace name {name:?}"),
        ));
    }
    Ok(())
}

fn io_err(e: nix::Error) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// Makes `/run/netns` a shared mount point (bind-mounting it on itself first if it is
/// not a mount point), as iproute2 does, so a namespace mounted later is seen by every
/// mount namespace `ip netns exec` or [`enter_on_spawn`] made before.
fn prepare_run_dir() -> io::Result<()> {
    std::fs::create_dir_all(RUN_DIR)?;
    let shared = MsFlags::MS_SHARED | MsFlags::MS_REC;
    match mount(None::<&str>, RUN_DIR, None::<&str>, shared, None::<&str>) {
        Ok(()) => Ok(()),
        Err(nix::Error::EINVAL) => {
            let bind = MsFlags::MS_BIND | MsFlags::MS_REC;
            mount(Some(RUN_DIR), RUN_DIR, None::<&str>, bind, None::<&str>).map_err(io_err)?;
            mount(None::<&str>, RUN_DIR, None::<&str>, shared, None::<&str>).map_err(io_err)
        }
        Err(e) => Err(io_err(e)),
    }
}

/// Creates namespace `name` (`ip netns add NAME`). Fails with `AlreadyExists` when it
/// exists.
pub fn create(name: &str) -> io::Result<()> {
    check_name(name)?;
    prepare_run_dir()?;
    let target = path(name);
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o000)
        .open(&target)?;
    let mount_point = target.clone();
    // A fresh thread leaves its namespace behind when it ends; the bind mount keeps
    // the namespace alive.
    let made = std::thread::spawn(move || -> io::Result<()> {
        unshare(CloneFlags::CLONE_NEWNET).map_err(io_err)?;
        mount(
            Some("/proc/thread-self/ns/net"),
            &mount_point,
            None::<&str>,
            MsFlags::MS_BIND,
            None::<&str>,
        )
        .map_err(io_err)
    })
    .join()
    .unwrap_or_else(|_| Err(io::Error::other("namespace thread panicked")));
    if made.is_err() {
        let _ = std::fs::remove_file(&target);
    }
    made
}

/// Deletes namespace `name` (`ip netns del NAME`): unmounts and removes its file. The
/// namespace itself, with its interfaces, goes when its last process exits.
pub fn delete(name: &str) -> io::Result<()> {
    check_name(name)?;
    let p = path(name);
    let _ = umount2(&p, MntFlags::MNT_DETACH);
    std::fs::remove_file(&p)
}

/// Pids of the processes inside namespace `name` (`ip netns pids NAME`).
pub fn pids(name: &str) -> Vec<u32> {
    let Ok(ns) = std::fs::metadata(path(name)) else {
        return Vec::new();
    };
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::metadata(format!("/proc/{pid}/ns/net"))
                .is_ok_and(|m| m.dev() == ns.dev() && m.ino() == ns.ino())
        })
        .collect()
}

/// Runs `f` on a thread inside namespace `name` and returns what it returns.
pub fn run_in<T: Send, F: FnOnce() -> T + Send>(name: &str, f: F) -> io::Result<T> {
    check_name(name)?;
    let file = File::open(path(name))?;
    std::thread::scope(|s| {
        let t = s.spawn(move || -> io::Result<T> {
            setns(&file, CloneFlags::CLONE_NEWNET).map_err(io_err)?;
            Ok(f())
        });
        match t.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Makes `cmd` start inside namespace `name` as `ip netns exec NAME` does: enter the
/// network namespace, then a private mount namespace (mounts do not propagate back)
/// with `/sys` remounted, so `/sys/class/net` shows the namespace's interfaces.
/// With `new_session` the child also leaves this session (`setsid`), so it outlives
/// this process and its terminal. Errors (no such namespace) surface at spawn.
/// (`ip netns exec` also bind-mounts files from `/etc/netns/NAME/`; mtuperf's
/// namespaces have none, so that step is left out.)
pub fn enter_on_spawn(cmd: &mut Command, name: &str, new_session: bool) {
    // Everything the child needs is allocated here, before fork: between fork and
    // exec only async-signal-safe system calls may run.
    let ns_path = CString::new(path(name).into_os_string().into_encoded_bytes())
        .unwrap_or_else(|_| c"/nonexistent".to_owned());
    let sys_ro = sys_read_only();
    // SAFETY: the closure runs in the child between fork and exec. It only makes raw
    // system calls (open, setns, close, unshare, mount, umount2, setsid) on
    // NUL-terminated strings allocated before the fork and owned by the closure; it
    // allocates nothing, takes no lock and touches no state shared with other
    // threads of the parent.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(ns_path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            let rc = libc::setns(fd, libc::CLONE_NEWNET);
            libc::close(fd);
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(io::Error::last_os_error());
            }
            let slave = libc::MS_SLAVE | libc::MS_REC;
            let none = std::ptr::null();
            if libc::mount(none, c"/".as_ptr(), none, slave, none.cast()) != 0 {
                return Err(io::Error::last_os_error());
            }
            libc::umount2(c"/sys".as_ptr(), libc::MNT_DETACH);
            let flags = if sys_ro { libc::MS_RDONLY } else { 0 };
            let rc = libc::mount(
                c"sysfs".as_ptr(),
                c"/sys".as_ptr(),
                c"sysfs".as_ptr(),
                flags,
                none.cast(),
            );
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
            if new_session && libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Whether `/sys` is mounted read-only here (then the namespace's sysfs is too).
fn sys_read_only() -> bool {
    // SAFETY: statvfs is plain old data (all-zero is valid); the path is a
    // NUL-terminated literal and `st` is writable for the call.
    unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        libc::statvfs(c"/sys".as_ptr(), &raw mut st) == 0 && st.f_flag & libc::ST_RDONLY != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_slashes_are_refused() {
        for bad in ["", "a/b", "..", "."] {
            assert!(create(bad).is_err(), "{bad:?}");
            assert!(delete(bad).is_err(), "{bad:?}");
            assert!(run_in(bad, || ()).is_err(), "{bad:?}");
        }
        assert!(run_in("mtuperf-no-such-namespace", || ()).is_err());
        assert!(pids("mtuperf-no-such-namespace").is_empty());
    }

    #[test]
    fn create_enter_and_delete_a_namespace() {
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipping: needs root");
            return;
        }
        let name = format!("mtsys-{}", std::process::id());
        create(&name).unwrap();
        assert!(exists(&name));
        assert!(create(&name).is_err(), "created twice");
        // A new namespace has only lo.
        let dev = run_in(&name, || {
            std::fs::read_to_string("/proc/thread-self/net/dev")
        })
        .unwrap()
        .unwrap();
        let ifaces: Vec<&str> = dev
            .lines()
            .skip(2)
            .filter_map(|l| l.split(':').next())
            .collect();
        assert_eq!(ifaces.iter().map(|i| i.trim()).collect::<Vec<_>>(), ["lo"]);
        assert!(pids(&name).is_empty());
        delete(&name).unwrap();
        assert!(!exists(&name));
    }
}
