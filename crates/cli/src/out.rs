//! Everything the CLI prints on stdout goes through [`out!`]/[`outln!`]: `println!`
//! panics when stdout is a closed pipe (`mtuperf history | head -1`), which would lose
//! the run. Here the first failed write (EPIPE or any other error) is recorded and every
//! later write is a no-op, so the command still finishes and stores what it measured.
use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static CLOSED: AtomicBool = AtomicBool::new(false);
static DOCUMENT: AtomicBool = AtomicBool::new(false);
static JSON_CHOSEN: AtomicBool = AtomicBool::new(false);

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
    if CLOSED.load(Ordering::Relaxed) {
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
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = io::stdout().lock().flush() {
        failed(&e);
    }
}

fn failed(e: &io::Error) {
    if !CLOSED.swap(true, Ordering::Relaxed) && e.kind() != io::ErrorKind::BrokenPipe {
        // Not a closed pipe (a full disk under a redirect, EIO): say so once, on stderr.
        let _ = writeln!(
            io::stderr(),
            "mtuperf: warning: writing to stdout failed: {e}; output stopped"
        );
    }
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
