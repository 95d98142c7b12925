//! `rr`'s observer: live per-interval lines, or one status line a second on a terminal.
use std::sync::atomic::{AtomicU32, Ordering};

use mtuperf_engine::rr::{RrInterval, RrObserver};
use mtuperf_proto::msg::RrReady;
use mtuperf_report::rr as rep;

pub struct Printer {
    pub live: bool,
    /// No `--interval` lines and stderr is a terminal: one status line per second.
    pub tty: bool,
    /// The step's client count and length, for the status line.
    pub clients: AtomicU32,
    pub total_s: f64,
}

impl RrObserver for Printer {
    fn ready(&self, _r: &RrReady) {
        if self.live {
            outln!("{}", rep::interval_header());
        }
    }
    fn interval(&self, s: &RrInterval) {
        if self.live {
            outln!("{}", rep::interval_line(s));
        } else if self.tty {
            let c = self.clients.load(Ordering::Relaxed);
            eprintln!("{}", mtuperf_report::live::rr_line(c, self.total_s, s));
        }
    }
    fn warning(&self, what: &str) {
        eprintln!("warning: {what}");
    }
}
