//! Everything the CLI prints on stdout goes through [`out!`]/[`outln!`]: `println!`
//! panics when stdout is a closed pipe (`mtuperf history | head -1`), which would lose
//! the run. Here the first failed write (EPIPE or any other error) is recorded and every
//! later write is a no-op, so the command still finishes and stores what it measured;
//! `exit::finish` then reads [`cut`] and ends the process non-zero with the reason:
//! a result that did not reach stdout whole is never reported as a success.
use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

static CUT: OnceLock<Cut> = OnceLock::new();
static STORED: Mutex<Vec<i64>> = Mutex::new(Vec::new());
static DOCUMENT: AtomicBool = AtomicBool::new(false);
static JSON_CHOSEN: AtomicBool = AtomicBool::new(false);

/// Why stdout stopped taking the output: the first failed write or flush.
#[derive(Debug)]
pub struct Cut {
    /// The reader went away (EPIPE: `| head`), as opposed to a write that failed
    /// (a full disk under a redirect, EIO, a short write).
    pub broken_pipe: bool,
    /// The error, as the system said it.
    pub error: String,
}

/// How stdout failed, if it did: the output is incomplete.
pub fn cut() -> Option<&'static Cut> {
    CUT.get()
}

/// A run stored in the history by this process (so that a failed output can say
/// where the result is).
pub fn stored(id: i64) {
    if let Ok(mut s) = STORED.lock() {
        s.push(id);
    }
}

/// The runs stored by this process, oldest first.
pub fn stored_runs() -> Vec<i64> {
    STORED.lock().map(|s| s.clone()).unwrap_or_default()
}

/// The command asked for JSON (`crate::output`): its errors become documents too.
pub fn choose_json() {
    JSON_CHOSEN.store(true, Ordering::Relaxed);
}

/// The command asked for JSON: a failure is a JSON document on stdout.
pub fn json_chosen() -> bool {
    JSON_CHOSEN.load(Ordering::Relaxed)
}

/// A JSON document went to stdout already (a refused compare prints its document and
/// then fails): an error document after it would make stdout two documents.
pub fn document_printed() -> bool {
    DOCUMENT.load(Ordering::Relaxed)
}

/// Writes to stdout unless an earlier write failed; never panics.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    if CUT.get().is_some() {
        return;
    }
    let mut out = io::stdout().lock();
    let mut r = out.write_fmt(args);
    if newline {
        r = r.and_then(|()| out.write_all(b"\n"));
    }
    if let Err(e) = r {
        failed(&e);
    }
}

/// Flushes what is buffered (before exiting); a failure is recorded like a write's.
pub fn flush() {
    if CUT.get().is_some() {
        return;
    }
    if let Err(e) = io::stdout().lock().flush() {
        failed(&e);
    }
}

/// Records the first failure; the reason is said once, when the command ends
/// (`exit::finish`), not in the middle of its output.
fn failed(e: &io::Error) {
    let _ = CUT.set(Cut {
        broken_pipe: e.kind() == io::ErrorKind::BrokenPipe,
        error: e.to_string(),
    });
}

/// `print!` that never panics (see the module documentation).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*), false)
    };
}

/// `println!` that never panics (see the module documentation).
macro_rules! outln {
    () => {
        $crate::out::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*), true)
    };
}

/// The one JSON emitter: a document, pretty-printed, on stdout. Our documents are plain
/// structs and maps with string keys, so serializing cannot fail in practice; if it
/// ever did, saying so on stderr beats printing an empty line that parses as nothing.
pub fn json<T: serde::Serialize + ?Sized>(doc: &T) {
    match serde_json::to_string_pretty(doc) {
        Ok(s) => {
            DOCUMENT.store(true, Ordering::Relaxed);
            write(format_args!("{s}"), true);
        }
        Err(e) => eprintln!("mtuperf: could not write the JSON document: {e}"),
    }
}
