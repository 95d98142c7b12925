//! Per-thread scheduling knobs.

use std::io;

/// Sets the calling thread's timer slack (PR_SET_TIMERSLACK): how much later than
/// asked the kernel may end its sleeps so it can batch wakeups. The default, 50 µs,
/// would more than double a 30 µs wait; threads that sleep for short, measured
/// times lower it. Affects only the calling thread.
pub fn set_timer_slack(ns: u64) -> io::Result<()> {
    let ns = libc::c_ulong::try_from(ns.max(1)).map_err(|_| io::ErrorKind::InvalidInput)?;
    // SAFETY: PR_SET_TIMERSLACK takes one unsigned long by value and touches no
    // memory of ours; the unused arguments are zero as prctl(2) asks.
    let rc = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns, 0, 0, 0) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The calling thread's timer slack in ns (PR_GET_TIMERSLACK).
pub fn timer_slack() -> io::Result<u64> {
    // SAFETY: PR_GET_TIMERSLACK takes no pointer; it returns the value.
    let rc = unsafe { libc::prctl(libc::PR_GET_TIMERSLACK, 0, 0, 0, 0) };
    u64::try_from(rc).map_err(|_| io::Error::last_os_error())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slack_is_set_for_this_thread_only() {
        std::thread::spawn(|| {
            set_timer_slack(2_000).unwrap();
            assert_eq!(timer_slack().unwrap(), 2_000);
        })
        .join()
        .unwrap();
        // The test runner's thread keeps its own (default 50 µs unless changed).
        assert_ne!(timer_slack().unwrap(), 2_000);
    }
}
