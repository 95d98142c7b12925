//! Who this host is: hostname, kernel release, CPU count, software version.

use std::ffi::CStr;

use mtuperf_proto::host::HostIdentity;

/// Hostname (uname nodename), kernel release (uname release), online CPUs, and
/// `software` as given (the caller passes e.g. "mtuperf 0.1.0").
pub fn identity(software: &str) -> HostIdentity {
    let (hostname, kernel) = uname().unwrap_or_else(|| ("unknown".into(), "unknown".into()));
    HostIdentity {
        hostname,
        kernel,
        ncpu: crate::cpu::online_cpus(),
        software: software.to_owned(),
    }
}

/// (nodename, release) from uname(2).
fn uname() -> Option<(String, String)> {
    // SAFETY: utsname is plain old data (arrays of c_char); all-zero is valid.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable utsname that outlives the call.
    if unsafe { libc::uname(&raw mut u) } != 0 {
        return None;
    }
    Some((field(&u.nodename), field(&u.release)))
}

/// A NUL-terminated uname field as a String; never reads past the array.
fn field(raw: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = raw.iter().map(|&c| c as u8).collect();
    CStr::from_bytes_until_nul(&bytes).map_or_else(
        |_| String::from_utf8_lossy(&bytes).into_owned(),
        |s| s.to_string_lossy().into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_matches_the_kernel() {
        let id = identity("mtuperf 0.1.0");
        assert_eq!(id.software, "mtuperf 0.1.0");
        assert!(id.ncpu >= 1);
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
        assert_eq!(id.kernel, release.trim());
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
        assert_eq!(id.hostname, host.trim());
    }

    #[test]
    fn field_stops_at_nul_and_survives_a_full_array() {
        let raw: Vec<libc::c_char> = b"abc\0def".iter().map(|&b| b as libc::c_char).collect();
        assert_eq!(field(&raw), "abc");
        let full: Vec<libc::c_char> = b"xyz".iter().map(|&b| b as libc::c_char).collect();
        assert_eq!(field(&full), "xyz");
    }
}
