//! `stream`'s observer: live per-interval lines of both ends, or the current rate on
//! the running repetition's progress bar.
use mtuperf_engine::sampler::Sampler;
use mtuperf_engine::stream::{End, StreamObserver};
use mtuperf_proto::msg::{IntervalSample, StreamReady};
use mtuperf_report::stream as rs;

pub struct Printer {
    pub live: bool,
    pub omit_ns: u64,
    /// The running repetition's progress bar: its message shows the current rate.
    pub bar: std::sync::Mutex<indicatif::ProgressBar>,
    /// The invocation's sink: the engine calls from its own threads.
    pub out: std::sync::Arc<crate::out::Sink>,
}

impl StreamObserver for Printer {
    fn ready(&self, _r: &StreamReady, _s: &Sampler) {
        let _in = self.out.enter();
        if self.live {
            outln!("{}", rs::interval_header());
        }
    }
    fn interval(&self, end: End, s: &IntervalSample) {
        let _in = self.out.enter();
        if self.live {
            outln!("{}", rs::interval_line(end, s, self.omit_ns));
        } else if end == End::Client {
            if let Ok(bar) = self.bar.lock() {
                bar.set_message(mtuperf_report::live::stream_rate(s));
            }
        }
    }
    /// A run that moved nothing or stalled names its likely cause.
    fn explain_failure(&self) -> bool {
        true
    }
}
