//! Kernel parameters under /proc/sys.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::Error;

const PROC_SYS: &str = "/proc/sys";

/// Reads `/proc/sys/<name with dots as slashes>`, trimmed. As with sysctl(8), a `/`
/// inside a component stands for a dot in it: `net.ipv4.conf.eth0/100.rp_filter`.
pub fn read(name: &str) -> Result<String, Error> {
    read_at(Path::new(PROC_SYS), name)
}

/// [`read`] below another root (fixture trees in tests).
pub fn read_at(root: &Path, name: &str) -> Result<String, Error> {
    let parts: Vec<String> = name.split('.').map(|p| p.replace('/', ".")).collect();
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    read_parts_at(root, &refs)
}

/// Reads a parameter given by its path components, so that interface names with dots
/// need no escaping: `read_parts(&["net", "ipv4", "conf", "eth0.100", "rp_filter"])`.
pub fn read_parts(parts: &[&str]) -> Result<String, Error> {
    read_parts_at(Path::new(PROC_SYS), parts)
}

/// [`read_parts`] below another root.
pub fn read_parts_at(root: &Path, parts: &[&str]) -> Result<String, Error> {
    let path = join(root, parts);
    if parts.is_empty() || parts.iter().any(|p| !valid_component(p)) {
        let source = io::Error::new(io::ErrorKind::InvalidInput, "invalid sysctl name");
        return Err(Error::read(path, source));
    }
    let text = fs::read_to_string(&path).map_err(|e| Error::read(&path, e))?;
    Ok(text.trim().to_owned())
}

fn join(root: &Path, parts: &[&str]) -> PathBuf {
    let mut path = root.to_path_buf();
    path.extend(parts);
    path
}

/// A component must stay inside /proc/sys: no separators, no `.`/`..`, not empty.
fn valid_component(p: &str) -> bool {
    !p.is_empty() && p != "." && p != ".." && !p.contains('/') && !p.contains('\0')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            ("net/core/rmem_max", "4194304\n"),
            ("net/ipv4/tcp_rmem", "4096\t131072\t6291456\n"),
            ("net/ipv4/conf/eth0.100/rp_filter", "2\n"),
            ("net/ipv4/conf/all/rp_filter", "1\n"),
        ];
        for (rel, body) in files {
            let p = dir.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, body).unwrap();
        }
        dir
    }

    #[test]
    fn reads_by_dotted_name() {
        let dir = tree();
        let cases = [
            ("net.core.rmem_max", Some("4194304")),
            ("net.ipv4.tcp_rmem", Some("4096\t131072\t6291456")),
            ("net.ipv4.conf.all.rp_filter", Some("1")),
            ("net.ipv4.conf.eth0/100.rp_filter", Some("2")),
            ("net.ipv4.conf.eth0.100.rp_filter", None),
            ("net.core.missing", None),
            ("net..core", None),
            ("", None),
        ];
        for (name, want) in cases {
            let got = read_at(dir.path(), name).ok();
            assert_eq!(got.as_deref(), want, "{name}");
        }
    }

    #[test]
    fn reads_by_parts() {
        let dir = tree();
        let got = read_parts_at(
            dir.path(),
            &["net", "ipv4", "conf", "eth0.100", "rp_filter"],
        );
        assert_eq!(got.unwrap(), "2");
        assert!(read_parts_at(dir.path(), &["net", "..", "net", "core", "rmem_max"]).is_err());
        assert!(read_parts_at(dir.path(), &["net/core", "rmem_max"]).is_err());
        assert!(read_parts_at(dir.path(), &[]).is_err());
    }

    #[test]
    fn reads_live_proc_sys() {
        let rp = read_parts(&["net", "ipv4", "conf", "lo", "rp_filter"]).unwrap();
        assert!(rp.parse::<u8>().unwrap() <= 2);
        assert_eq!(read("kernel.ostype").unwrap(), "Linux");
    }
}
