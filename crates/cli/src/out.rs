//! Everything the CLI prints goes through one [`Sink`] per invocation: stdout through
//! [`out!`]/[`outln!`], stderr through [`errln!`]. `println!` panics when stdout is a
//! closed pipe (`mtuperf history | head -1`), which would lose the run. Here the first
//! failed write (EPIPE or any other error) is recorded and every later write is a
//! no-op, so the command still finishes and stores what it measured; `exit::finish`
//! then reads [`cut`] and ends non-zero with the reason: a result that did not reach
//! stdout whole is never reported as a success.
//!
//! The sink also holds what one invocation remembers until it ends: the runs it
//! stored, whether it asked for JSON and printed a document, and the runs it could not
//! store (`unsaved`). The binary's sink is the process's own stdout and stderr
//! ([`process`]); the library's in-process entry (`crate::run_captured`) gives each
//! invocation a sink of buffers, so tests run side by side in one process.
//!
//! Which sink a write reaches: the one the current thread entered ([`Sink::enter`]),
//! else the process's. The invocation's thread enters its sink; a thread the CLI
//! spawns, and an observer the engine calls from its own threads, enter the sink they
//! were handed ([`current`] taken when they were made).
use std::cell::RefCell;
use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

/// Why stdout stopped taking the output: the first failed write or flush.
#[derive(Debug, Clone)]
pub struct Cut {
    /// The reader went away (EPIPE: `| head`), as opposed to a write that failed
    /// (a full disk under a redirect, EIO, a short write).
    pub broken_pipe: bool,
    /// The error, as the system said it.
    pub error: String,
}

/// Where one invocation's output goes, and what it remembers until it ends.
pub struct Sink {
    to: To,
    cut: OnceLock<Cut>,
    stored: Mutex<Vec<i64>>,
    document: AtomicBool,
    json: AtomicBool,
    unsaved: Mutex<Vec<String>>,
}

enum To {
    /// The process's own stdout and stderr (the binary).
    Process,
    /// Buffers the caller reads back (the library's in-process entry).
    Buffers {
        out: Mutex<Vec<u8>>,
        err: Mutex<Vec<u8>>,
    },
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<Sink>>> = const { RefCell::new(None) };
}

/// The process's own stdout and stderr: the binary's one sink.
pub fn process() -> Arc<Sink> {
    static PROCESS: OnceLock<Arc<Sink>> = OnceLock::new();
    PROCESS
        .get_or_init(|| Arc::new(Sink::new(To::Process)))
        .clone()
}

/// The sink this thread writes to: the one it entered, else the process's.
pub fn current() -> Arc<Sink> {
    CURRENT.with(|c| c.borrow().clone()).unwrap_or_else(process)
}

/// While alive, this thread writes to the sink it entered; dropped, to the one before.
pub struct Entered {
    before: Option<Arc<Sink>>,
}

impl Drop for Entered {
    fn drop(&mut self) {
        let before = self.before.take();
        CURRENT.with(|c| *c.borrow_mut() = before);
    }
}

impl Sink {
    fn new(to: To) -> Sink {
        Sink {
            to,
            cut: OnceLock::new(),
            stored: Mutex::new(Vec::new()),
            document: AtomicBool::new(false),
            json: AtomicBool::new(false),
            unsaved: Mutex::new(Vec::new()),
        }
    }

    /// A sink that keeps stdout and stderr in buffers ([`Sink::take`]).
    pub fn buffers() -> Sink {
        Sink::new(To::Buffers {
            out: Mutex::new(Vec::new()),
            err: Mutex::new(Vec::new()),
        })
    }

    /// Makes this the sink of the current thread until the guard is dropped.
    pub fn enter(self: &Arc<Self>) -> Entered {
        let before = CURRENT.with(|c| c.borrow_mut().replace(Arc::clone(self)));
        Entered { before }
    }

    /// The process's own stdout and stderr: signals, terminals and closed pipes are
    /// this process's (else the caller's, who runs the CLI in-process).
    pub fn is_process(&self) -> bool {
        matches!(self.to, To::Process)
    }

    /// What went to stdout and stderr (empty for the process's sink).
    pub fn take(&self) -> (Vec<u8>, Vec<u8>) {
        match &self.to {
            To::Process => (Vec::new(), Vec::new()),
            To::Buffers { out, err } => (
                std::mem::take(&mut *lock(out)),
                std::mem::take(&mut *lock(err)),
            ),
        }
    }

    fn write(&self, args: fmt::Arguments<'_>, newline: bool) {
        if self.cut.get().is_some() {
            return;
        }
        let r = match &self.to {
            To::Process => write_to(&mut io::stdout().lock(), args, newline),
            To::Buffers { out, .. } => write_to(&mut *lock(out), args, newline),
        };
        if let Err(e) = r {
            self.failed(&e);
        }
    }

    fn flush(&self) {
        if self.cut.get().is_some() {
            return;
        }
        if let To::Process = self.to {
            if let Err(e) = io::stdout().lock().flush() {
                self.failed(&e);
            }
        }
    }

    /// A line on stderr; a closed stderr is not worth a panic (nor a failed run).
    fn err_line(&self, args: fmt::Arguments<'_>) {
        let _ = match &self.to {
            To::Process => write_to(&mut io::stderr().lock(), args, true),
            To::Buffers { err, .. } => write_to(&mut *lock(err), args, true),
        };
    }

