//! `rr`'s observer: live per-interval lines, or one status line a second on a terminal.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

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
    /// The invocation's sink: the engine calls from its own threads.
    pub out: Arc<crate::out::Sink>,
}

impl RrObserver for Printer {
    fn ready(&self, _r: &RrReady) {
        let _in = self.out.enter();
        if self.live {
            outln!("{}", rep::interval_header());
        }
    }
    fn interval(&self, s: &RrInterval) {
        let _in = self.out.enter();
        if self.live {
            outln!("{}", rep::interval_line(s));
        } else if self.tty {
            let c = self.clients.load(Ordering::Relaxed);
            errln!("{}", mtuperf_report::live::rr_line(c, self.total_s, s));
        }
    }
    fn warning(&self, what: &str) {
        let _in = self.out.enter();
        errln!("warning: {what}");
    }
}
