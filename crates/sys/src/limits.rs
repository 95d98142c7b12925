//! Resource limits: the descriptor limit (RLIMIT_NOFILE) a process with thousands of
//! sockets needs raised.

use std::io;

/// RLIMIT_NOFILE as (soft, hard).
pub fn nofile() -> io::Result<(u64, u64)> {
    // SAFETY: rlimit is plain old data; all-zero is a valid value.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: `r` is a valid, writable rlimit that outlives the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &raw mut r) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((r.rlim_cur, r.rlim_max))
}

/// Raises the soft RLIMIT_NOFILE to at least `want` descriptors (never above the hard
/// limit, never lowering it). Returns the (soft, hard) limits in force afterwards; the
/// caller compares the soft one with what it needs.
pub fn raise_nofile(want: u64) -> io::Result<(u64, u64)> {
    let (soft, hard) = nofile()?;
    if soft >= want {
        return Ok((soft, hard));
    }
    let r = libc::rlimit {
        rlim_cur: want.min(hard),
        rlim_max: hard,
    };
    // SAFETY: `r` is a valid rlimit read by the call; setrlimit keeps no pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const r) } != 0 {
        return Err(io::Error::last_os_error());
    }
    nofile()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raising_keeps_within_the_hard_limit() {
        let (soft, hard) = nofile().unwrap();
        assert!(soft <= hard);
        // Asking for what is already there changes nothing.
        assert_eq!(raise_nofile(soft).unwrap(), (soft, hard));
        // Asking beyond the hard limit stops at it.
        let (s2, h2) = raise_nofile(u64::MAX).unwrap();
        assert_eq!((s2, h2), (hard, hard));
    }
}