    /// Records the first failure; the reason is said once, when the command ends
    /// (`exit::finish`), not in the middle of its output.
    fn failed(&self, e: &io::Error) {
        let _ = self.cut.set(Cut {
            broken_pipe: e.kind() == io::ErrorKind::BrokenPipe,
            error: e.to_string(),
        });
    }
}

fn write_to(w: &mut dyn Write, args: fmt::Arguments<'_>, newline: bool) -> io::Result<()> {
    w.write_fmt(args)?;
    if newline {
        w.write_all(b"\n")?;
    }
    Ok(())
}

/// How stdout failed, if it did: the output is incomplete.
pub fn cut() -> Option<Cut> {
    current().cut.get().cloned()
}

/// A run stored in the history by this invocation (so that a failed output can say
/// where the result is).
pub fn stored(id: i64) {
    lock(&current().stored).push(id);
}

/// The runs stored by this invocation, oldest first.
pub fn stored_runs() -> Vec<i64> {
    lock(&current().stored).clone()
}

/// A run this invocation could not store, as the line `exit::finish` reports
/// (`unsaved`).
pub fn unsaved(line: String) {
    lock(&current().unsaved).push(line);
}

/// The runs this invocation could not store, taken once.
pub fn take_unsaved() -> Vec<String> {
    std::mem::take(&mut *lock(&current().unsaved))
}

/// The command asked for JSON (`crate::output`): its errors become documents too.
pub fn choose_json() {
    current().json.store(true, Ordering::Relaxed);
}

/// The command asked for JSON: a failure is a JSON document on stdout.
pub fn json_chosen() -> bool {
    current().json.load(Ordering::Relaxed)
}

/// A JSON document went to stdout already (a refused compare prints its document and
/// then fails): an error document after it would make stdout two documents.
pub fn document_printed() -> bool {
    current().document.load(Ordering::Relaxed)
}

/// Writes to stdout unless an earlier write failed; never panics.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    current().write(args, newline);
}

/// Writes a line to stderr; never panics.
pub fn err_line(args: fmt::Arguments<'_>) {
    current().err_line(args);
}

/// Flushes what is buffered (before exiting); a failure is recorded like a write's.
pub fn flush() {
    current().flush();
}

/// Standard error is this process's and a terminal that can show live lines (not
/// TERM=dumb): progress bars and status lines. An in-process invocation has none.
pub fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal as _;
    current().is_process()
        && io::stderr().is_terminal()
        && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
}

/// Prints what clap says about the command line (an error, a help, the version) where
/// clap would: stderr for errors, stdout for the rest.
pub fn clap(e: &clap::Error) {
    let sink = current();
    match &sink.to {
        To::Process => {
            let _ = e.print();
        }
        To::Buffers { out, err } => {
            let to = if e.use_stderr() { err } else { out };
            let _ = write!(lock(to), "{}", e.render());
        }
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

/// `eprintln!` into the invocation's sink, which never panics (a closed stderr is
/// not worth a failed run).
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::out::err_line(format_args!($($arg)*))
    };
}

/// The one JSON emitter: a document, pretty-printed, on stdout. Our documents are plain
/// structs and maps with string keys, so serializing cannot fail in practice; if it
/// ever did, saying so on stderr beats printing an empty line that parses as nothing.
pub fn json<T: serde::Serialize + ?Sized>(doc: &T) {
    match serde_json::to_string_pretty(doc) {
        Ok(s) => {
            current().document.store(true, Ordering::Relaxed);
            write(format_args!("{s}"), true);
        }
        Err(e) => errln!("mtuperf: could not write the JSON document: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_writes_to_the_sink_it_entered_and_then_to_the_one_before() {
        let a = Arc::new(Sink::buffers());
        let b = Arc::new(Sink::buffers());
        {
            let _a = a.enter();
            outln!("to a");
            {
                let _b = b.enter();
                outln!("to b");
                errln!("err b");
                stored(7);
            }
            out!("a again");
            choose_json();
        }
        let (out_a, err_a) = a.take();
        let (out_b, err_b) = b.take();
        assert_eq!(String::from_utf8(out_a).unwrap(), "to a\na again");
        assert!(err_a.is_empty());
        assert_eq!(String::from_utf8(out_b).unwrap(), "to b\n");
        assert_eq!(String::from_utf8(err_b).unwrap(), "err b\n");
        assert_eq!(lock(&b.stored).clone(), vec![7]);
        assert!(lock(&a.stored).is_empty());
        assert!(a.json.load(Ordering::Relaxed) && !b.json.load(Ordering::Relaxed));
        // Left: this thread is back on the process's sink.
        assert!(current().is_process());
    }

    #[test]
    fn a_spawned_thread_reaches_the_invocations_sink_only_when_it_enters_it() {
        let sink = Arc::new(Sink::buffers());
        let _in = sink.enter();
        let handed = current();
        std::thread::spawn(move || {
            assert!(current().is_process());
            let _in = handed.enter();
            outln!("from the thread");
        })
        .join()
        .unwrap();
        assert_eq!(sink.take().0, b"from the thread\n");
    }
}
