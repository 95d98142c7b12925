//! Progress bars on stderr, only when stderr is a terminal (indicatif hides them
//! otherwise) and the output is not already live lines or JSON.
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use mtuperf_proto::msg::{StreamLimit, StreamRequest};

/// Standard error is a terminal that can show live lines (not TERM=dumb).
pub fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal as _;
    std::io::stderr().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// A bar that fills over a timed test's length (a spinner for byte-limited tests).
pub fn timed(req: &StreamRequest, quiet: bool) -> ProgressBar {
    if quiet || std::env::var_os("TERM").is_some_and(|t| t == "dumb") {
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
