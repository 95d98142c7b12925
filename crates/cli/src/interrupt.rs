//! Ctrl-C and SIGTERM: the flag a run watches, and the exit code a command ends with
//! when a signal stopped it or a run ended early.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::exit::{self, Failure};

/// Ctrl-C (SIGINT) and SIGTERM set the returned flag: the run in progress stops,
/// is printed and stored as interrupted, and the command exits 130 (SIGINT) or 143
/// (SIGTERM). A second signal of either kind exits at once with its code. An
/// in-process invocation (`crate::run_captured`) leaves the process's signals alone.
pub fn flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    if !crate::out::current().is_process() {
        return flag;
    }
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let code = exit::signal_code(sig);
        let _ = signal_hook::flag::register_conditional_shutdown(sig, code, flag.clone());
        let _ = signal_hook::flag::register_usize(sig, exit::last_signal(), sig as usize);
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    flag
}

/// `f` with the error exit code of a command that has one for every error (path,
/// mesh, doctor: 2), except an interruption (Ctrl-C while agents are started over
/// SSH), which keeps 130.
pub fn error_code(f: Failure, code: u8) -> Failure {
    if f.code == exit::INTERRUPTED {
        return f;
    }
    Failure { code, ..f }
}

/// The exit code of a measuring command whose runs were printed and stored: 130 or
/// 143 when a signal stopped it, 5 when a run ended early on its own (a deadline,
/// a stall, the agent gone, an `rr --from` host failed; the reason goes to stderr,
/// escaped), `ok` otherwise.
pub fn measured_exit(stop: &AtomicBool, interrupt_reason: Option<&str>, ok: u8) -> u8 {
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        exit::INTERRUPTED
    } else if let Some(why) = interrupt_reason {
        let why = mtuperf_proto::text::escape_control(why);
        errln!("mtuperf: run interrupted: {why}");
        exit::FAILED
    } else {
        ok
    }
}
