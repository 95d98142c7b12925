//! Progress bars on stderr, only when stderr is a terminal (indicatif hides them
//! otherwise) and the output is not already live lines or JSON.
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use mtuperf_proto::msg::{StreamLimit, StreamRequest};

/// Standard error is this process's and a terminal that can show live lines (not
/// TERM=dumb).
pub fn stderr_is_terminal() -> bool {
    crate::out::stderr_is_terminal()
}

/// Bars are drawn for the process's own stderr only (not for an in-process
/// invocation's), unless quiet or TERM=dumb; indicatif hides them off a terminal.
pub fn bars(quiet: bool) -> bool {
    !quiet
        && crate::out::current().is_process()
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// A bar that fills over a timed test's length (a spinner for byte-limited tests).
pub fn timed(req: &StreamRequest, quiet: bool) -> ProgressBar {
    if !bars(quiet) {
        return ProgressBar::hidden();
    }
    let bar = match req.limit {
        StreamLimit::Time { ms } => {
            let b = ProgressBar::new(ms / 100);
            b.set_style(
                ProgressStyle::with_template("  {bar:40} {elapsed}/{duration}  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        }
        StreamLimit::Bytes { .. } => ProgressBar::new_spinner(),
    };
    let b2 = bar.clone();
    std::thread::spawn(move || {
        while !b2.is_finished() {
            b2.inc(1);
            std::thread::sleep(Duration::from_millis(100));
        }
    });
    bar
}
